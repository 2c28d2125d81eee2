// Fuzz target: the whole skel path. The input's first line is the CNI_COMMAND
// and the second CNI_ARGS; the rest is stdin. The handlers return a fixed
// result, so what is exercised is validation, version negotiation, result
// conversion and error printing.
#include <cstddef>
#include <cstdint>
#include <sstream>

#include "cni/protocol/skel.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  size_t nl1 = input.find('\n');
  size_t nl2 = nl1 == std::string::npos ? std::string::npos : input.find('\n', nl1 + 1);
  std::string command = input.substr(0, nl1);
  std::string cni_args = nl1 == std::string::npos ? "" : input.substr(nl1 + 1, nl2 - nl1 - 1);
  std::string stdin_data = nl2 == std::string::npos ? "" : input.substr(nl2 + 1);

  cni::PluginFuncs funcs;
  funcs.add = [](const cni::CmdArgs& a) -> absl::StatusOr<cni::Result> {
    auto prev = cni::ParsePrevResult(a.conf);
    if (!prev.ok()) return prev.status();
    cni::Result r = prev->value_or(cni::Result{});
    r.ips.push_back({std::nullopt, *cni::net::IpPrefix::Parse("10.0.0.2/24"), std::nullopt});
    return r;
  };
  std::ostringstream out, err;
  cni::ProcessIo io;
  io.env = {{"CNI_COMMAND", command}, {"CNI_CONTAINERID", "fuzz"}, {"CNI_NETNS", "/nonexistent"},
            {"CNI_IFNAME", "eth0"},   {"CNI_PATH", "/nonexistent"}, {"CNI_ARGS", cni_args}};
  io.stdin_data = stdin_data;
  io.out = &out;
  io.err = &err;
  (void)cni::Run(funcs, {{}, "fuzz"}, io);
  return 0;
}
