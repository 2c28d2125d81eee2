#include "nft_dump.h"

// <netinet/in.h> before the <linux/...> headers: the other order redefines
// struct in_addr (linux/libc-compat.h only guards this one).
#include <endian.h>
#include <netinet/in.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>

#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <functional>

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/net/netlink.h"

namespace cni::fw::internal {
namespace {

// nft's user-data TLV type for a rule comment (libnftnl's
// NFTNL_UDATA_RULE_COMMENT); its value is a NUL-terminated string.
constexpr uint8_t kUdataRuleComment = 0;

}  // namespace

absl::StatusOr<uint8_t> FamilyNumber(absl::string_view family) {
  if (family == "ip") return NFPROTO_IPV4;
  if (family == "ip6") return NFPROTO_IPV6;
  if (family == "inet") return NFPROTO_INET;
  if (family == "bridge") return NFPROTO_BRIDGE;
  if (family == "arp") return NFPROTO_ARP;
  if (family == "netdev") return NFPROTO_NETDEV;
  return Error(ErrorCode::kInternal, absl::StrCat("nftables: unknown family \"", family, "\""));
}

namespace {

// The largest attribute number we parse (NFTA_RULE_MAX, NFTA_CHAIN_MAX).
constexpr int kAttrMax = 32;
static_assert(NFTA_RULE_MAX <= kAttrMax && NFTA_CHAIN_MAX <= kAttrMax);

// One dump: `msg_type` for table `family` `table`, every answer's attributes
// handed to `each`. A missing table is success with no answers. A dump
// interrupted by a concurrent change (NLM_F_DUMP_INTR) is repeated after
// `restart`, so the listing is consistent.
//
// The answers are read straight off the socket into one large buffer: with
// libnl's receive loop (a peek and a copy per message) listing 2,000 rules
// cost ~3 ms, about as much as the rest of a portmap ADD.
absl::Status Dump(int msg_type, absl::string_view family, absl::string_view table, const char* what,
                  const std::function<void(nlattr** tb)>& each, const std::function<void()>& restart) {
  absl::StatusOr<uint8_t> fam = FamilyNumber(family);
  if (!fam.ok()) return fam.status();
  auto failed = [what](absl::string_view why) {
    return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": ", why));
  };
  std::string table_name(table);
  // The kernel fills a dump datagram up to the reader's buffer size, at most
  // 32 KiB; a bigger buffer gains nothing.
  std::vector<char> buf(64 * 1024);
  for (int attempt = 0;; ++attempt) {
    net::NlSockPtr sock(nl_socket_alloc());
    if (!sock) return failed("out of memory");
    if (int err = nl_connect(sock.get(), NETLINK_NETFILTER); err < 0) return failed(nl_geterror(err));
    net::NlMsgPtr msg(nlmsg_alloc_simple((NFNL_SUBSYS_NFTABLES << 8) | msg_type, NLM_F_REQUEST | NLM_F_DUMP));
    if (!msg) return failed("out of memory");
    nfgenmsg hdr{.nfgen_family = *fam, .version = NFNETLINK_V0, .res_id = 0};
    if (nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0 ||
        nla_put_string(msg.get(), NFTA_RULE_TABLE, table_name.c_str()) < 0) {  // == NFTA_CHAIN_TABLE
      return failed("message too long");
    }
    if (int err = nl_send_auto(sock.get(), msg.get()); err < 0) return failed(nl_geterror(err));
    int fd = nl_socket_get_fd(sock.get());
    bool done = false, interrupted = false;
    while (!done) {
      ssize_t n = recv(fd, buf.data(), buf.size(), 0);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) return failed(strerror(errno));
      int left = static_cast<int>(n);
      for (auto* h = reinterpret_cast<nlmsghdr*>(buf.data()); NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
        if (h->nlmsg_flags & NLM_F_DUMP_INTR) interrupted = true;
        if (h->nlmsg_type == NLMSG_DONE) {
          done = true;
          break;
        }
        if (h->nlmsg_type == NLMSG_ERROR) {
          int err = static_cast<const nlmsgerr*>(NLMSG_DATA(h))->error;
          if (err == -ENOENT) return absl::OkStatus();  // no such table
          if (err != 0) return failed(strerror(-err));
          continue;
        }
        std::array<nlattr*, kAttrMax + 1> tb{};
        if (nlmsg_parse(h, sizeof(nfgenmsg), tb.data(), kAttrMax, nullptr) == 0) each(tb.data());
      }
    }
    if (!interrupted) return absl::OkStatus();
    if (attempt >= 10) return failed("the table kept changing during the listing");
    restart();
  }
}

// The text of a string attribute, without copying.
absl::string_view StringView(nlattr* a) {
  if (a == nullptr) return "";
  const char* s = static_cast<const char*>(nla_data(a));
  return absl::string_view(s, strnlen(s, nla_len(a)));
}


}  // namespace

std::string CommentFromUserData(const uint8_t* data, size_t len) {
  size_t off = 0;
  while (off + 2 <= len) {
    uint8_t type = data[off];
    uint8_t vlen = data[off + 1];
    if (off + 2 + vlen > len) break;  // truncated: ignore the rest
    if (type == kUdataRuleComment) {
      const char* s = reinterpret_cast<const char*>(data + off + 2);
      return std::string(s, strnlen(s, vlen));
    }
    off += 2 + vlen;
  }
  return "";
}

absl::StatusOr<std::vector<NftRule>> DumpRules(absl::string_view family, absl::string_view table) {
  std::vector<NftRule> rules;
  std::string fam(family);
  absl::Status st = Dump(
      NFT_MSG_GETRULE, family, table, "listing rules",
      [&rules, &fam, table](nlattr** tb) {
        if (StringView(tb[NFTA_RULE_TABLE]) != table) return;  // older kernels ignore the dump filter
        NftRule r;
        r.family = fam;
        r.table = std::string(table);
        r.chain = std::string(StringView(tb[NFTA_RULE_CHAIN]));
        if (tb[NFTA_RULE_HANDLE] != nullptr) r.handle = be64toh(nla_get_u64(tb[NFTA_RULE_HANDLE]));
        if (nlattr* u = tb[NFTA_RULE_USERDATA]; u != nullptr) {
          r.comment = CommentFromUserData(static_cast<const uint8_t*>(nla_data(u)), nla_len(u));
        }
        rules.push_back(std::move(r));
      },
      [&rules] { rules.clear(); });
  if (!st.ok()) return st;
  return rules;
}

absl::StatusOr<std::vector<std::string>> DumpChains(absl::string_view family, absl::string_view table) {
  std::vector<std::string> chains;
  absl::Status st = Dump(
      NFT_MSG_GETCHAIN, family, table, "listing chains",
      [&chains, table](nlattr** tb) {
        // Chain dumps are not filtered by table in the kernel: every table
        // of the family answers.
        if (StringView(tb[NFTA_CHAIN_TABLE]) == table) chains.emplace_back(StringView(tb[NFTA_CHAIN_NAME]));
      },
      [&chains] { chains.clear(); });
  if (!st.ok()) return st;
  return chains;
}

}  // namespace cni::fw::internal

namespace cni::fw {

// Here rather than in nft.cc: a plugin that only lists and commits over
// netlink must not link nft.cc's libnftables loader (dlopen), so that it can
// be a static executable.
absl::StatusOr<std::vector<NftRule>> Nft::ListRules(absl::string_view family, absl::string_view table) {
  return internal::DumpRules(family, table);
}

absl::StatusOr<std::vector<std::string>> Nft::ListChains(absl::string_view family, absl::string_view table) {
  return internal::DumpChains(family, table);
}

}  // namespace cni::fw
