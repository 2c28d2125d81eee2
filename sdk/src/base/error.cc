#include "absl/strings/string_view.h"
#include "cni/base/error.h"

#include <optional>

#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cni {
namespace {

// Payload type URLs under which the CNI code and details ride on a status.
constexpr absl::string_view kCodeUrl = "cni.dev/error-code";
constexpr absl::string_view kDetailsUrl = "cni.dev/error-details";
constexpr absl::string_view kErrnoUrl = "cni.dev/errno";
constexpr absl::string_view kDocumentUrl = "cni.dev/error-document";

// absl::Status needs a canonical code; map the CNI code to the closest one so
// logs read sensibly. The CNI code in the payload is what counts.
absl::StatusCode CanonicalFor(ErrorCode code) {
  switch (code) {
    case ErrorCode::kIncompatibleVersion:
    case ErrorCode::kUnsupportedField:
    case ErrorCode::kInvalidEnvironment:
    case ErrorCode::kDecodingFailure:
    case ErrorCode::kInvalidNetworkConfig:
    case ErrorCode::kInvalidNetns:
      return absl::StatusCode::kInvalidArgument;
    case ErrorCode::kUnknownContainer:
      return absl::StatusCode::kNotFound;
    case ErrorCode::kTryAgainLater:
    case ErrorCode::kPluginNotAvailable:
    case ErrorCode::kPluginNotAvailableLimited:
      return absl::StatusCode::kUnavailable;
    default:
      return absl::StatusCode::kInternal;
  }
}

}  // namespace

absl::Status WithCode(absl::Status status, ErrorCode code) {
  if (status.ok()) return status;
  status.SetPayload(kCodeUrl, absl::Cord(absl::StrCat(static_cast<int>(code))));
  return status;
}

absl::Status WithDetails(absl::Status status, absl::string_view details) {
  if (status.ok()) return status;
  status.SetPayload(kDetailsUrl, absl::Cord(details));
  return status;
}

absl::Status Error(ErrorCode code, absl::string_view msg, absl::string_view details) {
  absl::Status status(CanonicalFor(code), msg);
  status = WithCode(std::move(status), code);
  if (!details.empty()) status = WithDetails(std::move(status), details);
  return status;
}

absl::Status WithErrorDocument(absl::Status status, absl::string_view document) {
  if (status.ok()) return status;
  status.SetPayload(kDocumentUrl, absl::Cord(document));
  return status;
}

std::string ErrorDocumentOf(const absl::Status& status) {
  auto payload = status.GetPayload(kDocumentUrl);
  return payload ? std::string(*payload) : std::string();
}

int CodeOf(const absl::Status& status) {
  if (status.ok()) return static_cast<int>(ErrorCode::kUnknown);
  auto payload = status.GetPayload(kCodeUrl);
  int code = 0;
  if (payload && absl::SimpleAtoi(std::string(*payload), &code)) return code;
  return static_cast<int>(ErrorCode::kInternal);
}

std::string DetailsOf(const absl::Status& status) {
  auto payload = status.GetPayload(kDetailsUrl);
  return payload ? std::string(*payload) : std::string();
}

absl::Status WithErrno(absl::Status status, int err) {
  if (status.ok() || err == 0) return status;
  status.SetPayload(kErrnoUrl, absl::Cord(absl::StrCat(err)));
  return status;
}

absl::Status ErrnoError(int err, absl::string_view what) {
  return WithErrno(absl::ErrnoToStatus(err, what), err);
}

int ErrnoOf(const absl::Status& status) {
  auto payload = status.GetPayload(kErrnoUrl);
  int err = 0;
  if (payload && absl::SimpleAtoi(std::string(*payload), &err)) return err;
  return 0;
}

absl::Status Annotate(const absl::Status& status, absl::string_view context) {
  if (status.ok()) return status;
  absl::Status out(status.code(), absl::StrCat(context, ": ", status.message()));
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

absl::Status NamedBy(const absl::Status& status, absl::string_view plugin) {
  if (status.ok() || plugin.empty()) return status;
  absl::string_view msg = status.message();
  if (absl::StartsWith(msg, plugin) && absl::StartsWith(msg.substr(plugin.size()), ": ")) return status;
  return Annotate(status, plugin);
}

absl::Status WithMessage(const absl::Status& status, absl::string_view message) {
  if (status.ok()) return status;
  absl::Status out(status.code(), message);
  status.ForEachPayload([&](absl::string_view url, const absl::Cord& payload) {
    out.SetPayload(url, payload);
  });
  return out;
}

absl::Status InvalidConfig(absl::string_view plugin, absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, plugin.empty() ? std::string(msg) : absl::StrCat(plugin, ": ", msg));
}

absl::Status JoinErrors(const std::vector<absl::Status>& statuses) {
  std::vector<absl::Status> failures;
  for (const absl::Status& st : statuses) {
    if (!st.ok()) failures.push_back(st);
  }
  if (failures.empty()) return absl::OkStatus();
  if (failures.size() == 1) return failures[0];
  std::vector<std::string> msgs;
  for (const absl::Status& st : failures) msgs.emplace_back(st.message());
  return WithCode(absl::Status(failures[0].code(), absl::StrJoin(msgs, "; ")),
                  static_cast<ErrorCode>(CodeOf(failures[0])));
}

}  // namespace cni
