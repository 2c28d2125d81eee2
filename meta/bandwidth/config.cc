#include "config.h"

#include "absl/strings/str_cat.h"
#include "cni/base/error.h"
#include "cni/base/hash.h"
#include "cni/base/json.h"
#include "cni/base/status_macros.h"

namespace cni::bandwidth {
namespace {

constexpr const char* kKeys[] = {"ingressRate", "ingressBurst", "egressRate", "egressBurst"};
constexpr uint64_t kMaxUint32 = 0xFFFFFFFFu;

absl::Status Invalid(absl::string_view msg) { return InvalidConfig("bandwidth", msg); }

absl::StatusOr<Limits> ReadLimits(const Json& obj) {
  uint64_t* fields[4];
  Limits l;
  fields[0] = &l.ingress_rate;
  fields[1] = &l.ingress_burst;
  fields[2] = &l.egress_rate;
  fields[3] = &l.egress_burst;
  for (int i = 0; i < 4; ++i) {
    ASSIGN_OR_RETURN(std::optional<uint64_t> v, GetUint(obj, kKeys[i]));
    *fields[i] = v.value_or(0);
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

// The object the four keys are read from: the config itself when any of them
// is there (upstream embeds them as one optional struct: the config decides),
// else the runtime's `bandwidth` capability; nullptr when neither.
absl::StatusOr<const Json*> LimitsSource(const NetConf& conf) {
  for (const char* key : kKeys) {
    const Json* v = FindKey(conf.raw, key);
    if (v != nullptr && !v->is_null()) return &conf.raw;
  }
  const Json* rt = FindKey(conf.runtime_config, "bandwidth");
  if (rt == nullptr || rt->is_null()) return nullptr;
  if (!rt->is_object()) {
    return Error(ErrorCode::kDecodingFailure, "bandwidth: runtimeConfig \"bandwidth\" is not an object");
  }
  return rt;
}

}  // namespace

absl::StatusOr<Config> Config::Parse(const CmdArgs& args) {
  Config c;
  c.name = args.conf.name;
  ASSIGN_OR_RETURN(const Json* source, LimitsSource(args.conf));
  if (source != nullptr) {
    ASSIGN_OR_RETURN(c.limits, ReadLimits(*source));
    const Limits& l = c.limits;
    RETURN_IF_ERROR(ValidateRateAndBurst("ingress", l.ingress_rate, l.ingress_burst));
    RETURN_IF_ERROR(ValidateRateAndBurst("egress", l.egress_rate, l.egress_burst));
  }
  c.prev_result = ParsePrevResult(args.conf);
  return c;
}

absl::StatusOr<TeardownConfig> TeardownConfig::Parse(const CmdArgs& args) {
  TeardownConfig c;
  c.name = args.conf.name;
  c.prev_result = ParsePrevResult(args.conf);
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

std::vector<std::string> Config::KeyNames() {
  std::vector<std::string> names(std::begin(kKeys), std::end(kKeys));
  names.push_back("runtimeConfig.bandwidth");  // the capability, with the same four keys
  return names;
}

}  // namespace cni::bandwidth
