// Fuzz target: CNI_ARGS parsing.
#include <cstddef>
#include <cstdint>

#include "cni/protocol/args.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<cni::CniArgs> args = cni::CniArgs::Parse(text, {"IP", "MAC", "GATEWAY"});
  if (args.ok()) {
    (void)args->Ip();
    (void)args->Get("IgnoreUnknown");
  }
  return 0;
}
