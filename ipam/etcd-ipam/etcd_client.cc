#include "etcd_client.h"

#include <curl/curl.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "cni/base/error.h"
#include "cni/base/status_macros.h"

namespace cni::etcdipam {
namespace {

std::string B64(absl::string_view s) { return absl::Base64Escape(s); }

// int64 fields come as JSON strings from the gateway (proto3 JSON mapping);
// absent means 0.
int64_t Int64Field(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end()) return 0;
  if (it->is_number_integer()) return it->get<int64_t>();
  int64_t v = 0;
  if (it->is_string() && absl::SimpleAtoi(it->get<std::string>(), &v)) return v;
  return 0;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

size_t Append(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

// Answers that mean "this member cannot serve now; another one, or the same
// one a moment later, may": gRPC UNAVAILABLE (14), DEADLINE_EXCEEDED (4),
// and etcd's leader-election errors, whatever code they ride on.
bool Transient(int grpc_code, absl::string_view message) {
  if (grpc_code == 14 || grpc_code == 4) return true;
  for (absl::string_view m : {"no leader", "timed out", "leader changed", "not capable",
                              "too many requests", "not started", "stopped"}) {
    if (absl::StrContains(message, m)) return true;
  }
  return false;
}

}  // namespace

namespace op {
Json Range(absl::string_view key, absl::string_view range_end, int64_t limit, bool serializable) {
  Json r = {{"key", B64(key)}};
  if (serializable) r["serializable"] = true;
  if (!range_end.empty()) r["range_end"] = B64(range_end);
  if (limit > 0) r["limit"] = absl::StrCat(limit);
  return {{"request_range", std::move(r)}};
}
Json Put(absl::string_view key, absl::string_view value) {
  return {{"request_put", {{"key", B64(key)}, {"value", B64(value)}}}};
}
Json Delete(absl::string_view key) { return {{"request_delete_range", {{"key", B64(key)}}}}; }
Json Txn(Json compare, Json success, Json failure) {
  return {{"compare", std::move(compare)}, {"success", std::move(success)},
          {"failure", std::move(failure)}};
}
Json AsRequest(Json txn) { return {{"request_txn", std::move(txn)}}; }
Json Absent(absl::string_view key) {
  return {{"key", B64(key)}, {"target", "CREATE"}, {"result", "EQUAL"}, {"create_revision", "0"}};
}
Json ModRevisionIs(absl::string_view key, int64_t revision) {
  return {{"key", B64(key)},
          {"target", "MOD"},
          {"result", "EQUAL"},
          {"mod_revision", absl::StrCat(revision)}};
}
Json ValueIs(absl::string_view key, absl::string_view value) {
  return {{"key", B64(key)}, {"target", "VALUE"}, {"result", "EQUAL"}, {"value", B64(value)}};
}
}  // namespace op

std::string PrefixEnd(absl::string_view prefix) {
  std::string end(prefix);
  while (!end.empty()) {
    if (static_cast<unsigned char>(end.back()) < 0xff) {
      end.back() = static_cast<char>(static_cast<unsigned char>(end.back()) + 1);
      return end;
    }
    end.pop_back();
  }
  return std::string(1, '\0');  // every key
}

absl::StatusOr<std::vector<KeyValue>> RangeKvs(const Json& response) {
  const Json* range = FindKey(response, "response_range");
  if (range == nullptr) range = &response;  // a bare RangeResponse
  std::vector<KeyValue> out;
  auto kvs = range->find("kvs");
  if (kvs == range->end()) return out;
  for (const Json& kv : *kvs) {
    KeyValue v;
    std::string key_b64 = kv.value("key", ""), value_b64 = kv.value("value", "");
    if (!absl::Base64Unescape(key_b64, &v.key) || !absl::Base64Unescape(value_b64, &v.value)) {
      return Error(ErrorCode::kInternal, "etcd answered a key or value that is not base64");
    }
    v.create_revision = Int64Field(kv, "create_revision");
    v.mod_revision = Int64Field(kv, "mod_revision");
    out.push_back(std::move(v));
  }
  return out;
}

struct EtcdClient::Impl {
  EtcdOptions options;
  absl::Time deadline;
  size_t current = 0;  // the endpoint that answered last
  std::unique_ptr<CURL, CurlDeleter> curl;
  std::unique_ptr<curl_slist, SlistDeleter> headers;

  // One HTTP POST; sets `body` and `http_code`, or returns libcurl's error.
  absl::Status Post(const std::string& url, const std::string& payload, absl::Duration budget,
                    std::string& body, long& http_code) {
    CURL* c = curl.get();
    body.clear();
    long ms = std::max<long>(1, static_cast<long>(absl::ToInt64Milliseconds(budget)));
    curl_easy_setopt(c, CURLOPT_URL, url.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(payload.size()));
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, std::min<long>(ms, 1000));
    curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
    CURLcode rc = curl_easy_perform(c);
    if (rc == CURLE_SSL_CERTPROBLEM || rc == CURLE_SSL_CACERT_BADFILE) {
      // Our own certificate, key or CA file is unusable: no retry helps.
      return Error(ErrorCode::kInvalidNetworkConfig,
                   absl::StrCat("etcd-ipam: TLS files: ", curl_easy_strerror(rc)));
    }
    if (rc != CURLE_OK) return absl::UnavailableError(curl_easy_strerror(rc));
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &http_code);
    return absl::OkStatus();
  }
};

EtcdClient::EtcdClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EtcdClient::~EtcdClient() = default;

absl::StatusOr<std::unique_ptr<EtcdClient>> EtcdClient::Open(const EtcdOptions& options) {
  for (const std::string* f : {&options.ca_file, &options.cert_file, &options.key_file}) {
    if (!f->empty() && access(f->c_str(), R_OK) != 0) {
      return WithCode(ErrnoError(errno, absl::StrCat("etcd-ipam: reading \"", *f, "\"")),
                      ErrorCode::kIoFailure);
    }
  }
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->deadline = absl::Now() + options.timeout;
  impl->curl.reset(curl_easy_init());
  if (!impl->curl) return Error(ErrorCode::kInternal, "etcd-ipam: curl_easy_init failed");
  impl->headers.reset(curl_slist_append(nullptr, "Content-Type: application/json"));
  CURL* c = impl->curl.get();
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, impl->headers.get());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  if (!options.cert_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, options.cert_file.c_str());
    curl_easy_setopt(c, CURLOPT_SSLKEY, options.key_file.c_str());
  }
  return std::unique_ptr<EtcdClient>(new EtcdClient(std::move(impl)));
}

absl::StatusOr<Json> EtcdClient::Call(absl::string_view path, const Json& request) {
  const std::vector<std::string>& eps = impl_->options.endpoints;
  std::string payload = Dump(request), body;
  std::vector<std::string> errors(eps.size());
  // One attempt may not take the whole budget: a hung member must leave time
  // for the others.
  absl::Duration per_attempt = std::max(absl::Seconds(1), impl_->options.timeout / 2);
  for (;;) {
    for (size_t i = 0; i < eps.size(); ++i) {
      size_t idx = (impl_->current + i) % eps.size();
      absl::Duration left = impl_->deadline - absl::Now();
      if (left <= absl::ZeroDuration()) {
        std::vector<std::string> seen;
        for (size_t k = 0; k < eps.size(); ++k) {
          if (!errors[k].empty()) seen.push_back(absl::StrCat(eps[k], ": ", errors[k]));
        }
        return Error(ErrorCode::kTryAgainLater,
                     absl::StrCat("etcd-ipam: the etcd cluster did not answer with a quorum within ",
                                  absl::FormatDuration(impl_->options.timeout), " (",
                                  absl::StrJoin(seen, "; "), ")"));
      }
      std::string url = absl::StrCat(absl::StripSuffix(eps[idx], "/"), path);
      long http = 0;
      if (absl::Status st = impl_->Post(url, payload, std::min(left, per_attempt), body, http);
          !st.ok()) {
        if (CodeOf(st) == static_cast<int>(ErrorCode::kInvalidNetworkConfig)) return st;
        errors[idx] = std::string(st.message());
        continue;
      }
      absl::StatusOr<Json> parsed = ParseJson(body);
      if (http == 200 && parsed.ok() && parsed->is_object()) {
        impl_->current = idx;
        return *std::move(parsed);
      }
      int code = 0;
      std::string message = absl::StrCat("HTTP ", http);
      if (parsed.ok() && parsed->is_object()) {
        code = static_cast<int>(Int64Field(*parsed, "code"));
        if (auto m = parsed->find("message"); m != parsed->end() && m->is_string()) {
          message = m->get<std::string>();
        } else if (auto e = parsed->find("error"); e != parsed->end() && e->is_string()) {
          message = e->get<std::string>();
        }
      }
      if (http >= 500 && code == 0) code = 14;
      if (!Transient(code, message)) {
        return Error(ErrorCode::kInternal, absl::StrCat("etcd-ipam: etcd ", eps[idx], path, ": ", message));
      }
      errors[idx] = message;
    }
    // Every endpoint failed this round: wait a little (an election takes
    // about a second), then go round again while time is left.
    absl::Duration left = impl_->deadline - absl::Now();
    absl::SleepFor(std::clamp(left, absl::ZeroDuration(), absl::Milliseconds(100)));
  }
}

absl::StatusOr<TxnResult> EtcdClient::Txn(const Json& txn) {
  ASSIGN_OR_RETURN(Json r, Call("/v3/kv/txn", txn));
  TxnResult out;
  out.succeeded = r.value("succeeded", false);
  if (auto h = r.find("header"); h != r.end()) out.revision = Int64Field(*h, "revision");
  if (auto rs = r.find("responses"); rs != r.end() && rs->is_array()) {
    for (const Json& x : *rs) out.responses.push_back(x);
  }
  return out;
}

absl::StatusOr<std::vector<KeyValue>> EtcdClient::Get(absl::string_view key,
                                                      absl::string_view range_end, int64_t limit) {
  ASSIGN_OR_RETURN(Json r, Call("/v3/kv/range", op::Range(key, range_end, limit)["request_range"]));
  return RangeKvs(r);
}

absl::StatusOr<Json> EtcdClient::MemberStatus() { return Call("/v3/maintenance/status", Json::object()); }

}  // namespace cni::etcdipam
