// Names and comments shared with upstream (pkg/utils), so a node can switch
// between upstream's plugins and ours without leaking rules (DESIGN rule 10).
#pragma once

#include <initializer_list>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace cni::fw {

// "CNI-" + prefix + hex(sha512(name + id)), cut to 28 characters (iptables'
// chain-name limit): upstream's MustFormatChainNameWithPrefix.
std::string ChainName(absl::string_view name, absl::string_view id, absl::string_view prefix = "");
// `name: "<name>" id: "<id>"` (Go's %q quoting): upstream's FormatComment.
std::string Comment(absl::string_view name, absl::string_view id);

// hex(sha512(network)) cut to 16 characters: what scopes a network's native
// nftables comments and rule records (upstream's ipMasq hashForNetwork).
std::string NetworkHash(absl::string_view network);
// "<NetworkHash(network)>-<16 hex of sha512(instance)>": how an
// attachment's native nftables comment starts (upstream's ipMasq
// hashForInstance, with instance "<ifname>:<container ID>"). Always 33
// characters, so it survives the 128-character comment limit.
std::string AttachmentHash(absl::string_view network, absl::string_view instance);
// A native nftables comment: `hash`, then ", <label>: <value>" for each
// field (quotes, backslashes and control characters dropped from the
// values), cut to 128 bytes (knftables' limit; the hash always fits).
std::string NativeComment(absl::string_view hash,
                          std::initializer_list<std::pair<absl::string_view, absl::string_view>> fields);

}  // namespace cni::fw
