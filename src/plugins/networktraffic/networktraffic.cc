#include "plugins/networktraffic/networktraffic.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <regex>

#include "berth/framework/cycle_state.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "config/decode_util.h"
#include "prometheus/client.h"

namespace berth {
namespace {

using config::internal::Fields;
using config::internal::Problems;

constexpr auto kCacheFor = std::chrono::seconds(5);
constexpr int64_t kNoSample = -1;

struct TrafficState final : StateData, std::enable_shared_from_this<TrafficState> {
  std::shared_ptr<const std::map<std::string, double>> bytes;  // node -> bytes
  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<TrafficState>(shared_from_this());
  }
};
inline constexpr StateKey<TrafficState> kTrafficKey{"PreScoreNetworkTraffic"};

// Also a ScoresWithoutPreScore: enabled under `score` alone (as the scoring-plugin tutorials
// configure it), Score fetches the traffic itself.
class NetworkTraffic final : public PreScorePlugin,
                             public ScorePlugin,
                             public ScoresWithoutPreScore {
 public:
  NetworkTraffic(Handle& handle, NetworkTrafficArgs args,
                 std::unique_ptr<prometheus::PrometheusClient> client)
      : handle_(handle), args_(std::move(args)), client_(std::move(client)) {}

  std::string_view Name() const override { return kNetworkTrafficName; }

  Status PreScore(CycleState& state, const PodInfo&, std::span<const NodeInfo* const>) override {
    auto s = std::make_shared<TrafficState>();
    s->bytes = Traffic();
    state.Write(kTrafficKey, std::move(s));
    return Status::Success();
  }

  Status Score(const CycleState& state, const PodInfo&, const NodeInfo& node,
               int64_t* score) const override {
    const TrafficState* s = state.Read(kTrafficKey);
    // Without PreScore (the profile enables only Score), the shared cache answers: the first
    // node's call fetches, the others of the cycle read what it fetched.
    std::shared_ptr<const std::map<std::string, double>> fetched;
    const std::map<std::string, double>* bytes = s ? s->bytes.get() : nullptr;
    if (!s) {
      fetched = Traffic();
      bytes = fetched.get();
    }
    *score = kNoSample;
    if (!bytes) return Status::Success();
    auto it = bytes->find(node.name());
    if (it != bytes->end() && it->second >= 0)
      *score = static_cast<int64_t>(std::min(it->second, 9.0e18));
    return Status::Success();
  }

  bool HasNormalize() const override { return true; }
  Status NormalizeScore(const CycleState&, const PodInfo&,
                        std::span<NodeScore> scores) const override {
    int64_t highest = 0;
    for (const NodeScore& s : scores) highest = std::max(highest, s.score);
    for (NodeScore& s : scores) {
      if (s.score == kNoSample) {
        s.score = 0;
      } else if (highest == 0) {
        s.score = kMaxNodeScore;
      } else {
        // 128-bit to keep bytes x 100 exact.
        s.score = kMaxNodeScore -
                  static_cast<int64_t>(static_cast<__int128>(s.score) * kMaxNodeScore / highest);
      }
    }
    return Status::Success();
  }

 private:
  // The traffic per node, from the cache while it is fresh. Any thread: PreScore calls it on
  // the scheduling thread, Score (when PreScore is not enabled) on the parallel workers.
  std::shared_ptr<const std::map<std::string, double>> Traffic() const {
    std::lock_guard lock(mu_);
    const TimePoint now = handle_.clock().Now();
    if (cached_ && now - fetched_at_ < kCacheFor) return cached_;
    auto bytes =
        prometheus::NodeReceiveBytes(*client_, args_.network_interface,
                                     static_cast<int>(args_.time_range_minutes), args_.node_label);
    fetched_at_ = now;
    if (!bytes.ok()) {
      Report(
          fmt::format("Prometheus did not answer, every node scores 0: {}", bytes.error().message));
      cached_ = std::make_shared<const std::map<std::string, double>>();
      return cached_;
    }
    if (!last_report_.empty()) Report("");
    cached_ = std::make_shared<const std::map<std::string, double>>(std::move(bytes).value());
    return cached_;
  }

  // Writes a reason once (not every cycle); an empty reason marks recovery.
  void Report(const std::string& reason) const {
    if (reason == last_report_) return;
    last_report_ = reason;
    std::fprintf(stderr, "%s: %s\n", std::string(kNetworkTrafficName).c_str(),
                 reason.empty() ? "Prometheus answers again" : reason.c_str());
  }

  Handle& handle_;
  NetworkTrafficArgs args_;
  std::unique_ptr<prometheus::PrometheusClient> client_;
  mutable std::mutex mu_;  // guards the cache and the last report
  mutable std::shared_ptr<const std::map<std::string, double>> cached_;
  mutable TimePoint fetched_at_{};
  mutable std::string last_report_;
};

Result<std::shared_ptr<const PluginArgs>> DecodeNetworkTrafficArgs(const nlohmann::json* raw,
                                                                   const std::string& path) {
  Problems p;
  Fields f(raw, path, p,
           {"apiVersion", "kind", "prometheusAddress", "networkInterface", "timeRangeInMinutes",
            "timeout", "nodeLabel"});
  auto args = std::make_shared<NetworkTrafficArgs>();
  if (auto v = f.String("prometheusAddress")) args->prometheus_address = *v;
  if (auto v = f.String("networkInterface")) args->network_interface = *v;
  if (auto v = f.Int64("timeRangeInMinutes")) args->time_range_minutes = *v;
  if (auto v = f.DurationMs("timeout")) args->timeout_ms = *v;
  if (auto v = f.String("nodeLabel")) args->node_label = *v;
  if (p.ok()) {
    static const std::regex kDevice("[A-Za-z0-9_.:@-]+");
    static const std::regex kLabel("[A-Za-z_][A-Za-z0-9_]*");
    if (args->prometheus_address.rfind("http://", 0) != 0 &&
        args->prometheus_address.rfind("https://", 0) != 0)
      p.Add(f.PathOf("prometheusAddress"),
            fmt::format("invalid value \"{}\": must be an http:// or https:// URL",
                        args->prometheus_address));
    if (!std::regex_match(args->network_interface, kDevice))
      p.Add(f.PathOf("networkInterface"),
            fmt::format("invalid value \"{}\": not an interface name", args->network_interface));
    if (args->time_range_minutes <= 0)
      p.Add(f.PathOf("timeRangeInMinutes"),
            fmt::format("invalid value {}: must be positive", args->time_range_minutes));
    if (args->timeout_ms <= 0) p.Add(f.PathOf("timeout"), "invalid value: must be positive");
    if (!std::regex_match(args->node_label, kLabel))
      p.Add(f.PathOf("nodeLabel"),
            fmt::format("invalid value \"{}\": not a label name", args->node_label));
  }
  if (!p.ok()) return p.error();
  return std::shared_ptr<const PluginArgs>(std::move(args));
}

}  // namespace

void NetworkTrafficArgs::Encode(nlohmann::json& out) const {
  out["prometheusAddress"] = prometheus_address;
  out["networkInterface"] = network_interface;
  out["timeRangeInMinutes"] = time_range_minutes;
  out["timeout"] = fmt::format("{}ms", timeout_ms);
  out["nodeLabel"] = node_label;
}

PluginRegistration NetworkTrafficRegistration() {
  auto factory = [](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs<NetworkTrafficArgs>(args, nullptr, "NetworkTrafficArgs");
    if (!typed.ok()) return typed.error();
    if (*typed == nullptr) return Error{"NetworkTraffic needs args with prometheusAddress"};
    auto client = prometheus::PrometheusClient::Create(
        (*typed)->prometheus_address, std::chrono::milliseconds((*typed)->timeout_ms));
    if (!client.ok()) return client.error();
    return std::unique_ptr<Plugin>(
        std::make_unique<NetworkTraffic>(handle, **typed, std::move(client).value()));
  };
  return MakeRegistration(kNetworkTrafficName, factory, DecodeNetworkTrafficArgs);
}

}  // namespace berth
