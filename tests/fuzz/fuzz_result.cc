// Fuzz target: result parsing and conversion. Any result that parses must
// print at every version or fail cleanly, and printing at 1.1.0 then parsing
// again must give back the same result (the in-memory model is 1.1.0), up to
// what the spec says is the same: a zero interface mtu and a zero route
// mtu/advmss/priority mean "not set" and are not printed (upstream's
// omitempty), so 0 and absent are one value.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>

#include "cni/protocol/version.h"

namespace {

// `r` with every "zero means unset" field unset.
cni::Result Canonical(cni::Result r) {
  auto unset_zero = [](std::optional<int>& v) {
    if (v == 0) v.reset();
  };
  for (cni::Interface& i : r.interfaces) unset_zero(i.mtu);
  for (cni::Route& route : r.routes) {
    unset_zero(route.mtu);
    unset_zero(route.advmss);
    unset_zero(route.priority);
  }
  r.cni_version.clear();
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<cni::Result> result = cni::ParseResult(bytes, "1.0.0");
  if (!result.ok()) return 0;
  for (const std::string& version : cni::AllVersions()) {
    (void)cni::ResultToJson(*result, version);
  }
  absl::StatusOr<cni::Json> current = cni::ResultToJson(*result, "1.1.0");
  if (!current.ok()) return 0;
  absl::StatusOr<cni::Result> again = cni::ParseResult(*current);
  if (!again.ok()) abort();  // what we print at 1.1.0 we must read back
  if (!(Canonical(*result) == Canonical(*again))) abort();  // lossless at the newest version
  return 0;
}
