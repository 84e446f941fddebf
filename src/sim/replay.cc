#include "sim/replay.h"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <unordered_map>
#include <unordered_set>

#include "extender/http_extender.h"
#include "framework/csi_drivers.h"
#include "framework/in_memory_cluster.h"
#include "framework/volume_attachments.h"
#include "sim/recording.h"

namespace berth::sim {
namespace {

std::string ZoneOfNode(const Node& node) {
  for (const char* key :
       {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
    auto it = node.metadata.labels.find(key);
    if (it != node.metadata.labels.end()) return it->second;
  }
  return "";
}

// Follows the replayed pods: their outcomes (as the simulator's Recorder does), how long each
// waited on the simulated clock, and the pods preemption deleted.
class ReplayObserver final : public AttemptObserver {
 public:
  ReplayObserver(const FakeClock* clock, AttemptObserver* next) : clock_(clock), next_(next) {}

  void OnAttempt(const SchedulingAttempt& a) override {
    const std::string key = a.pod->Key();
    auto [it, first] = by_pod_.try_emplace(key);
    if (first) order_.push_back(key);
    PodResult& r = it->second;
    if (first) r.scheduler_name = a.pod->spec.scheduler_name;
    r.attempts = std::max(r.attempts, a.attempt);
    if (a.outcome == SchedulingAttempt::Outcome::kScheduled) {
      if (r.node.empty()) r.node = a.node;  // where it went first
      r.result = "Scheduled";
      r.message.clear();
      if (auto p = pending.find(key); p != pending.end()) {
        const double waited = std::chrono::duration<double>(clock_->Now() - p->second).count();
        wait_sum += waited;
        wait_max = std::max(wait_max, waited);
        ++waits;
        pending.erase(p);
      }
    } else if (r.result != "Scheduled") {
      r.result = a.outcome == SchedulingAttempt::Outcome::kError ? "Error" : "Unschedulable";
      r.message = a.message;
    }
    if (!a.victims.empty()) {
      r.victims.insert(r.victims.end(), a.victims.begin(), a.victims.end());
      if (a.nominating) r.nominated_node = a.nominating->node_name;
      for (const std::string& v : a.victims) {
        preempted.insert(v);
        pending.erase(v);
      }
    }
    if (next_) next_->OnAttempt(a);
  }

  SimulationResult Take() {
    SimulationResult out;
    out.results.reserve(order_.size());
    for (const std::string& key : order_) {
      PodResult r = std::move(by_pod_[key]);
      r.pod = key;
      out.results.push_back(std::move(r));
    }
    return out;
  }

  std::unordered_map<std::string, TimePoint> pending;  // pods waiting, since when
  std::unordered_set<std::string> preempted;           // deleted here: later changes ignored
  double wait_sum = 0, wait_max = 0;
  int64_t waits = 0;

 private:
  const FakeClock* clock_;
  AttemptObserver* next_;
  std::unordered_map<std::string, PodResult> by_pod_;
  std::vector<std::string> order_;
};

// Counts the nodes in use as the cluster changes: sits between the cluster and the scheduler,
// sees every change the cluster reports (the replayed events, this configuration's bindings,
// its preemptions' deletions) and passes it on unchanged. A node is in use while it exists
// and holds at least one pod (HoldsNode).
class NodeUseTally final : public ClusterEventHandler, public DraEventHandler {
 public:
  explicit NodeUseTally(Scheduler* sched) : sched_(sched) {}

  void OnPodAdd(const Ptr<Pod>& pod) override {
    Count(*pod, 1);
    sched_->OnPodAdd(pod);
  }
  void OnPodUpdate(const Ptr<Pod>& old_pod, const Ptr<Pod>& new_pod) override {
    Count(*old_pod, -1);
    Count(*new_pod, 1);
    sched_->OnPodUpdate(old_pod, new_pod);
  }
  void OnPodDelete(const Ptr<Pod>& pod) override {
    Count(*pod, -1);
    sched_->OnPodDelete(pod);
  }
  void OnNodeAdd(const Ptr<Node>& node) override {
    {
      std::lock_guard lock(mu_);
      if (nodes_.insert(node->metadata.name).second && holders_[node->metadata.name] > 0) ++in_use_;
    }
    sched_->OnNodeAdd(node);
  }
  void OnNodeUpdate(const Ptr<Node>& old_node, const Ptr<Node>& new_node) override {
    sched_->OnNodeUpdate(old_node, new_node);
  }
  void OnNodeDelete(const Ptr<Node>& node) override {
    {
      std::lock_guard lock(mu_);
      if (nodes_.erase(node->metadata.name) && holders_[node->metadata.name] > 0) --in_use_;
    }
    sched_->OnNodeDelete(node);
  }
  void OnObjectEvent(const ClusterEvent& event, const EventObject& old_object,
                     const EventObject& new_object) override {
    sched_->OnObjectEvent(event, old_object, new_object);
  }
  void OnDraEvent(const DraClusterEvent& event, const DraEventObject& old_object,
                  const DraEventObject& new_object) override {
    sched_->OnDraEvent(event, old_object, new_object);
  }

  int in_use() const {
    std::lock_guard lock(mu_);
    return in_use_;
  }

 private:
  void Count(const Pod& pod, int delta) {
    if (pod.spec.node_name.empty() || !HoldsNode(pod)) return;
    std::lock_guard lock(mu_);
    int& n = holders_[pod.spec.node_name];
    const bool was = n > 0;
    n += delta;
    if (was != (n > 0) && nodes_.count(pod.spec.node_name)) in_use_ += was ? -1 : 1;
  }

  Scheduler* sched_;
  mutable std::mutex mu_;  // a cluster may report from its writers' threads
  std::unordered_set<std::string> nodes_;
  std::unordered_map<std::string, int> holders_;  // per node name, existing or not
  int in_use_ = 0;
};

class Replayer {
 public:
  Replayer(Scheduler* sched, InMemoryCluster* cluster, ReplayObserver* observer, bool keep_raw)
      : sched_(sched), cluster_(cluster), observer_(observer), keep_raw_(keep_raw) {}

  VoidResult Apply(RecordedEvent& ev, TimePoint now) {
    const std::string where = fmt::format("line {}", ev.line);
    if (ev.kind == "Pod") return ApplyPod(ev, now, where);
    if (ev.kind == "Node") {
      if (ev.type == RecordedEvent::Type::kDelete) {
        cluster_->RemoveNode(ev.name);
        return {};
      }
      BERTH_TRY_ASSIGN(obj, DecodeObject(std::move(ev.resource), where, Decode()));
      if (auto* n = std::get_if<std::shared_ptr<const Node>>(&obj)) cluster_->AddNode(*n);
      return {};
    }
    if (ev.type == RecordedEvent::Type::kDelete) return {};  // not replayed (see replay.h)
    auto obj = DecodeObject(std::move(ev.resource), where, Decode());
    if (!obj.ok()) return {};  // a kind the scheduler does not model
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if constexpr (std::is_same_v<T, std::shared_ptr<const Namespace>>) {
            cluster_->AddNamespace(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const Service>>) {
            cluster_->AddService(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const PersistentVolume>>) {
            cluster_->AddPV(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const PersistentVolumeClaim>>) {
            cluster_->AddPVC(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const StorageClass>>) {
            cluster_->AddStorageClass(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const CSINode>>) {
            cluster_->AddCSINode(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const PodDisruptionBudget>>) {
            cluster_->AddPDB(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const PriorityClass>>) {
            cluster_->AddPriorityClass(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const ReplicaSet>>) {
            cluster_->AddReplicaSet(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const StatefulSet>>) {
            cluster_->AddStatefulSet(o);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const UnknownObject>>) {
            if (o->kind == "CSIDriver" && o->raw)
              cluster_->AddCSIDriver(o->name, CSIDriverInfoOf(*o->raw));
            else if (o->kind == "VolumeAttachment" && o->raw)
              cluster_->AddVolumeAttachment(VolumeAttachmentInfoOf(*o->raw));
          }
        },
        *obj);
    return {};
  }

 private:
  DecodeOptions Decode() const {
    DecodeOptions o;
    o.keep_raw = keep_raw_;
    return o;
  }

  VoidResult ApplyPod(RecordedEvent& ev, TimePoint now, const std::string& where) {
    const std::string key = ev.namespace_ + "/" + ev.name;
    if (ev.type == RecordedEvent::Type::kDelete) {
      Forget(key, ev.namespace_, ev.name);
      return {};
    }
    if (observer_->preempted.count(key)) return {};
    BERTH_TRY_ASSIGN(pod, DecodePod(ev.resource, where));
    if (pod.status.phase == "Succeeded" || pod.status.phase == "Failed") {
      Forget(key, ev.namespace_, ev.name);
      return {};
    }
    // Extenders are sent whole objects; nothing else reads the document.
    if (keep_raw_) {
      pod.raw = std::make_shared<const nlohmann::json>(std::move(ev.resource));
    } else {
      pod.raw.reset();
    }
    auto current = cluster_->GetPod(ev.namespace_, ev.name);
    if (!current) {
      // Bound when it appeared, or for a scheduler not replayed here: its recorded node holds.
      if (!pod.spec.node_name.empty() || !sched_->ProfileFor(pod)) {
        fixed_.insert(key);
      } else {
        observer_->pending.emplace(key, now);
      }
      cluster_->AddPod(std::make_shared<const Pod>(std::move(pod)));
      return {};
    }
    if (!fixed_.count(key)) {
      // This configuration's placement stands; the recorded scheduler's does not.
      pod.spec.node_name = current->spec.node_name;
      pod.status.nominated_node_name = current->status.nominated_node_name;
    }
    cluster_->UpdatePod(std::make_shared<const Pod>(std::move(pod)));
    return {};
  }

  void Forget(const std::string& key, const std::string& ns, const std::string& name) {
    if (cluster_->GetPod(ns, name)) cluster_->RemovePod(ns, name);
    observer_->pending.erase(key);
    fixed_.erase(key);
  }

  Scheduler* sched_;
  InMemoryCluster* cluster_;
  ReplayObserver* observer_;
  const bool keep_raw_;
  std::unordered_set<std::string> fixed_;
};

void CollectFinalState(InMemoryCluster& cluster, ReplayResult* out) {
  for (const auto& n : cluster.ListNodes()) {
    out->node_zones.emplace_back(n->metadata.name, ZoneOfNode(*n));
    out->per_node.try_emplace(n->metadata.name, 0);
    out->objects.push_back(Object(n));
  }
  for (const auto& p : cluster.ListPods()) {
    if (p->spec.node_name.empty()) continue;
    ++out->per_node[p->spec.node_name];
    if (HoldsNode(*p)) ++out->holders_per_node[p->spec.node_name];
    out->objects.push_back(Object(p));
  }
  for (const auto& ns : cluster.ListNamespaces()) out->objects.push_back(Object(ns));
  for (const auto& pv : cluster.ListPVs()) out->objects.push_back(Object(pv));
  for (const auto& pdb : cluster.ListPDBs()) out->objects.push_back(Object(pdb));
}

}  // namespace

std::vector<TimeSample> Downsample(const std::vector<TimeSample>& samples, size_t max) {
  if (samples.size() <= max || max < 2) return samples;
  const int64_t first = samples.front().at_ms, last = samples.back().at_ms;
  const double width = static_cast<double>(last - first + 1) / static_cast<double>(max);
  std::vector<TimeSample> out;
  for (const TimeSample& s : samples) {
    const auto bucket = static_cast<int64_t>((s.at_ms - first) / width);
    if (!out.empty() && static_cast<int64_t>((out.back().at_ms - first) / width) == bucket) {
      TimeSample& b = out.back();
      b.pending = std::max(b.pending, s.pending);
      b.nodes_in_use = std::max(b.nodes_in_use, s.nodes_in_use);
      b.preemptions = std::max(b.preemptions, s.preemptions);  // cumulative: the last
    } else {
      out.push_back(s);
    }
  }
  return out;
}

Result<ReplayResult> Replay(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::string& recording, const ReplayOptions& options) {
  BERTH_TRY_ASSIGN(reader, RecordingReader::Open(recording));
  InMemoryCluster cluster;
  FakeClock clock;
  // One thread: a replay's cycles are small (a pod at a time, most results reused), so waking
  // workers costs more than it saves, and every freed page then interrupts them. Parallelism
  // never changes a decision.
  config::SchedulerConfiguration run_config = config;
  run_config.parallelism = 1;
  SchedulerOptions so;
  so.config = &run_config;
  so.registry = &registry;
  so.client = &cluster;
  so.clock = &clock;
  so.seed = options.seed;
  so.opportunistic_batching = options.opportunistic_batching;
  auto extenders = extender::BuildExtenders(run_config.extenders);
  if (!extenders.ok())
    return Error{fmt::format("{}: {}", options.config_source, extenders.error().message)};
  so.extenders = std::move(extenders).value();
  so.inline_binding = true;
  so.record_details = options.record_details;
  auto sched_r = Scheduler::Create(so);
  if (!sched_r.ok())
    return Error{fmt::format("{}: {}", options.config_source, sched_r.error().message)};
  Scheduler& sched = **sched_r;
  NodeUseTally tally(&sched);
  cluster.SetEventHandler(&tally);
  ReplayObserver observer(&clock, options.observer);
  sched.SetObserver(&observer);
  Replayer replayer(&sched, &cluster, &observer, !run_config.extenders.empty());

  ReplayResult out;
  std::vector<TimeSample> samples;
  std::optional<TimePoint> start;
  bool stopped = false;
  IdleRunHooks hooks;
  hooks.after_cycle = [&] {
    stopped = options.keep_running && !options.keep_running();
    return !stopped;
  };
  while (!stopped) {
    BERTH_TRY_ASSIGN(next, reader->Next());
    if (!next) break;
    if (!start) {
      start = next->time;
      clock.Set(next->time);
    }
    if (next->time > clock.Now()) clock.Set(next->time);
    if (auto r = replayer.Apply(*next, clock.Now()); !r.ok())
      return Error{fmt::format("{}: {}", recording, r.error().message)};
    ++out.events;
    sched.RunUntilIdle(clock, hooks);
    // Read from the cluster as it stands: the pods still waiting, the nodes the tally saw
    // hold pods, the victims the scheduler deleted.
    TimeSample now{0, static_cast<int>(observer.pending.size()), tally.in_use(),
                   cluster.write_counts().deletes};
    if (samples.empty() || samples.back().pending != now.pending ||
        samples.back().nodes_in_use != now.nodes_in_use ||
        samples.back().preemptions != now.preemptions) {
      now.at_ms =
          std::chrono::duration_cast<std::chrono::milliseconds>(clock.Now() - *start).count();
      samples.push_back(now);
    }
  }
  out.results = observer.Take();
  out.over_time = Downsample(samples, options.max_samples);
  for (const auto& [key, since] : observer.pending) out.still_pending.push_back(key);
  std::sort(out.still_pending.begin(), out.still_pending.end());
  out.mean_pending_seconds = observer.waits ? observer.wait_sum / observer.waits : 0;
  out.max_pending_seconds = observer.wait_max;
  CollectFinalState(cluster, &out);
  return out;
}

}  // namespace berth::sim
