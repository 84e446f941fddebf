#include "scenario/cluster_watch.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "apiserver/selectors.h"

namespace berth::scenario {
namespace {

using Json = nlohmann::json;

std::shared_ptr<const Pod> PodOf(const Object* o) {
  if (!o) return nullptr;
  auto p = std::get_if<std::shared_ptr<const Pod>>(o);
  return p ? *p : nullptr;
}

std::shared_ptr<const Node> NodeOf(const Object* o) {
  if (!o) return nullptr;
  auto p = std::get_if<std::shared_ptr<const Node>>(o);
  return p ? *p : nullptr;
}

// The Ready condition's status ("True", "False", "Unknown"; "" when absent).
std::string ReadyStatus(const Node& node) {
  if (!node.raw) return "";
  const Json& conditions = node.raw->value("status", Json::object()).value("conditions", Json());
  if (!conditions.is_array()) return "";
  for (const Json& c : conditions) {
    if (c.value("type", "") == "Ready") return c.value("status", "");
  }
  return "";
}

bool Finished(const Pod& pod) {
  return pod.status.phase == "Succeeded" || pod.status.phase == "Failed";
}

// Why a pod is being deleted, from its DisruptionTarget condition (taint eviction, preemption).
std::string DisruptionReason(const Pod& pod) {
  for (const auto& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget" && c.status == "True") return c.reason;
  }
  return "";
}

int KindRank(const std::string& kind) {
  // Within one instant: the steps' actions, what the cluster did, then what the steps observed.
  static const char* kOrder[] = {"Step",         "NodeNotReady", "NodeReady",    "PodEvicted",
                                 "Preempted",    "PodDeleted",   "PodScheduled", "PodRunning",
                                 "PodSucceeded", "PodFailed",    "Wait",         "WaitTimedOut",
                                 "Checkpoint"};
  for (size_t i = 0; i < std::size(kOrder); ++i)
    if (kind == kOrder[i]) return static_cast<int>(i);
  return static_cast<int>(std::size(kOrder));
}

}  // namespace

bool operator<(const TimelineEntry& a, const TimelineEntry& b) {
  return std::make_tuple(a.at, KindRank(a.kind), a.step, a.object, a.detail) <
         std::make_tuple(b.at, KindRank(b.kind), b.step, b.object, b.detail);
}

ClusterWatch::ClusterWatch(client::RestClient* rest, const Clock* clock, TimePoint start)
    : rest_(rest), clock_(clock), start_(start) {}

ClusterWatch::~ClusterWatch() { Stop(); }

void ClusterWatch::Start() {
  client::InformerOptions po{.path = "/api/v1/pods", .kind = "Pod"};
  po.keep_documents = true;
  pods_ = std::make_unique<client::Informer>(
      rest_, po,
      client::InformerHandlers{[this](const Object& o) { OnPod(nullptr, &o); },
                               [this](const Object& a, const Object& b) { OnPod(&a, &b); },
                               [this](const Object& o) { OnPod(&o, nullptr); }});
  client::InformerOptions no{.path = "/api/v1/nodes", .kind = "Node"};
  no.keep_documents = true;
  nodes_ = std::make_unique<client::Informer>(
      rest_, no,
      client::InformerHandlers{[this](const Object& o) { OnNode(nullptr, &o); },
                               [this](const Object& a, const Object& b) { OnNode(&a, &b); },
                               [this](const Object& o) { OnNode(&o, nullptr); }});
  pods_->Start();
  nodes_->Start();
}

void ClusterWatch::Stop() {
  if (pods_) pods_->Stop();
  if (nodes_) nodes_->Stop();
}

bool ClusterWatch::HasSynced() const {
  return pods_ && nodes_ && pods_->HasSynced() && nodes_->HasSynced();
}

void ClusterWatch::Add(std::string kind, std::string object, std::string detail, bool step) {
  std::lock_guard lock(mu_);
  timeline_.push_back({clock_->Now() - start_, std::move(kind), std::move(object),
                       std::move(detail), step ? ++steps_ : 0});
}

double ClusterWatch::Seconds() const {
  return std::chrono::duration<double>(clock_->Now() - start_).count();
}

void ClusterWatch::OnPod(const Object* before, const Object* after) {
  auto old_pod = PodOf(before);
  auto pod = PodOf(after);
  {
    std::lock_guard lock(mu_);
    series_.OnPod(Seconds(), old_pod ? old_pod->raw.get() : nullptr,
                  pod ? pod->raw.get() : nullptr);
  }
  if (!pod) {
    // Gone: reported when the deletion began (below), or now if it was never seen deleting.
    if (old_pod && !old_pod->metadata.deletion_timestamp) Add("PodDeleted", old_pod->Key(), "");
    return;
  }
  const std::string key = pod->Key();
  const std::string was_node = old_pod ? old_pod->spec.node_name : "";
  if (pod->spec.node_name != was_node && !pod->spec.node_name.empty())
    Add("PodScheduled", key, pod->spec.node_name);
  if (pod->metadata.deletion_timestamp && !(old_pod && old_pod->metadata.deletion_timestamp)) {
    std::string reason = DisruptionReason(*pod);
    if (reason.empty()) reason = NoExecuteTaintOf(pod->spec.node_name);
    if (reason == "DeletionByTaintManager" || reason.rfind("taint ", 0) == 0) {
      Add("PodEvicted", key, fmt::format("from {} ({})", pod->spec.node_name, reason));
      std::lock_guard lock(mu_);
      ++evictions_;
    } else if (reason != "PreemptionByScheduler") {
      Add("PodDeleted", key, pod->spec.node_name.empty() ? "" : "from " + pod->spec.node_name);
    }
  }
  const std::string was_phase = old_pod ? old_pod->status.phase : "";
  if (pod->status.phase != was_phase && pod->status.phase != "Pending" &&
      !pod->status.phase.empty()) {
    Add("Pod" + pod->status.phase, key, pod->spec.node_name);
  }
}

std::string ClusterWatch::NoExecuteTaintOf(const std::string& node_name) const {
  if (node_name.empty() || !nodes_) return "";
  auto obj = nodes_->Get(node_name);
  auto node = obj ? NodeOf(&*obj) : nullptr;
  if (!node) return "";
  for (const auto& t : node->spec.taints) {
    if (t.effect == "NoExecute") return "taint " + t.key;
  }
  return "";
}

void ClusterWatch::OnNode(const Object* before, const Object* after) {
  auto old_node = NodeOf(before);
  auto node = NodeOf(after);
  {
    std::lock_guard lock(mu_);
    series_.OnNode(Seconds(), old_node ? old_node->raw.get() : nullptr,
                   node ? node->raw.get() : nullptr);
  }
  if (!node) return;
  const std::string was = old_node ? ReadyStatus(*old_node) : "";
  const std::string now = ReadyStatus(*node);
  if (now == was || now.empty()) return;
  if (now == "True") {
    if (old_node) Add("NodeReady", node->metadata.name, "");  // not at creation
  } else if (was == "True" || was.empty()) {
    Add("NodeNotReady", node->metadata.name, "Ready=" + now);
  }
}

void ClusterWatch::RecordStep(const Step& step, std::string detail) {
  const char* kind = step.kind == StepKind::kWait         ? "Wait"
                     : step.kind == StepKind::kCheckpoint ? "Checkpoint"
                                                          : "Step";
  Add(kind, step.where, std::move(detail), true);
}

void ClusterWatch::RecordPreemption(const std::string& victim, const std::string& preemptor) {
  Add("Preempted", victim, "by " + preemptor);
  std::lock_guard lock(mu_);
  ++preemptions_;
  series_.AddEvent(Seconds(), "Preempted", victim, "by " + preemptor);
}

void ClusterWatch::RecordWaitTimeout(const Step& step, const std::string& detail) {
  Add("WaitTimedOut", step.where, detail, true);
}

Summary ClusterWatch::Take(const std::string& name) const {
  Summary s;
  s.name = name;
  s.at = clock_->Now() - start_;
  for (const Object& o : nodes_->List()) {
    auto node = NodeOf(&o);
    if (!node) continue;
    s.pods_per_node[node->metadata.name] = 0;
    (ReadyStatus(*node) == "True" ? s.ready_nodes : s.not_ready_nodes)
        .push_back(node->metadata.name);
  }
  for (const Object& o : pods_->List()) {
    auto pod = PodOf(&o);
    if (!pod) continue;
    ++s.pods;
    if (pod->metadata.deletion_timestamp) {
      // Deleted, waiting for its kubelet (a stopped node's pods wait until it is back).
      ++s.terminating;
      continue;
    }
    ++s.pods_by_phase[pod->status.phase.empty() ? "Pending" : pod->status.phase];
    if (pod->spec.node_name.empty()) {
      if (!Finished(*pod)) s.pending.push_back(pod->Key());
    } else if (!Finished(*pod)) {
      ++s.pods_per_node[pod->spec.node_name];
    }
  }
  std::sort(s.pending.begin(), s.pending.end());
  std::lock_guard lock(mu_);
  s.preemptions = preemptions_;
  s.evictions = evictions_;
  s.timeline_entries = timeline_.size();
  return s;
}

std::vector<TimelineEntry> ClusterWatch::Timeline() const {
  std::lock_guard lock(mu_);
  std::vector<TimelineEntry> t = timeline_;
  std::stable_sort(t.begin(), t.end());
  return t;
}

nlohmann::json ClusterWatch::Series() const {
  std::lock_guard lock(mu_);
  return series_.ToJson(Seconds(), false);
}

bool ClusterWatch::Holds(const WaitSpec& wait, std::string* detail) const {
  if (wait.condition == WaitFor::kNodeReady || wait.condition == WaitFor::kNodeNotReady) {
    auto node = nodes_->Get(wait.node);
    auto n = node ? NodeOf(&*node) : nullptr;
    if (!n) {
      *detail = fmt::format("node {} does not exist", wait.node);
      return false;
    }
    const bool ready = ReadyStatus(*n) == "True";
    *detail = fmt::format("node {} is {}", wait.node, ready ? "Ready" : "NotReady");
    return ready == (wait.condition == WaitFor::kNodeReady);
  }
  auto selector = apiserver::ParseLabelSelector(wait.selector);
  if (!selector.ok()) {
    *detail = selector.error().message;
    return false;
  }
  // A pod counts as running on a Ready node only: one on a node that stopped still says
  // Running until it is evicted.
  std::set<std::string> ready_nodes;
  for (const Object& o : nodes_->List()) {
    auto node = NodeOf(&o);
    if (node && ReadyStatus(*node) == "True") ready_nodes.insert(node->metadata.name);
  }
  int matched = 0;
  std::vector<std::string> missing;
  for (const Object& o : pods_->List()) {
    auto pod = PodOf(&o);
    if (!pod || !pod->raw || pod->metadata.deletion_timestamp) continue;
    if (!wait.namespace_.empty() && pod->metadata.namespace_ != wait.namespace_) continue;
    if (*selector && !(*selector)(*pod->raw)) continue;
    ++matched;
    const bool ok = wait.condition == WaitFor::kPodsScheduled
                        ? !pod->spec.node_name.empty()
                        : pod->status.phase == "Running" && ready_nodes.count(pod->spec.node_name);
    if (!ok) missing.push_back(pod->Key());
  }
  if (matched < wait.count) {
    *detail = fmt::format("{} of {} pods exist", matched, wait.count);
    return false;
  }
  if (!missing.empty()) {
    std::sort(missing.begin(), missing.end());
    *detail = fmt::format(
        "{} pods not {}: {}{}", missing.size(),
        wait.condition == WaitFor::kPodsScheduled ? "scheduled" : "running",
        fmt::join(missing.begin(), missing.begin() + std::min<size_t>(5, missing.size()), ", "),
        missing.size() > 5 ? ", ..." : "");
    return false;
  }
  *detail = fmt::format("{} pods {}", matched,
                        wait.condition == WaitFor::kPodsScheduled ? "scheduled" : "running");
  return true;
}

}  // namespace berth::scenario
