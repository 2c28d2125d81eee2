// The kit's namespace fixture (cni/testing/netns.h) under the suite's names,
// and what only this project's own tiers need.
#pragma once

#include "cni/testing/netns.h"
#include "support/run.h"

namespace cni::test {

using cni::testing::NetnsFixture;
using cni::testing::Ping;

// True in the VM tier's guest (tests/vm: CNI_TEST_FULL_KERNEL=1), whose kernel
// has every link type and feature the suite tests. A test that probes the
// kernel and takes a reduced path when a feature is missing must fail there
// instead, so the guest always exercises the full path.
bool FullKernelExpected();

}  // namespace cni::test
