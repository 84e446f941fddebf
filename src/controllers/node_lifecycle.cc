#include "controllers/node_lifecycle.h"

#include <fmt/format.h>

#include <algorithm>

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

class Ticker::SimProbe final : public simtime::Participant {
 public:
  explicit SimProbe(Ticker* t) : t_(t) {}
  bool Idle() const override {
    std::lock_guard lock(t_->mu_);
    return t_->stopping_ || (!t_->running_ && t_->clock_->Now() < t_->next_);
  }
  std::optional<TimePoint> NextDue() const override {
    std::lock_guard lock(t_->mu_);
    if (t_->stopping_) return std::nullopt;
    return t_->next_;
  }
  void Wake() override {
    std::lock_guard lock(t_->mu_);
    t_->cv_.notify_all();
  }
  std::string Describe() const override { return t_->what_; }

 private:
  Ticker* t_;
};

Ticker::Ticker() = default;
Ticker::~Ticker() { Stop(); }

void Ticker::Start(const Clock* clock, Duration period, std::function<void()> round,
                   std::string what) {
  clock_ = clock;
  what_ = std::move(what);
  auto* sim = simtime::AsSimulated(clock);
  {
    std::lock_guard lock(mu_);
    running_ = true;  // the first round runs at once
    next_ = clock->Now();
  }
  if (sim) {
    probe_ = std::make_unique<SimProbe>(this);
    registration_ = std::make_unique<simtime::ParticipantRegistration>(clock, probe_.get());
  }
  thread_ = std::thread([this, sim, period, round = std::move(round)] {
    std::unique_lock lock(mu_);
    while (!stopping_) {
      running_ = true;
      lock.unlock();
      round();
      lock.lock();
      next_ = clock_->Now() + period;
      running_ = false;
      if (sim) sim->NoteActivity();
      if (!sim) {
        cv_.wait_for(lock, period, [&] { return stopping_; });
        continue;
      }
      // Simulated: the clock's owner moves time; a jump wakes this wait.
      while (!stopping_ && clock_->Now() < next_) cv_.wait_for(lock, std::chrono::seconds(1));
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
  registration_.reset();
}

// ---------------------------------------------------------------- node lifecycle

NodeLifecycleController::NodeLifecycleController(client::RestClient* rest, SharedInformer* nodes,
                                                 SharedInformer* leases, ControllerOptions options)
    : rest_(rest), nodes_(nodes), options_(std::move(options)) {
  // Each node Lease's renewTime as its renewals arrive, read from the event's document while it
  // is at hand: a round then reads no Lease.
  auto renewed = [this](const Object& o) {
    const Json& doc = DocOf(o);
    const Json& meta = Member(doc, "metadata");
    if (StringAt(meta, "namespace") != kNodeLeaseNamespace) return;
    std::string renew = StringAt(Member(doc, "spec"), "renewTime");
    std::lock_guard lock(renewals_mu_);
    renewals_[StringAt(meta, "name")] = std::move(renew);
  };
  client::InformerHandlers h;
  h.on_add = renewed;
  h.on_update = [renewed](const Object&, const Object& o) { renewed(o); };
  h.on_delete = [this](const Object& o) {
    const Json& meta = Member(DocOf(o), "metadata");
    if (StringAt(meta, "namespace") != kNodeLeaseNamespace) return;
    std::lock_guard lock(renewals_mu_);
    renewals_.erase(StringAt(meta, "name"));
  };
  leases->AddHandlers(std::move(h));
}

std::string NodeLifecycleController::RenewTimeOf(const std::string& node) const {
  std::lock_guard lock(renewals_mu_);
  auto it = renewals_.find(node);
  return it == renewals_.end() ? std::string() : it->second;
}

void NodeLifecycleController::Start() {
  ticker_.Start(options_.clock, NodeMonitorPeriod(options_.node_monitor_grace_period),
                [this] { MonitorOnce(); });
}

void NodeLifecycleController::Stop() { ticker_.Stop(); }

int NodeLifecycleController::MonitorOnce() {
  std::lock_guard lock(mu_);
  const TimePoint now = options_.clock->Now();
  const std::string now_text = FormatTimestamp(Seconds(now));
  ++monitor_round_;
  int written = 0;
  for (const Object& obj : nodes_->List()) {
    const Json& doc = DocOf(obj);
    auto* typed = std::get_if<std::shared_ptr<const Node>>(&obj);
    const std::string name = typed && *typed ? (*typed)->metadata.name : NameOf(doc);
    Probe& probe = probes_[name];
    // A round visits every node: its document is read again only when the informer holds a
    // new one (the probe keeps the one it read, so its address cannot be reused).
    bool beat = probe.round == 0;
    if (beat || &doc != &DocOf(probe.node)) {
      probe.node = obj;
      std::string node_beat = NodeHeartbeat(doc, nullptr);
      beat |= node_beat != probe.node_heartbeat;
      probe.node_heartbeat = std::move(node_beat);
      probe.ready_unknown = ReadyStatus(doc) == "Unknown";
      probe.taints_current = TaintsCurrent(doc, now_text);
    }
    std::string renew = RenewTimeOf(name);
    beat |= renew != probe.renew_time;
    probe.renew_time = std::move(renew);
    if (beat) probe.observed = now;
    probe.round = monitor_round_;
    const bool silent =
        now - probe.observed > options_.node_monitor_grace_period && !probe.ready_unknown;
    if (!silent && probe.taints_current) continue;
    written += UpdateNode(doc, name, silent, now_text);
  }
  // Deleted nodes are forgotten.
  std::erase_if(probes_, [&](const auto& p) { return p.second.round != monitor_round_; });
  return written;
}

bool NodeLifecycleController::TaintsCurrent(const Json& node, const std::string& now_text) {
  Json taints = DesiredTaints(node, now_text);
  const Json& current = Member(Member(node, "spec"), "taints");
  return taints == current || (taints.empty() && current.is_null());
}

int NodeLifecycleController::UpdateNode(const Json& doc, const std::string& name, bool silent,
                                        const std::string& now_text) {
  const Json* node = &doc;
  std::optional<Json> marked;
  const std::string path = "/api/v1/nodes/" + name;
  int written = 0;
  if (silent) {
    Json conditions = UnknownConditions(doc, now_text);
    auto r =
        rest_->Patch(path + "/status", {{"status", {{"conditions", conditions}}}}, kMergePatch);
    if (!r.ok()) {
      Log(options_, fmt::format("node {}: marking it Unknown: {}", name, r.error().message));
      return written;
    }
    Log(options_, fmt::format("node {}: no heartbeat for {} s, Ready is Unknown", name,
                              std::chrono::duration_cast<std::chrono::seconds>(
                                  options_.node_monitor_grace_period)
                                  .count()));
    // The taints follow the condition just written, before the informer shows it.
    marked = doc;
    (*marked)["status"]["conditions"] = std::move(conditions);
    node = &*marked;
    ++written;
  }
  Json taints = DesiredTaints(*node, now_text);
  const Json& current = Member(Member(*node, "spec"), "taints");
  if (taints == current || (taints.empty() && current.is_null())) return written;
  auto r = rest_->Patch(path, {{"spec", {{"taints", taints}}}}, kMergePatch);
  if (!r.ok()) {
    Log(options_, fmt::format("node {}: updating taints: {}", name, r.error().message));
    return written;
  }
  return written + 1;
}

// ---------------------------------------------------------------- taint eviction

TaintEvictionController::TaintEvictionController(client::RestClient* rest, SharedInformer* nodes,
                                                 SharedInformer* pods, ControllerOptions options)
    : rest_(rest), nodes_(nodes), pods_(pods), options_(std::move(options)) {}

void TaintEvictionController::Start() {
  ticker_.Start(options_.clock, NodeMonitorPeriod(options_.node_monitor_grace_period),
                [this] { EvictOnce(); });
}

void TaintEvictionController::Stop() { ticker_.Stop(); }

int TaintEvictionController::EvictOnce() {
  std::lock_guard lock(mu_);
  std::map<std::string, std::vector<NoExecuteTaint>> tainted;
  for (const Object& obj : nodes_->List()) {
    // Most nodes carry no NoExecute taint: the decoded node says so without reading its
    // document.
    if (auto* n = std::get_if<std::shared_ptr<const Node>>(&obj); n && *n) {
      const auto& t = (*n)->spec.taints;
      if (std::none_of(t.begin(), t.end(), [](const Taint& x) { return x.effect == "NoExecute"; }))
        continue;
    }
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
    auto at = EvictionTime(pod.spec.tolerations, node->second,
                           options_.taint_toleration_comparison_operators);
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
