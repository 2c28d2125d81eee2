// A small etcd v3 client over etcd's own HTTP/JSON gateway (grpc-gateway, served
// by every etcd >= 3.4 on its client URLs: /v3/kv/range, /v3/kv/txn,
// /v3/maintenance/status), with libcurl doing the HTTP and TLS. Keys and values
// travel base64-encoded; int64 fields as JSON strings, as the gateway writes them.
//
// Every call shares one deadline, fixed when the client is made (the plugin's
// whole budget, "timeout"): an unreachable endpoint, a member without a leader
// or a cluster without a quorum is retried on the other endpoints until then,
// and then reported as code 11 (try again later).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "cni/base/json.h"

namespace cni::etcdipam {

struct EtcdOptions {
  std::vector<std::string> endpoints;
  std::string ca_file, cert_file, key_file;
  absl::Duration timeout = absl::Seconds(5);
};

struct KeyValue {
  std::string key;
  std::string value;
  int64_t create_revision = 0;
  int64_t mod_revision = 0;
};

// Request builders (etcdserverpb messages as the gateway's JSON).
namespace op {
// A read of `key` (to `range_end`). `serializable`: answered by the member
// from its own state, without the quorum round of a linearizable read; for
// reads whose answer a later transaction's compare checks anyway.
Json Range(absl::string_view key, absl::string_view range_end = {}, int64_t limit = 0,
           bool serializable = false);
Json Put(absl::string_view key, absl::string_view value);
Json Delete(absl::string_view key);
Json Txn(Json compare, Json success, Json failure = Json::array());
Json AsRequest(Json txn);  // a nested transaction as one operation of another
// Compares: the key was never created (or is deleted); its mod revision; its value.
Json Absent(absl::string_view key);
Json ModRevisionIs(absl::string_view key, int64_t revision);
Json ValueIs(absl::string_view key, absl::string_view value);
}  // namespace op

// The key just after every key that starts with `prefix` (etcd's range_end).
std::string PrefixEnd(absl::string_view prefix);

struct TxnResult {
  bool succeeded = false;
  int64_t revision = 0;          // the store's revision after the transaction
  std::vector<Json> responses;   // one per operation of the branch taken
};

// The key-values of a range response (one element of TxnResult::responses).
absl::StatusOr<std::vector<KeyValue>> RangeKvs(const Json& response);

class EtcdClient {
 public:
  // Checks the options (TLS files readable) and starts the deadline. No I/O.
  static absl::StatusOr<std::unique_ptr<EtcdClient>> Open(const EtcdOptions& options);
  ~EtcdClient();
  EtcdClient(const EtcdClient&) = delete;
  EtcdClient& operator=(const EtcdClient&) = delete;

  absl::StatusOr<TxnResult> Txn(const Json& txn);
  // A linearizable read: it answers only with a quorum.
  absl::StatusOr<std::vector<KeyValue>> Get(absl::string_view key, absl::string_view range_end = {},
                                            int64_t limit = 0);
  // The endpoints that answered /v3/maintenance/status, with their leader.
  absl::StatusOr<Json> MemberStatus();

 private:
  struct Impl;
  explicit EtcdClient(std::unique_ptr<Impl> impl);
  absl::StatusOr<Json> Call(absl::string_view path, const Json& body);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cni::etcdipam
