#include "etcd_ipam.h"

#include <sys/random.h>

#include <algorithm>
#include <deque>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"
#include "cni/protocol/version.h"
#include "etcd_client.h"

namespace cni::etcdipam {
namespace {

using net::IpAddress;

// Candidates read in one transaction while looking for a free address.
constexpr size_t kProbeBatch = 32;
// After a lost race, a free candidate is drawn among the first kSpread found,
// so that concurrent allocators starting from the same hint do not all race
// for one address again (a first attempt takes the first free one, in
// host-local's order). Measured with 32 allocators on one /16: no ADD needed
// more than a handful of transactions; without the spread, some needed 30.
constexpr size_t kSpread = 32;

absl::StatusOr<std::unique_ptr<EtcdClient>> Connect(const Config& cfg) {
  EtcdOptions o;
  o.endpoints = cfg.etcd.endpoints;
  o.ca_file = cfg.etcd.ca_file;
  o.cert_file = cfg.etcd.cert_file;
  o.key_file = cfg.etcd.key_file;
  o.timeout = absl::Seconds(cfg.etcd.timeout_seconds);
  return EtcdClient::Open(o);
}

std::string HintKey(const Config& cfg, const ipam::RangeSet& set) {
  return absl::StrCat(NetworkPrefix(cfg), "/hints/", ipam::RangeSetToString(set));
}

// The value of every address key of an attachment (compared byte for byte by
// DEL, so it is always built here, keys in a fixed order).
std::string OwnerValue(const Config& cfg, absl::string_view id, absl::string_view ifname) {
  return Dump(Json{{"containerID", id}, {"ifname", ifname}, {"network", cfg.name}});
}

std::string RandomToken() {
  unsigned char b[16];
  if (getrandom(b, sizeof(b), 0) != static_cast<ssize_t>(sizeof(b))) {
    std::random_device rd;
    for (unsigned char& c : b) c = static_cast<unsigned char>(rd());
  }
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(b), sizeof(b)));
}

// An attachment record as stored.
struct AttachmentRecord {
  std::string container_id, ifname, node, token;
  std::vector<IpAddress> ips;
  int64_t mod_revision = 0;
};

std::optional<AttachmentRecord> ParseAttachment(const KeyValue& kv) {
  absl::StatusOr<Json> j = ParseJson(kv.value);
  if (!j.ok() || !j->is_object()) return std::nullopt;
  AttachmentRecord r;
  r.container_id = j->value("containerID", "");
  r.ifname = j->value("ifname", "");
  r.node = j->value("node", "");
  r.token = j->value("token", "");
  r.mod_revision = kv.mod_revision;
  if (auto ips = j->find("ips"); ips != j->end() && ips->is_array()) {
    for (const Json& ip : *ips) {
      if (!ip.is_string()) continue;
      if (absl::StatusOr<IpAddress> a = IpAddress::Parse(ip.get<std::string>()); a.ok()) {
        r.ips.push_back(*a);
      }
    }
  }
  return r;
}

std::string AttachmentValue(const Config& cfg, const CmdArgs& args, const std::string& token,
                            const std::vector<IpAddress>& ips) {
  Json list = Json::array();
  for (const IpAddress& ip : ips) list.push_back(ip.ToString());
  return Dump(Json{{"containerID", args.container_id},
                   {"ifname", args.ifname},
                   {"network", cfg.name},
                   {"node", cfg.node_name},
                   {"ips", std::move(list)},
                   {"token", token}});
}

absl::Status Duplicate(const CmdArgs& args, const AttachmentRecord& rec) {
  std::string ip = rec.ips.empty() ? std::string("an address") : rec.ips.front().ToString();
  return absl::AlreadyExistsError(absl::StrCat("etcd-ipam: ", ip, " has been allocated to ",
                                               args.container_id, " (", args.ifname,
                                               "), duplicate allocation is not allowed"));
}

// The search for a free address in one range set: candidates in round-robin
// order after the hint, read from etcd in batches, free ones kept in `free`.
struct SetSearch {
  const ipam::RangeSet* set = nullptr;
  size_t index = 0;
  std::optional<IpAddress> fixed;  // a requested address: that one or an error
  std::unique_ptr<ipam::RangeIter> iter;
  std::deque<std::pair<IpAddress, const ipam::Range*>> free;
  bool exhausted = false;  // the iterator offered every address
  std::optional<std::pair<IpAddress, const ipam::Range*>> chosen;
  bool contended = false;  // lost a race: spread the next choice
};

absl::Status Exhausted(const SetSearch& s) {
  return absl::ResourceExhaustedError(
      absl::StrCat("failed to allocate for range ", s.index,
                   ": no IP addresses available in range set: ", ipam::RangeSetToString(*s.set)));
}

// Fills s.free with the next free candidates (one read transaction per batch
// of kProbeBatch candidates) until some are found or every address was offered.
absl::Status Probe(EtcdClient& etcd, const Config& cfg, SetSearch& s) {
  while (s.free.empty()) {
    if (s.exhausted) return Exhausted(s);
    std::vector<std::pair<IpAddress, const ipam::Range*>> batch;
    while (batch.size() < kProbeBatch) {
      auto c = s.iter->Next();
      if (!c) {
        s.exhausted = true;
        break;
      }
      if (!cfg.Excluded(c->first)) batch.push_back(*c);
    }
    if (batch.empty()) continue;
    Json reads = Json::array();
    // Serializable: the write transaction's compare is what decides.
    for (const auto& c : batch) reads.push_back(op::Range(IpKey(cfg, c.first), {}, 0, true));
    ASSIGN_OR_RETURN(TxnResult r, etcd.Txn(op::Txn(Json::array(), std::move(reads))));
    for (size_t i = 0; i < batch.size() && i < r.responses.size(); ++i) {
      ASSIGN_OR_RETURN(std::vector<KeyValue> kvs, RangeKvs(r.responses[i]));
      if (kvs.empty()) s.free.push_back(batch[i]);
    }
  }
  return absl::OkStatus();
}

std::mt19937_64& Rng() {
  static std::mt19937_64 rng([] {
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed)) seed = std::random_device()();
    return seed;
  }());
  return rng;
}

// Picks the first free candidate, or after a lost race one of the first
// kSpread, and removes it from `free`.
void Choose(SetSearch& s) {
  size_t n = s.contended ? std::min(s.free.size(), kSpread) : 1;
  size_t k = std::uniform_int_distribution<size_t>(0, n - 1)(Rng());
  s.chosen = s.free[k];
  s.free.erase(s.free.begin() + static_cast<std::ptrdiff_t>(k));
}

absl::StatusOr<std::vector<SetSearch>> PlanSearches(const Config& cfg,
                                                    const std::vector<std::optional<IpAddress>>& hints) {
  std::vector<IpAddress> requested = cfg.requested_ips;
  std::vector<SetSearch> out(cfg.ranges.size());
  for (size_t i = 0; i < cfg.ranges.size(); ++i) {
    SetSearch& s = out[i];
    s.set = &cfg.ranges[i];
    s.index = i;
    s.fixed = ipam::TakeRequested(*s.set, requested);
    if (s.fixed) {
      const ipam::Range* r = ipam::RangeFor(*s.set, *s.fixed);
      if (*s.fixed == r->gateway) {
        return absl::InvalidArgumentError(
            absl::StrCat("requested ip ", s.fixed->ToString(), " is subnet's gateway"));
      }
      s.chosen = std::make_pair(*s.fixed, r);
    } else {
      s.iter = std::make_unique<ipam::RangeIter>(*s.set, hints[i]);
    }
  }
  RETURN_IF_ERROR(ipam::UnusedRequestedIps(requested));
  return out;
}

absl::StatusOr<std::vector<IpConfig>> Allocate(const CmdArgs& args, const Config& cfg,
                                               EtcdClient& etcd) {
  const std::string att_key = AttachmentKey(cfg, args.container_id, args.ifname);
  const std::string owner = OwnerValue(cfg, args.container_id, args.ifname);
  const std::string token = RandomToken();

  // 1. One read: does the attachment exist already, and where did each range
  //    set stop last time. Linearizable on purpose: it answers only with a
  //    quorum, so an ADD that starts without one proposes nothing (a member
  //    that was the leader still accepts proposals until it notices, and
  //    raft may commit them when the quorum comes back, long after this ADD
  //    reported code 11).
  Json reads = Json::array({op::Range(att_key)});
  for (const ipam::RangeSet& set : cfg.ranges) reads.push_back(op::Range(HintKey(cfg, set)));
  ASSIGN_OR_RETURN(TxnResult first, etcd.Txn(op::Txn(Json::array(), std::move(reads))));
  ASSIGN_OR_RETURN(std::vector<KeyValue> att, RangeKvs(first.responses.at(0)));
  if (!att.empty()) {
    if (auto rec = ParseAttachment(att.front())) return Duplicate(args, *rec);
    return Duplicate(args, AttachmentRecord{});
  }
  std::vector<std::optional<IpAddress>> hints(cfg.ranges.size());
  for (size_t i = 0; i < cfg.ranges.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<KeyValue> h, RangeKvs(first.responses.at(i + 1)));
    if (!h.empty()) {
      if (absl::StatusOr<IpAddress> ip = IpAddress::Parse(h.front().value); ip.ok()) hints[i] = *ip;
    }
  }
  ASSIGN_OR_RETURN(std::vector<SetSearch> searches, PlanSearches(cfg, hints));

  // 2. Choose a candidate per range set and write everything in one
  //    transaction guarded by "all these keys are absent"; on a lost race,
  //    choose again for the sets whose address was taken.
  for (;;) {
    for (SetSearch& s : searches) {
      if (s.chosen) continue;
      RETURN_IF_ERROR(Probe(etcd, cfg, s));
      Choose(s);
    }
    std::vector<IpAddress> ips;
    Json compare = Json::array({op::Absent(att_key)});
    Json success = Json::array(), failure = Json::array({op::Range(att_key)});
    for (const SetSearch& s : searches) {
      const IpAddress& ip = s.chosen->first;
      ips.push_back(ip);
      compare.push_back(op::Absent(IpKey(cfg, ip)));
      success.push_back(op::Put(IpKey(cfg, ip), owner));
      failure.push_back(op::Range(IpKey(cfg, ip)));
    }
    for (const SetSearch& s : searches) failure.push_back(op::Range(HintKey(cfg, *s.set)));
    success.push_back(op::Put(att_key, AttachmentValue(cfg, args, token, ips)));
    for (const SetSearch& s : searches) {
      if (!s.fixed) success.push_back(op::Put(HintKey(cfg, *s.set), s.chosen->first.ToString()));
    }
    ASSIGN_OR_RETURN(TxnResult r, etcd.Txn(op::Txn(std::move(compare), std::move(success),
                                                   std::move(failure))));
    std::vector<IpConfig> out;
    for (const SetSearch& s : searches) out.push_back(ipam::MakeIpConfig(s.chosen->first, *s.chosen->second));
    if (r.succeeded) return out;

    // Lost: the attachment appeared (our own earlier attempt, committed
    // although its answer was lost, or a concurrent ADD), or an address went.
    ASSIGN_OR_RETURN(std::vector<KeyValue> now, RangeKvs(r.responses.at(0)));
    if (!now.empty()) {
      std::optional<AttachmentRecord> rec = ParseAttachment(now.front());
      if (rec && rec->token == token) return out;
      return Duplicate(args, rec.value_or(AttachmentRecord{}));
    }
    for (size_t i = 0; i < searches.size(); ++i) {
      ASSIGN_OR_RETURN(std::vector<KeyValue> taken, RangeKvs(r.responses.at(i + 1)));
      if (taken.empty()) continue;
      SetSearch& s = searches[i];
      if (s.fixed) {
        return absl::UnavailableError(absl::StrCat("requested IP address ", s.fixed->ToString(),
                                                   " is not available in range set ",
                                                   ipam::RangeSetToString(*s.set)));
      }
      // Others are allocating here too: start again after the address
      // handed out last (the hint now), where the free ones are, rather
      // than from candidates read before they took them.
      s.chosen.reset();
      s.free.clear();
      ASSIGN_OR_RETURN(std::vector<KeyValue> hint, RangeKvs(r.responses.at(searches.size() + 1 + i)));
      std::optional<IpAddress> last;
      if (!hint.empty()) {
        if (absl::StatusOr<IpAddress> h = IpAddress::Parse(hint.front().value); h.ok()) last = *h;
      }
      s.iter = std::make_unique<ipam::RangeIter>(*s.set, last);
      s.exhausted = false;
      s.contended = true;
    }
  }
}

// Deletes the attachment record and, of its addresses, those still owned by
// it, in one transaction conditional on the record being unchanged.
// Returns false when the record changed meanwhile (the caller reads again).
absl::StatusOr<bool> DeleteAttachment(EtcdClient& etcd, const Config& cfg, const std::string& key,
                                      const AttachmentRecord& rec) {
  const std::string owner = OwnerValue(cfg, rec.container_id, rec.ifname);
  Json success = Json::array({op::Delete(key)});
  for (const IpAddress& ip : rec.ips) {
    const std::string ip_key = IpKey(cfg, ip);
    success.push_back(op::AsRequest(
        op::Txn(Json::array({op::ValueIs(ip_key, owner)}), Json::array({op::Delete(ip_key)}))));
  }
  ASSIGN_OR_RETURN(TxnResult r, etcd.Txn(op::Txn(Json::array({op::ModRevisionIs(key, rec.mod_revision)}),
                                                 std::move(success))));
  return r.succeeded;
}

// One address per range set, all written by one transaction (Allocate).
absl::StatusOr<Result> Add(const CmdArgs& args, const Config& cfg) {
  ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> etcd, Connect(cfg));
  Result result;
  result.cni_version = std::string(kCurrentVersion);
  ASSIGN_OR_RETURN(result.ips, Allocate(args, cfg, *etcd));
  result.routes = cfg.routes;
  result.dns = cfg.dns;
  return result;
}

// Releases the attachment's record and addresses; nothing to release is success.
absl::Status Del(const CmdArgs& args, const Config& cfg) {
  ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> etcd, Connect(cfg));
  const std::string key = AttachmentKey(cfg, args.container_id, args.ifname);
  for (;;) {
    ASSIGN_OR_RETURN(std::vector<KeyValue> kvs, etcd->Get(key));
    if (kvs.empty()) return absl::OkStatus();  // nothing (left) to release
    AttachmentRecord rec = ParseAttachment(kvs.front()).value_or(AttachmentRecord{});
    rec.container_id = args.container_id;
    rec.ifname = args.ifname;
    rec.mod_revision = kvs.front().mod_revision;
    ASSIGN_OR_RETURN(bool done, DeleteAttachment(*etcd, cfg, key, rec));
    if (done) return absl::OkStatus();
  }
}

// The attachment's record exists and each address it lists still names it.
absl::Status Check(const CmdArgs& args, const Config& cfg) {
  ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> etcd, Connect(cfg));
  const std::string key = AttachmentKey(cfg, args.container_id, args.ifname);
  ASSIGN_OR_RETURN(std::vector<KeyValue> kvs, etcd->Get(key));
  std::optional<AttachmentRecord> rec;
  if (!kvs.empty()) rec = ParseAttachment(kvs.front());
  // A failed check (999, as host-local's), not code 3: that code tells the
  // runtime the container is unknown and needs no DEL.
  if (!rec || rec->ips.empty()) {
    return Error(ErrorCode::kInternal,
                 absl::StrCat("etcd-ipam: Failed to find address added by container ",
                              args.container_id));
  }
  Json reads = Json::array();
  for (const IpAddress& ip : rec->ips) reads.push_back(op::Range(IpKey(cfg, ip)));
  ASSIGN_OR_RETURN(TxnResult r, etcd->Txn(op::Txn(Json::array(), std::move(reads))));
  const std::string owner = OwnerValue(cfg, args.container_id, args.ifname);
  for (size_t i = 0; i < rec->ips.size(); ++i) {
    ASSIGN_OR_RETURN(std::vector<KeyValue> ip_kv, RangeKvs(r.responses.at(i)));
    if (ip_kv.empty() || ip_kv.front().value != owner) {
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("etcd-ipam: address ", rec->ips[i].ToString(),
                                " is not reserved for container ", args.container_id, " (",
                                args.ifname, ")"));
    }
  }
  return absl::OkStatus();
}

// GC is per node: the valid list a runtime sends names the attachments of its
// own node, so only records written under this node's name ("nodeName", else
// its host name) are candidates. Without a name every nameless record would
// be, whichever node wrote it: refused.
absl::Status Gc(const CmdArgs& args, const Config& cfg) {
  if (cfg.node_name.empty()) {
    return Error(ErrorCode::kInvalidNetworkConfig,
                 "etcd-ipam: GC needs this node's name: the host name is empty, set \"nodeName\"");
  }
  ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> etcd, Connect(cfg));
  absl::flat_hash_set<std::pair<std::string, std::string>> valid;
  for (const Attachment& a : args.conf.valid_attachments) valid.insert({a.container_id, a.ifname});
  const std::string dir = absl::StrCat(NetworkPrefix(cfg), "/attachments/");
  ASSIGN_OR_RETURN(std::vector<KeyValue> all, etcd->Get(dir, PrefixEnd(dir)));
  std::vector<absl::Status> failures;
  for (const KeyValue& kv : all) {
    std::optional<AttachmentRecord> rec = ParseAttachment(kv);
    if (!rec || rec->node != cfg.node_name) continue;
    if (valid.contains({rec->container_id, rec->ifname})) continue;
    // A record changed meanwhile belongs to a live ADD or DEL: left alone.
    absl::StatusOr<bool> done = DeleteAttachment(*etcd, cfg, kv.key, *rec);
    if (!done.ok()) failures.push_back(done.status());
  }
  return JoinErrors(failures);
}

absl::Status Status(const CmdArgs&, const Config& cfg) {
  ASSIGN_OR_RETURN(std::unique_ptr<EtcdClient> etcd, Connect(cfg));
  // A linearizable read goes through the leader's quorum check.
  absl::StatusOr<std::vector<KeyValue>> r = etcd->Get(NetworkPrefix(cfg), {}, 1);
  if (!r.ok()) return Error(ErrorCode::kPluginNotAvailable, r.status().message());
  return absl::OkStatus();
}

}  // namespace

std::string NetworkPrefix(const Config& cfg) { return absl::StrCat(cfg.etcd.prefix, "/", cfg.name); }

std::string IpKey(const Config& cfg, const IpAddress& ip) {
  return absl::StrCat(NetworkPrefix(cfg), "/ips/", ip.ToString());
}

std::string AttachmentKey(const Config& cfg, absl::string_view container_id,
                          absl::string_view ifname) {
  return absl::StrCat(NetworkPrefix(cfg), "/attachments/", container_id, "/", ifname);
}

PluginFuncs Funcs() {
  return Typed<Config>({.add = Add, .del = Del, .check = Check, .gc = Gc, .status = Status});
}

}  // namespace cni::etcdipam
