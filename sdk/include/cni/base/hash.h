// SHA-512, self-contained (no libcrypto): plugins derive stable names from it
// exactly as upstream does, e.g. bandwidth's ifb device
// "bwp" + hex(sha512(network + containerID)) cut to 15 characters, and the
// ipMasq chains "CNI-" + hex(sha512(...)).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace cni {

// A SHA-512 digest: 64 bytes.
using Sha512Digest = std::array<uint8_t, 64>;

// The SHA-512 digest (FIPS 180-4) of `data`.
Sha512Digest Sha512(absl::string_view data);

// The digest as 128 lower-case hex digits.
std::string Sha512Hex(absl::string_view data);

// `prefix` + hex(sha512(data)), cut to `length` characters: upstream's
// utils.FormatHashWithPrefix. `length` must exceed prefix.size() and be at
// most prefix.size() + 128 (callers pass constants).
std::string HashWithPrefix(size_t length, absl::string_view prefix, absl::string_view data);

}  // namespace cni
