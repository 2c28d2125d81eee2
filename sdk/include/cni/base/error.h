// CNI error codes and the one helper that attaches a code to an absl::Status.
//
// Errors are values (absl::Status). A CNI error code rides on the status as a
// payload; skel turns it into the error JSON {"cniVersion","code","msg","details"}
// and a non-zero exit. A status without a code is reported as 999 (internal),
// as the reference skel does for untyped errors.
#pragma once

#include <vector>

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace cni {

// Error codes of the CNI spec (1.0.0 and 1.1.0). 100+ are plugin-specific.
enum class ErrorCode : int {
  kUnknown = 0,                       // no code (an OK status)
  kIncompatibleVersion = 1,           // cniVersion not supported / result not convertible
  kUnsupportedField = 2,              // a field the plugin does not support (details name it)
  kUnknownContainer = 3,              // container (e.g. its netns) does not exist
  kInvalidEnvironment = 4,            // bad CNI_* variable (CNI_COMMAND, CNI_ARGS, ...)
  kIoFailure = 5,                     // I/O failure (reading stdin, files, ...)
  kDecodingFailure = 6,               // malformed JSON or a value of the wrong type
  kInvalidNetworkConfig = 7,          // the configuration is wrong (values, missing keys)
  kInvalidNetns = 8,                  // CNI_NETNS is not usable (e.g. the plugin's own)
  kTryAgainLater = 11,                // transient: the runtime should retry
  kPluginNotAvailable = 50,           // STATUS: ADD would fail.
  kPluginNotAvailableLimited = 51,    // STATUS: and existing containers may suffer.
  kInternal = 999,                    // anything else (the reference skel's untyped error)
};

// Returns `status` with the CNI code `code` attached (replacing any earlier one).
// An OK status stays OK.
absl::Status WithCode(absl::Status status, ErrorCode code);

// A configuration the plugin refuses: code 7, "<plugin>: <msg>", worded as
// the config key tables word theirs (cni/plugin/config_schema.h).
absl::Status InvalidConfig(absl::string_view plugin, absl::string_view msg);

// Returns `status` with a CNI "details" string attached.
absl::Status WithDetails(absl::Status status, absl::string_view details);

// Builds a failed status carrying `code`, `msg` and optionally `details`.
absl::Status Error(ErrorCode code, absl::string_view msg, absl::string_view details = {});

// The error document another plugin printed (its exact bytes), kept on the
// status built from it. A plugin that fails because its delegate failed
// prints that document unchanged (skel does, as long as the status still
// says what the document says: same code, msg and details), so the runtime
// sees the IPAM plugin's error as the IPAM plugin wrote it, as with upstream.
absl::Status WithErrorDocument(absl::Status status, absl::string_view document);
// The document attached by WithErrorDocument, empty if none.
std::string ErrorDocumentOf(const absl::Status& status);

// The CNI code on `status`: the attached one, else kInternal for a failure
// (kUnknown... is never guessed), or kUnknown for OK.
int CodeOf(const absl::Status& status);

// The details string attached to `status`, empty if none.
std::string DetailsOf(const absl::Status& status);

// Prefixes the message of a failed status with `context` ("context: message"),
// keeping its code and details. Use it to name the operation and the object.
absl::Status Annotate(const absl::Status& status, absl::string_view context);

// Annotate(status, plugin) unless the message already begins with
// "<plugin>: ", so a plugin's name is on a message once, whichever layer
// put it there.
absl::Status NamedBy(const absl::Status& status, absl::string_view plugin);

// A failed status with the same code, payloads (CNI code, details, errno)
// and `message` in place of its own.
absl::Status WithMessage(const absl::Status& status, absl::string_view message);

// The errno of a failed system call rides on the status too, so callers test
// the cause (EEXIST, ENOENT, EBUSY...) instead of matching message text.
// Returns `status` with `err` attached (an OK status stays OK).
absl::Status WithErrno(absl::Status status, int err);
// A failed status for a system call that set `err`: "<what>: <strerror>",
// carrying `err` and the canonical code absl maps it to (no CNI code: the
// caller attaches one when the failure is the user's).
absl::Status ErrnoError(int err, absl::string_view what);
// The errno attached to `status`, or 0 when none.
int ErrnoOf(const absl::Status& status);

// Every failure in one status (DEL reports them all, not just the first):
// OK when none of `statuses` failed, the failure itself when one did, else
// the failures' messages joined by "; " under the first failure's CNI code.
absl::Status JoinErrors(const std::vector<absl::Status>& statuses);

}  // namespace cni
