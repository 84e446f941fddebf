#include "controllers/node_lifecycle.h"

#include <fmt/format.h>

#include "api/codec.h"
#include "controllers/node_lifecycle_util.h"
#include "controllers/object_util.h"

namespace berth::controllers {
namespace {

constexpr const char* kMergePatch = "application/merge-patch+json";

UnixTime Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

void Log(const ControllerOptions& o, const std::string& message) {
  if (o.log) o.log(message);
}

}  // namespace

Duration NodeMonitorPeriod(Duration grace) {
  return std::clamp<Duration>(grace / 8, std::chrono::milliseconds(100), std::chrono::seconds(5));
}

void Ticker::Start(Duration period, std::function<void()> round) {
  thread_ = std::thread([this, period, round = std::move(round)] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      lock.unlock();
      round();
      lock.lock();
      cv_.wait_for(lock, period, [&] { return stopping_; });
    }
  });
}

void Ticker::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

// ---------------------------------------------------------------- node lifecycle

NodeLifecycleController::NodeLifecycleController(client::RestClient* rest, SharedInformer* nodes,
                                                 SharedInformer* leases, ControllerOptions options)
    : rest_(rest), nodes_(nodes), leases_(leases), options_(std::move(options)) {}

void NodeLifecycleController::Start() {
  ticker_.Start(NodeMonitorPeriod(options_.node_monitor_grace_period), [this] { MonitorOnce(); });
}

void NodeLifecycleController::Stop() { ticker_.Stop(); }

int NodeLifecycleController::MonitorOnce() {
  std::lock_guard lock(mu_);
  const TimePoint now = options_.clock->Now();
  const std::string now_text = FormatTimestamp(Seconds(now));
  std::map<std::string, Probe> seen;
  int written = 0;
  for (const Object& obj : nodes_->List()) {
    Json node = DocOf(obj);
    const std::string name = NameOf(node);
    auto lease = leases_->Get(std::string(kNodeLeaseNamespace) + "/" + name);
    const std::string beat = NodeHeartbeat(node, lease ? &DocOf(*lease) : nullptr);
    Probe probe{beat, now};
    if (auto it = probes_.find(name); it != probes_.end() && it->second.heartbeat == beat) {
      probe.observed = it->second.observed;
    }
    seen[name] = probe;
    const std::string path = "/api/v1/nodes/" + name;
    if (now - probe.observed > options_.node_monitor_grace_period &&
        ReadyStatus(node) != "Unknown") {
      Json conditions = UnknownConditions(node, now_text);
      auto r =
          rest_->Patch(path + "/status", {{"status", {{"conditions", conditions}}}}, kMergePatch);
      if (!r.ok()) {
        Log(options_, fmt::format("node {}: marking it Unknown: {}", name, r.error().message));
        continue;
      }
      Log(options_, fmt::format("node {}: no heartbeat for {} s, Ready is Unknown", name,
                                std::chrono::duration_cast<std::chrono::seconds>(
                                    options_.node_monitor_grace_period)
                                    .count()));
      node["status"]["conditions"] = std::move(conditions);
      ++written;
    }
    Json taints = DesiredTaints(node, now_text);
    const Json& current = Member(Member(node, "spec"), "taints");
    if (taints == current || (taints.empty() && current.is_null())) continue;
    auto r = rest_->Patch(path, {{"spec", {{"taints", taints}}}}, kMergePatch);
    if (!r.ok()) {
      Log(options_, fmt::format("node {}: updating taints: {}", name, r.error().message));
      continue;
    }
    ++written;
  }
  probes_ = std::move(seen);  // deleted nodes are forgotten
  return written;
}

// ---------------------------------------------------------------- taint eviction

TaintEvictionController::TaintEvictionController(client::RestClient* rest, SharedInformer* nodes,
                                                 SharedInformer* pods, ControllerOptions options)
    : rest_(rest), nodes_(nodes), pods_(pods), options_(std::move(options)) {}

void TaintEvictionController::Start() {
  ticker_.Start(NodeMonitorPeriod(options_.node_monitor_grace_period), [this] { EvictOnce(); });
}

void TaintEvictionController::Stop() { ticker_.Stop(); }

int TaintEvictionController::EvictOnce() {
  std::lock_guard lock(mu_);
  std::map<std::string, std::vector<NoExecuteTaint>> tainted;
  for (const Object& obj : nodes_->List()) {
    auto taints = NoExecuteTaints(DocOf(obj));
    if (!taints.empty()) tainted[NameOf(DocOf(obj))] = std::move(taints);
  }
  if (tainted.empty()) {
    evicted_.clear();
    return 0;
  }
  const UnixTime now = Seconds(options_.clock->Now());
  std::set<std::string> still;
  int deleted = 0;
  for (const Object& obj : pods_->List()) {
    const auto* held = std::get_if<std::shared_ptr<const Pod>>(&obj);
    if (!held || !*held) continue;
    const Pod& pod = **held;
    auto node = tainted.find(pod.spec.node_name);
    if (node == tainted.end() || pod.metadata.deletion_timestamp) continue;
    auto at = EvictionTime(pod.spec.tolerations, node->second);
    if (!at || *at > now) continue;
    if (evicted_.count(pod.metadata.uid)) {
      still.insert(pod.metadata.uid);
      continue;
    }
    auto r = rest_->Delete(
        fmt::format("/api/v1/namespaces/{}/pods/{}", pod.metadata.namespace_, pod.metadata.name),
        {{"preconditions", {{"uid", pod.metadata.uid}}}});
    if (!r.ok() && r.error().code != ErrorCode::kNotFound) {
      Log(options_, fmt::format("evicting pod {}/{}: {}", pod.metadata.namespace_,
                                pod.metadata.name, r.error().message));
      continue;
    }
    Log(options_, fmt::format("evicted pod {}/{} from tainted node {}", pod.metadata.namespace_,
                              pod.metadata.name, pod.spec.node_name));
    still.insert(pod.metadata.uid);
    ++deleted;
  }
  evicted_ = std::move(still);
  return deleted;
}

}  // namespace berth::controllers
