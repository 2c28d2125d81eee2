#include "nft_commit.h"

// <netinet/in.h> before the <linux/...> headers (see nft_dump.cc).
#include <netinet/in.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/net/netlink.h"
#include "nft_dump.h"
#include "nft_encode.h"

namespace cni::fw::internal {
namespace {

constexpr absl::string_view kFailed = "nftables transaction failed: ";

absl::Status Failed(absl::string_view what) { return Error(ErrorCode::kInternal, absl::StrCat(kFailed, what)); }

// NFNL_MSG_BATCH_BEGIN / _END: they frame the transaction for nfnetlink,
// which hands everything between them to nf_tables (res_id).
void AppendFrame(std::string& buf, uint16_t type, uint32_t seq) {
  nlmsghdr nlh{};
  nlh.nlmsg_len = NLMSG_LENGTH(sizeof(nfgenmsg));
  nlh.nlmsg_type = type;
  nlh.nlmsg_flags = NLM_F_REQUEST;
  nlh.nlmsg_seq = seq;
  nfgenmsg gen{.nfgen_family = AF_UNSPEC, .version = NFNETLINK_V0, .res_id = htons(NFNL_SUBSYS_NFTABLES)};
  std::string msg(NLMSG_ALIGN(nlh.nlmsg_len), '\0');
  std::memcpy(msg.data(), &nlh, sizeof(nlh));
  std::memcpy(msg.data() + NLMSG_HDRLEN, &gen, sizeof(gen));
  buf += msg;
}

}  // namespace

absl::Status CommitOverNetlink(net::NetlinkSocket& nl, const std::vector<NftCommand>& commands,
                               std::vector<NftRule>* added) {
  std::string buf;
  size_t rules_added = 0;
  const uint32_t first_seq = nl.NextSeq(static_cast<uint32_t>(commands.size() + 2));
  AppendFrame(buf, NFNL_MSG_BATCH_BEGIN, first_seq);
  for (size_t i = 0; i < commands.size(); ++i) {
    ASSIGN_OR_RETURN(net::NlMsgPtr msg, EncodeCommand(commands[i], first_seq + 1 + i));
    nlmsghdr* h = nlmsg_hdr(msg.get());
    // NLM_F_ECHO: when the transaction commits, the kernel sends us the new
    // rule as it lists it, handle included.
    if (added != nullptr &&
        (commands[i].op == NftCommand::Op::kAddRule || commands[i].op == NftCommand::Op::kInsertRule)) {
      h->nlmsg_flags |= NLM_F_ECHO;
      ++rules_added;
    }
    buf.append(reinterpret_cast<const char*>(h), h->nlmsg_len);
    buf.resize(NLMSG_ALIGN(buf.size()), '\0');
  }
  AppendFrame(buf, NFNL_MSG_BATCH_END, first_seq + 1 + commands.size());

  std::vector<std::pair<size_t, NftRule>> echoed;  // command index, rule
  auto index_of = [first_seq](uint32_t seq) -> size_t { return seq - first_seq - 1; };
  // The kernel handles the batch inside the send: every failure report (and
  // every echo) is queued when it returns.
  net::NlExchange how{
      .until = net::NlAnswer::kQueued,
      .each =
          [&](nlmsghdr* h) {
            size_t index = index_of(h->nlmsg_seq);
            if (h->nlmsg_type == ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWRULE) && index < commands.size()) {
              NftRule r = RuleFromMessage(h);
              r.family = commands[index].family;
              echoed.emplace_back(index, std::move(r));
            }
            return true;
          },
      .name =
          [&](uint32_t seq) {
            size_t index = index_of(seq);
            return absl::StrCat(kFailed, index < commands.size() ? commands[index].ToText() : "batch");
          },
      // The echoed rules must all fit in the receive buffer, or some are
      // lost. (Each is ~0.5 KiB; the kernel packs them into a few large
      // buffers.)
      .queued_bytes = rules_added * 2048 + 65536,
  };
  absl::Status st = nl.Exchange(buf, first_seq, static_cast<uint32_t>(commands.size() + 2), how, "nftables transaction failed");
  // ENOBUFS: reports were lost, which only happens when there were some
  // (failures, or echoes the buffer could not hold: then the outcome is
  // unknown, and the caller must look before it retries).
  if (!st.ok()) return WithErrno(Error(ErrorCode::kInternal, st.message()), ErrnoOf(st));
  if (added != nullptr) {
    if (echoed.size() != rules_added) {
      // Committed, but we cannot say which handles the rules got.
      return Failed(absl::StrCat("committed, but the kernel echoed ", echoed.size(), " of ", rules_added,
                                 " new rules"));
    }
    std::sort(echoed.begin(), echoed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    added->clear();
    for (auto& [index, rule] : echoed) added->push_back(std::move(rule));
  }
  return absl::OkStatus();
}

}  // namespace cni::fw::internal
