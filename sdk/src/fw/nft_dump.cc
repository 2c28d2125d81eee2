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

absl::StatusOr<uint8_t> FamilyNumber(absl::string_view family) {
  if (family == "ip") return NFPROTO_IPV4;
  if (family == "ip6") return NFPROTO_IPV6;
  if (family == "inet") return NFPROTO_INET;
  if (family == "bridge") return NFPROTO_BRIDGE;
  if (family == "arp") return NFPROTO_ARP;
  if (family == "netdev") return NFPROTO_NETDEV;
  return Error(ErrorCode::kInternal, absl::StrCat("nftables: unknown family \"", family, "\""));
}

// One dump: `msg_type` for table `family` `table`, every answer handed to
// `each`. A missing table is success with no answers. A dump interrupted by
// a concurrent change (NLM_F_DUMP_INTR) is repeated, so the listing is
// consistent.
absl::Status Dump(int msg_type, absl::string_view family, absl::string_view table, const char* what,
                  const std::function<void(nlattr** tb)>& each, int attr_max) {
  absl::StatusOr<uint8_t> fam = FamilyNumber(family);
  if (!fam.ok()) return fam.status();
  std::string table_name(table);
  for (int attempt = 0;; ++attempt) {
    net::NlSockPtr sock(nl_socket_alloc());
    if (!sock) return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": out of memory"));
    if (int err = nl_connect(sock.get(), NETLINK_NETFILTER); err < 0) {
      return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": ", nl_geterror(err)));
    }
    net::NlMsgPtr msg(nlmsg_alloc_simple((NFNL_SUBSYS_NFTABLES << 8) | msg_type, NLM_F_REQUEST | NLM_F_DUMP));
    if (!msg) return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": out of memory"));
    nfgenmsg hdr{.nfgen_family = *fam, .version = NFNETLINK_V0, .res_id = 0};
    if (nlmsg_append(msg.get(), &hdr, sizeof(hdr), NLMSG_ALIGNTO) < 0 ||
        nla_put_string(msg.get(), NFTA_RULE_TABLE, table_name.c_str()) < 0) {  // == NFTA_CHAIN_TABLE
      return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": message too long"));
    }
    if (int err = nl_send_auto(sock.get(), msg.get()); err < 0) {
      return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": ", nl_geterror(err)));
    }
    struct Ctx {
      const std::function<void(nlattr**)>* each;
      int attr_max;
    } ctx{&each, attr_max};
    nl_socket_modify_cb(
        sock.get(), NL_CB_VALID, NL_CB_CUSTOM,
        [](nl_msg* m, void* arg) -> int {
          auto* c = static_cast<Ctx*>(arg);
          std::vector<nlattr*> tb(c->attr_max + 1, nullptr);
          if (nlmsg_parse(nlmsg_hdr(m), sizeof(nfgenmsg), tb.data(), c->attr_max, nullptr) == 0) (*c->each)(tb.data());
          return NL_OK;
        },
        &ctx);
    int err = nl_recvmsgs_default(sock.get());
    if (err == -NLE_OBJ_NOTFOUND) return absl::OkStatus();  // no such table
    if (err == -NLE_DUMP_INTR && attempt < 10) continue;
    if (err < 0) return Error(ErrorCode::kInternal, absl::StrCat("nftables: ", what, ": ", nl_geterror(err)));
    return absl::OkStatus();
  }
}

std::string StringAttr(nlattr* a) {
  if (a == nullptr) return "";
  const char* s = static_cast<const char*>(nla_data(a));
  return std::string(s, strnlen(s, nla_len(a)));
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
  std::vector<NftRule>* out = &rules;
  std::string fam(family);
  absl::Status st = Dump(
      NFT_MSG_GETRULE, family, table, "listing rules",
      [out, &fam, table](nlattr** tb) {
        NftRule r;
        r.family = fam;
        r.table = StringAttr(tb[NFTA_RULE_TABLE]);
        if (r.table != table) return;  // older kernels ignore the dump filter
        r.chain = StringAttr(tb[NFTA_RULE_CHAIN]);
        if (tb[NFTA_RULE_HANDLE] != nullptr) r.handle = be64toh(nla_get_u64(tb[NFTA_RULE_HANDLE]));
        if (nlattr* u = tb[NFTA_RULE_USERDATA]; u != nullptr) {
          r.comment = CommentFromUserData(static_cast<const uint8_t*>(nla_data(u)), nla_len(u));
        }
        out->push_back(std::move(r));
      },
      NFTA_RULE_MAX);
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
        if (StringAttr(tb[NFTA_CHAIN_TABLE]) == table) chains.push_back(StringAttr(tb[NFTA_CHAIN_NAME]));
      },
      NFTA_CHAIN_MAX);
  if (!st.ok()) return st;
  return chains;
}

}  // namespace cni::fw::internal
