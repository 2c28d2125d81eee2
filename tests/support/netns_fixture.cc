#include "support/netns_fixture.h"

#include <stdlib.h>

#include <cstring>

namespace cni::test {

bool FullKernelExpected() {
  const char* v = getenv("CNI_TEST_FULL_KERNEL");
  return v != nullptr && std::strcmp(v, "1") == 0;
}

}  // namespace cni::test
