#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/error.h"
#include "cni/hash.h"
#include "cni/json.h"

namespace cni::bandwidth {
namespace {

constexpr const char* kKeys[] = {"ingressRate", "ingressBurst", "egressRate", "egressBurst"};
constexpr uint64_t kMaxUint32 = 0xFFFFFFFFu;

absl::Status Invalid(absl::string_view msg) {
  return Error(ErrorCode::kInvalidNetworkConfig, absl::StrCat("bandwidth: ", msg));
}

absl::StatusOr<Limits> ReadLimits(const Json& obj) {
  uint64_t* fields[4];
  Limits l;
  fields[0] = &l.ingress_rate;
  fields[1] = &l.ingress_burst;
  fields[2] = &l.egress_rate;
  fields[3] = &l.egress_burst;
  for (int i = 0; i < 4; ++i) {
    absl::StatusOr<std::optional<uint64_t>> v = GetUint(obj, kKeys[i]);
    if (!v.ok()) return v.status();
    *fields[i] = v->value_or(0);
  }
  return l;
}

absl::Status ValidateRateAndBurst(absl::string_view dir, uint64_t rate, uint64_t burst) {
  if (burst == 0 && rate != 0) return Invalid(absl::StrCat("if ", dir, "Rate is set, ", dir, "Burst must also be set"));
  if (rate == 0 && burst != 0) return Invalid(absl::StrCat("if ", dir, "Burst is set, ", dir, "Rate must also be set"));
  if (burst / 8 >= kMaxUint32) return Invalid(absl::StrCat(dir, "Burst cannot be more than 4GB"));
  if (rate != 0 && rate < 8) return Invalid(absl::StrCat(dir, "Rate must be at least 8 bits per second"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Config> ParseConfig(const NetConf& conf) {
  Config c;
  c.name = conf.name;
  // Upstream embeds the four keys as one optional struct: any one of them in
  // the config means "the config decides"; only otherwise does the runtime's
  // capability apply.
  bool in_config = false;
  for (const char* key : kKeys) {
    const Json* v = FindKey(conf.raw, key);
    if (v != nullptr && !v->is_null()) in_config = true;
  }
  const Json* source = &conf.raw;
  if (!in_config) {
    const Json* rt = FindKey(conf.runtime_config, "bandwidth");
    if (rt == nullptr || rt->is_null()) return c;
    if (!rt->is_object()) {
      return Error(ErrorCode::kDecodingFailure, "bandwidth: runtimeConfig \"bandwidth\" is not an object");
    }
    source = rt;
  }
  absl::StatusOr<Limits> limits = ReadLimits(*source);
  if (!limits.ok()) return limits.status();
  if (absl::Status st = ValidateRateAndBurst("ingress", limits->ingress_rate, limits->ingress_burst); !st.ok()) return st;
  if (absl::Status st = ValidateRateAndBurst("egress", limits->egress_rate, limits->egress_burst); !st.ok()) return st;
  c.limits = *limits;
  return c;
}

net::TbfParams TbfFor(uint64_t rate_bits, uint64_t burst_bits, double ticks_per_usec) {
  constexpr double kUsecPerSec = 1000000.0;
  constexpr double kLatencyUsec = kUsecPerSec * (25 / 1000.0);  // upstream's 25 ms
  uint64_t rate = rate_bits / 8;
  auto burst = static_cast<uint32_t>(burst_bits / 8);
  auto usec = static_cast<uint32_t>(static_cast<double>(burst) * kUsecPerSec / static_cast<double>(rate));
  net::TbfParams p;
  p.rate = rate;
  p.buffer = static_cast<uint32_t>(static_cast<double>(usec) * ticks_per_usec);
  p.limit = static_cast<uint32_t>(static_cast<double>(rate) * kLatencyUsec / kUsecPerSec) + burst;
  return p;
}

std::string IfbName(const std::string& network, const std::string& container_id) {
  return HashWithPrefix(15, "bwp", network + container_id);
}

}  // namespace cni::bandwidth
