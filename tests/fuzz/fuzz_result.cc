// Fuzz target: result parsing and conversion. Any result that parses must
// print at every version or fail cleanly, and printing at 1.1.0 then parsing
// again must give back the same result (the in-memory model is 1.1.0).
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "cni/version.h"

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
  cni::Result a = *result, b = *again;
  a.cni_version = b.cni_version = "";
  if (!(a == b)) abort();  // lossless at the newest version
  return 0;
}
