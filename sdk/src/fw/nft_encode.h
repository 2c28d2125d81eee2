// nf_tables netlink messages for NftCommand: the same expressions, registers
// and byte orders nft emits for the command's text (`nft --debug=netlink`
// shows them), so that nft lists our rules exactly as it lists its own.
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "cni/fw/nft_batch.h"
#include "cni/net/netlink.h"

namespace cni::fw::internal {

// The request for one command, with sequence number `seq`. Fails (code 999)
// on what nft itself would refuse: an unknown hook, a raw-text piece, a
// comment over 128 bytes, an address match in the bridge family.
absl::StatusOr<net::NlMsgPtr> EncodeCommand(const NftCommand& command, uint32_t seq);

// nft's user data for a comment: one TLV (type 0, the NUL-terminated text).
std::string CommentUserData(absl::string_view comment);

}  // namespace cni::fw::internal
