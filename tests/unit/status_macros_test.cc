// RETURN_IF_ERROR / ASSIGN_OR_RETURN and the errno carried on a status.
#include <catch2/catch.hpp>

#include <cerrno>

#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return cni::Error(cni::ErrorCode::kInvalidNetworkConfig, "odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  ASSIGN_OR_RETURN(int half, Half(x));
  ASSIGN_OR_RETURN(half, Half(half), "halving ", half, " again");
  return half;
}

int calls = 0;
absl::Status Step(bool ok) {
  ++calls;
  return ok ? absl::OkStatus() : cni::ErrnoError(EEXIST, "creating \"eth0\"");
}

absl::Status TwoSteps(bool first, bool second) {
  RETURN_IF_ERROR(Step(first));
  RETURN_IF_ERROR(Step(second), "step ", 2);
  return absl::OkStatus();
}

}  // namespace

TEST_CASE("ASSIGN_OR_RETURN moves the value or returns the annotated failure", "[unit][error]") {
  CHECK(*Quarter(12) == 3);
  absl::StatusOr<int> odd = Quarter(3);
  CHECK(odd.status().message() == "odd");  // no context given: unchanged
  absl::StatusOr<int> odd_half = Quarter(6);
  CHECK(odd_half.status().message() == "halving 3 again: odd");
  CHECK(cni::CodeOf(odd_half.status()) == 7);  // the code survives the context
}

TEST_CASE("RETURN_IF_ERROR stops at the first failure and keeps its errno", "[unit][error]") {
  calls = 0;
  CHECK(TwoSteps(true, true).ok());
  CHECK(calls == 2);
  calls = 0;
  absl::Status st = TwoSteps(false, true);
  CHECK(calls == 1);
  CHECK(cni::ErrnoOf(st) == EEXIST);
  CHECK(absl::IsAlreadyExists(st));
  st = TwoSteps(true, false);
  CHECK(st.message() == "step 2: creating \"eth0\": File exists");
  CHECK(cni::ErrnoOf(st) == EEXIST);
  CHECK(cni::ErrnoOf(absl::OkStatus()) == 0);
  CHECK(cni::ErrnoOf(absl::InternalError("no errno")) == 0);
}
