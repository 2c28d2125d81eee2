// Sending an NftBatch to the kernel as one nf_tables transaction.
#pragma once

#include <vector>

#include "absl/status/status.h"
#include "cni/fw/nft_batch.h"
#include "cni/net/netlink.h"

namespace cni::fw::internal {

// Encodes `commands` between a batch begin and a batch end and sends them in
// one message: the kernel applies all of them or none. The kernel handles the
// batch while we send it, so its verdict is already queued when the send
// returns; only failures are reported (no ACK flags), so an empty queue is
// success. A failure names the first failing command and the kernel's reason.
// With `added`, the rules the batch adds are echoed back (NLM_F_ECHO) and
// stored there in batch order with their handles; see NftBatch::Commit.
absl::Status CommitOverNetlink(net::NetlinkSocket& nl, const std::vector<NftCommand>& commands,
                               std::vector<NftRule>* added = nullptr);

}  // namespace cni::fw::internal
