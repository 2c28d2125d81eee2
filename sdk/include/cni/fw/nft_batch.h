// One nftables transaction, written straight to the kernel over netlink.
//
// Why not libnftables for every change: loading it (six shared libraries),
// creating its context and letting it read the ruleset cache took about 10 ms
// of a 17 ms portmap ADD. Our plugins' rules use a handful of expressions;
// NftBatch encodes each exactly as nft compiles the same text (the netns test
// nft_batch_test.cc commits both ways and compares nft's own listings), so
// nft, upstream's plugins and we keep reading each other's rules.
//
// A rule carrying user-written nft text (portmap's conditionsV4/V6) cannot be
// encoded here: nft::Apply (nft.h) renders such a batch as nft commands and
// runs it through the nft program instead (`nft -f -`), still as one
// transaction, so that no plugin has to load libnftables (which would make
// it a dynamically linked executable, slower to start on every call).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "cni/base/ip.h"
#include "cni/fw/nft.h"
#include "cni/fw/protocols.h"

namespace cni::fw {

// The hook of a base chain: "type <type> hook <hook> priority <priority>".
struct NftHook {
  std::string type;  // "nat" or "filter"
  std::string hook;  // "prerouting", "input", "forward", "output" or "postrouting"
  int priority = 0;  // e.g. -100 (dstnat), 100 (srcnat), -300 (bridge dstnat)
};

// One piece of a rule (a match, a statement or the comment). Built through
// NftRuleSpec; public only so that the encoder can read it.
struct NftPiece {
  // What the piece is; the fields below it uses are named per kind.
  enum class Kind {
    kSourceAddress,  // ip/ip6 saddr [!=] prefix
    kDestAddress,    // ip/ip6 daddr [!=] prefix
    kDestPort,       // tcp/udp/sctp dport port
    kL4Proto,        // meta l4proto tcp/udp/sctp (iptables' -p)
    kThDestPort,     // th dport port (the protocol checked before)
    kXtMatch,        // an xtables match through nft_compat (ipt_rule.h)
    kXtTarget,       // an xtables target through nft_compat (ipt_rule.h)
    kCounter,        // counter
    kDestIsLocal,    // fib daddr type local
    kInInterface,    // iifname [!=] "text"
    kOutInterface,   // oifname [!=] "text"
    kCtEstablished,  // ct state related,established
    kEtherSource,    // ether saddr mac
    kText,           // nft syntax as given (forces the nft program path)
    kJump,           // jump text
    kGoto,           // goto text
    kReturn,         // return
    kDrop,           // drop
    kAccept,         // accept
    kMasquerade,     // masquerade
    kDnat,           // dnat to address:port
    kComment,        // comment "text"
  };
  Kind kind;                               // which piece this is
  net::IpPrefix prefix;                    // addresses (a host prefix for a single address)
  bool equal = true;                       // addresses, interfaces: == (true) or != (false)
  // kInInterface, kOutInterface: compare the name and its NUL only, as
  // iptables-nft encodes -i/-o, instead of all IFNAMSIZ bytes, as nft does.
  bool name_only = false;
  net::IpAddress address;                  // kDnat
  uint16_t port = 0;                       // kDestPort, kDnat
  L4Protocol protocol = L4Protocol::kTcp;  // kDestPort, kL4Proto
  net::MacAddress mac;                     // kEtherSource
  std::string text;                        // names, chains, raw text, comment, xt match name
  uint32_t revision = 0;                   // kXtMatch, kXtTarget
  std::string info;                        // kXtMatch, kXtTarget: the kernel struct of its options, as sent
};

// A rule: matches, then statements, then at most one comment, in the order
// they are added (nft's order). Each method appends one piece.
class NftRuleSpec {
 public:
  // "ip saddr 10.0.0.2" for a host prefix, "ip saddr 10.0.0.0/24" otherwise
  // (ip6 for IPv6); `equal` false makes it "!=".
  NftRuleSpec& SourceAddress(const net::IpPrefix& prefix, bool equal = true);
  // Same for the destination: "ip daddr ...".
  NftRuleSpec& DestAddress(const net::IpPrefix& prefix, bool equal = true);
  // "tcp dport 8080" (udp, sctp likewise).
  NftRuleSpec& DestPort(L4Protocol protocol, uint16_t port);
  // "meta l4proto tcp" (iptables' `-p tcp`).
  NftRuleSpec& L4Proto(L4Protocol protocol);
  // "th dport 8080": the transport header's destination port, the protocol
  // having been matched before (L4Proto), as iptables-nft writes --dport.
  NftRuleSpec& ThDestPort(uint16_t port);
  // An xtables match: a "match" expression of nft_compat naming the
  // extension and its revision, with `info`, the extension's kernel struct
  // exactly as the kernel checks it (padded to 8 bytes). A rule with one
  // always carries nf_tables' compat attribute (see XtProtocol). nft cannot
  // parse it back, so such a rule is written over netlink only (its text is
  // for messages). Only ipt_rule.h builds these.
  NftRuleSpec& XtMatch(absl::string_view name, uint32_t revision, std::string info);
  // An xtables target (e.g. DNAT): a "target" expression of nft_compat,
  // otherwise as XtMatch.
  NftRuleSpec& XtTarget(absl::string_view name, uint32_t revision, std::string info);
  // The transport protocol nft_compat hands to the rule's xtables matches
  // and targets, which check it (multiport wants tcp, udp or sctp): the
  // compat attribute's protocol, 0 when not set.
  NftRuleSpec& XtProtocol(L4Protocol protocol);
  // "counter" (iptables-nft puts one in every rule).
  NftRuleSpec& Counter();
  // "fib daddr type local": the destination is one of this host's addresses.
  NftRuleSpec& DestIsLocal();
  // How an interface name is compared: all IFNAMSIZ bytes, zero-padded (nft's
  // `iifname "x"`), or the name and its NUL only (iptables-nft's `-i x`).
  // The kernel matches the same packets either way; the encodings differ, and
  // each tool recognises only its own when it reads a rule back.
  enum class Ifname { kNft, kIptables };
  // iifname "name" (`equal` false: iifname != "name").
  NftRuleSpec& InInterface(absl::string_view name, bool equal = true, Ifname how = Ifname::kNft);
  // oifname "name" (`equal` false: oifname != "name").
  NftRuleSpec& OutInterface(absl::string_view name, bool equal = true, Ifname how = Ifname::kNft);
  // "ct state related,established": the packet belongs to (or is related to)
  // a connection conntrack has already seen both ways.
  NftRuleSpec& CtRelatedEstablished();
  // "ether saddr 0a:58:..." (bridge family).
  NftRuleSpec& EtherSource(const net::MacAddress& mac);
  // nft syntax copied into the rule as is; the caller validates it. A batch
  // with such a rule can only be applied by nft::Apply (the nft program).
  NftRuleSpec& Text(absl::string_view nft_text);
  // "jump chain": continue in `chain`, then come back.
  NftRuleSpec& Jump(absl::string_view chain);
  // "goto chain": continue in `chain`, without coming back.
  NftRuleSpec& Goto(absl::string_view chain);
  // "return": leave this chain.
  NftRuleSpec& Return();
  // "drop": drop the packet.
  NftRuleSpec& Drop();
  // "accept": accept the packet (ends this base chain's evaluation only).
  NftRuleSpec& Accept();
  // "masquerade": source NAT to the outgoing interface's address.
  NftRuleSpec& Masquerade();
  // "dnat to 10.0.0.2:80" / "dnat to [fd00::2]:80"; needs a DestPort before it.
  NftRuleSpec& Dnat(const net::IpAddress& to, uint16_t port);
  // comment "text" (at most 128 bytes, no double quote: Commit checks).
  NftRuleSpec& Comment(absl::string_view comment);

  // The rule in nft syntax, as after "add rule <family> <table> <chain> ".
  std::string ToText() const;
  // The pieces in order.
  const std::vector<NftPiece>& pieces() const { return pieces_; }
  // Whether a piece is raw nft text.
  bool HasText() const;
  // Whether a piece is an xtables match or target.
  bool HasXt() const;
  // What XtProtocol set, nullopt when nothing.
  std::optional<L4Protocol> xt_protocol() const { return xt_protocol_; }

 private:
  NftRuleSpec& Add(NftPiece piece);
  std::vector<NftPiece> pieces_;
  std::optional<L4Protocol> xt_protocol_;
};

// One command of a batch. Built through NftBatch; public only for the encoder.
struct NftCommand {
  // The nft command: add table, add chain, flush chain, delete chain, add
  // rule, delete rule.
  enum class Op { kAddTable, kAddChain, kCreateChain, kFlushChain, kDeleteChain, kAddRule, kInsertRule, kDeleteRule };
  Op op;                              // which command
  NftFamily family = NftFamily::kIp;  // the table's family
  std::string table;                  // the table's name
  std::string chain;                  // chains and rules
  std::string comment;                // tables and chains; "" for none
  std::optional<NftHook> hook;        // kAddChain: a base chain
  NftRuleSpec rule;                   // kAddRule, kInsertRule
  uint64_t handle = 0;                // kDeleteRule
  // The command in nft syntax, one line without the newline.
  std::string ToText() const;
};

// Commands applied together: all of them or none. "add" of a table or chain
// that exists is not an error (as with nft's "add").
class NftBatch {
 public:
  // "add table <family> <table> [{ comment "<comment>" ; }]".
  void AddTable(NftFamily family, absl::string_view table, absl::string_view comment = "");
  // "add chain ..." (a base chain when `hook` is given).
  void AddChain(NftFamily family, absl::string_view table, absl::string_view chain,
                std::optional<NftHook> hook = std::nullopt, absl::string_view comment = "");
  // "create chain ...": as AddChain, but the whole batch fails (EEXIST) when
  // the chain exists: lets the first of two concurrent set-ups win, and the
  // other look again, instead of both filling the chain.
  void CreateChain(NftFamily family, absl::string_view table, absl::string_view chain,
                   std::optional<NftHook> hook = std::nullopt);
  // "flush chain ...": removes every rule of the chain.
  void FlushChain(NftFamily family, absl::string_view table, absl::string_view chain);
  // "delete chain ..." (the chain must be empty and unreferenced by then).
  void DeleteChain(NftFamily family, absl::string_view table, absl::string_view chain);
  // "add rule <family> <table> <chain> <rule>" (appended at the chain's end).
  void AddRule(NftFamily family, absl::string_view table, absl::string_view chain, NftRuleSpec rule);
  // "insert rule <family> <table> <chain> <rule>" (put at the chain's top,
  // as iptables -I chain 1).
  void InsertRule(NftFamily family, absl::string_view table, absl::string_view chain, NftRuleSpec rule);
  // "delete rule <family> <table> <chain> handle <n>" of a listed rule.
  void DeleteRule(const NftRule& rule);

  // No commands.
  bool empty() const { return commands_.empty(); }
  // In the order they were added, which is the order the kernel applies them.
  const std::vector<NftCommand>& commands() const { return commands_; }
  // The batch in nft syntax, one command per line.
  std::string ToText() const;
  // Whether a rule holds raw nft text (then only nft::Apply can commit it).
  bool HasText() const;
  // Applies the batch as one transaction over `nl` (a NETLINK_NETFILTER
  // socket: nft::OpenSocket), in the network namespace it was opened in. An empty batch does nothing. Errors (code 999)
  // name the failing command and the kernel's reason; a rule with raw nft
  // text is one of them.
  //
  // With `added`, the kernel echoes every rule the batch adds and they are
  // stored there (family, table, chain, handle, comment), in batch order:
  // the handles a later "delete rule ... handle N" needs, without listing
  // the table. Should an echo be lost (only if the receive buffer overflowed),
  // the result is an error although the batch may have been applied: list
  // before retrying.
  absl::Status Commit(net::NetlinkSocket& nl, std::vector<NftRule>* added = nullptr) const;
  // Same through a NETLINK_NETFILTER socket of its own, opened in the calling
  // thread's network namespace (for callers that commit once).
  absl::Status Commit(std::vector<NftRule>* added = nullptr) const;

 private:
  std::vector<NftCommand> commands_;
};

}  // namespace cni::fw
