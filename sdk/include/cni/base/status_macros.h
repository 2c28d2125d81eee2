// Early-return macros for absl::Status and absl::StatusOr, so a handler reads
// as the steps it takes instead of a ladder of `if (!x.ok()) return x.status();`.
//
//   RETURN_IF_ERROR(net::SetLinkUp(sock, link));
//   RETURN_IF_ERROR(net::SetLinkUp(sock, link), "bringing up ", Quoted(name));
//   ASSIGN_OR_RETURN(net::LinkInfo link, net::LinkByName(sock, name));
//   ASSIGN_OR_RETURN(link, net::LinkByIndex(sock, index), "bridge ", Quoted(name));
//
// Trailing arguments, when given, are joined with absl::StrCat and put in front
// of the failure's message as "context: message" (cni::Annotate), keeping its
// CNI code, details and errno. The context is built only on failure.
#pragma once

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "cni/base/error.h"

namespace cni::status_internal {

// The status of a Status (itself) or of a StatusOr, for the macros below.
inline const absl::Status& AsStatus(const absl::Status& s) { return s; }
// The status of a StatusOr.
template <typename T>
const absl::Status& AsStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

// The failure itself, or annotated with the concatenated context.
inline absl::Status Annotated(absl::Status s) { return s; }
// The failure annotated with its context pieces joined ("context: message").
template <typename... Ctx>
absl::Status Annotated(absl::Status s, const Ctx&... context) {
  return Annotate(s, absl::StrCat(context...));
}

}  // namespace cni::status_internal

#define CNI_STATUS_CONCAT_INNER(a, b) a##b
#define CNI_STATUS_CONCAT(a, b) CNI_STATUS_CONCAT_INNER(a, b)

// Returns the failed status of `expr` (a Status or StatusOr), optionally with
// context; does nothing on success.
#define CNI_RETURN_IF_ERROR(expr, ...)                                                        \
  do {                                                                                    \
    if (const auto& cni_status_value = (expr);                                            \
        !::cni::status_internal::AsStatus(cni_status_value).ok()) {                        \
      return ::cni::status_internal::Annotated(                                           \
          ::cni::status_internal::AsStatus(cni_status_value) __VA_OPT__(, ) __VA_ARGS__); \
    }                                                                                     \
  } while (false)

// Evaluates `expr` (a StatusOr); on failure returns its status (optionally with
// context), else moves the value into `lhs`, which may declare a variable
// ("auto x", "Type x") or name an existing one.
#define CNI_ASSIGN_OR_RETURN(lhs, expr, ...)                                                   \
  CNI_ASSIGN_OR_RETURN_IMPL(CNI_STATUS_CONCAT(cni_statusor_, __LINE__), lhs,               \
                            expr __VA_OPT__(, ) __VA_ARGS__)

#define CNI_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr, ...)                                    \
  auto tmp = (expr);                                                                      \
  if (!tmp.ok()) {                                                                        \
    return ::cni::status_internal::Annotated(std::move(tmp).status() __VA_OPT__(, )       \
                                                 __VA_ARGS__);                            \
  }                                                                                       \
  lhs = *std::move(tmp)

// The short names, unless the including code has macros of its own by these
// names (the SDK's own headers use only the CNI_ ones).
#ifndef RETURN_IF_ERROR
#define RETURN_IF_ERROR CNI_RETURN_IF_ERROR
#endif
#ifndef ASSIGN_OR_RETURN
#define ASSIGN_OR_RETURN CNI_ASSIGN_OR_RETURN
#endif
