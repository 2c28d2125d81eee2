// Fuzz target: network configuration parsing, prevResult and the static
// plugin's view of it. Must never crash, hang or leak, whatever the bytes.
#include <cstddef>
#include <cstdint>

#include "cni/protocol/skel.h"
#include "cni/protocol/types.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<cni::NetConf> conf = cni::NetConf::Parse(bytes);
  if (!conf.ok()) return 0;
  (void)cni::ParsePrevResult(*conf);
  (void)cni::Dump(conf->raw);
  return 0;
}
