#include "sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <unordered_map>

#include "api/device_taint_rule.h"
#include "extender/http_extender.h"
#include "framework/in_memory_cluster.h"

namespace berth::sim {
namespace {

// Collects every attempt, keyed by pod.
class Recorder final : public AttemptObserver {
 public:
  Recorder(bool keep_last, AttemptObserver* next) : keep_last_(keep_last), next_(next) {}
  void OnAttempt(const SchedulingAttempt& a) override {
    auto [it, first] = by_pod_.try_emplace(a.pod->Key());
    if (first) order_.push_back(a.pod->Key());
    PodResult& r = it->second;
    r.attempts = std::max(r.attempts, a.attempt);
    switch (a.outcome) {
      case SchedulingAttempt::Outcome::kScheduled:
        r.result = "Scheduled";
        r.node = a.node;
        r.message.clear();
        break;
      case SchedulingAttempt::Outcome::kUnschedulable:
        r.result = "Unschedulable";
        r.message = a.message;
        break;
      case SchedulingAttempt::Outcome::kError:
        r.result = "Error";
        r.message = a.message;
        break;
    }
    // A nomination and its victims stay part of the story after the pod finally binds.
    if (a.nominating && !a.nominating->node_name.empty()) {
      r.nominated_node = a.nominating->node_name;
      r.victims = a.victims;
    }
    if (keep_last_) {
      r.last = a;
      // The cycle's NodeInfo pointers die with the scheduler; keep only the names.
      r.last->scores.nodes.clear();
    }
    if (a.outcome != SchedulingAttempt::Outcome::kScheduled) last_failed_ = a.pod;
    if (next_) next_->OnAttempt(a);
  }
  std::unordered_map<std::string, PodResult>& results() { return by_pod_; }
  // Pods in the order of their first attempt (queue order).
  const std::vector<std::string>& order() const { return order_; }
  std::shared_ptr<const Pod> TakeLastFailed() { return std::exchange(last_failed_, nullptr); }

 private:
  std::unordered_map<std::string, PodResult> by_pod_;
  std::vector<std::string> order_;
  std::shared_ptr<const Pod> last_failed_;
  const bool keep_last_;
  AttemptObserver* const next_;
};

TimePoint FromUnix(UnixTime t) { return TimePoint{std::chrono::seconds(t)}; }

// The input objects, added to the cluster but for the pods, which come back split into bound and
// pending ones; with the latest creation timestamp and whose it is.
struct LoadedObjects {
  UnixTime latest = 0;
  std::string latest_object;
  std::vector<std::shared_ptr<const Pod>> bound, pending;
  std::vector<std::shared_ptr<const Node>> nodes;  // file order: it shapes the node tree
  std::optional<Error> error;                      // the first object that could not be added
};

// Whether `o` is a DeviceTaintRule that does not decode; the first such error goes to `error`.
// (The cluster skips such a rule; a simulation reports it.)
template <class T>
bool MalformedRule(const T& o, std::optional<Error>* error) {
  if constexpr (std::is_same_v<T, std::shared_ptr<const UnknownObject>>) {
    if (o->kind != "DeviceTaintRule" || !o->raw) return false;
    auto rule = DecodeDeviceTaintRule(*o->raw, "DeviceTaintRule " + o->name);
    if (rule.ok()) return false;
    if (!*error) *error = rule.error();
    return true;
  }
  return false;
}

LoadedObjects AddObjects(const std::vector<Object>& objects, InMemoryCluster& cluster) {
  LoadedObjects out;
  for (const auto& obj : objects) {
    std::visit(
        [&](const auto& o) {
          using T = std::decay_t<decltype(o)>;
          if (MalformedRule(o, &out.error)) return;
          if constexpr (!std::is_same_v<T, std::shared_ptr<const UnknownObject>>) {
            if (o->metadata.creation_timestamp > out.latest) {
              out.latest = o->metadata.creation_timestamp;
              out.latest_object = o->metadata.namespace_.empty()
                                      ? o->metadata.name
                                      : o->metadata.namespace_ + "/" + o->metadata.name;
            }
          }
          if constexpr (std::is_same_v<T, std::shared_ptr<const Pod>>) {
            (o->spec.node_name.empty() ? out.pending : out.bound).push_back(o);
            return;  // bound pods are added once the nodes are in
          } else if constexpr (std::is_same_v<T, std::shared_ptr<const Node>>) {
            out.nodes.push_back(o);
          }
          cluster.AddObject(obj);
        },
        obj);
  }
  return out;
}

// One result per pending pod: the attempted ones in the order the queue gave them, then the others
// in input order, each with why it was never attempted.
std::vector<PodResult> Results(Recorder& recorder,
                               const std::vector<std::shared_ptr<const Pod>>& pending,
                               Scheduler& sched) {
  std::vector<PodResult> out;
  std::unordered_map<std::string, std::shared_ptr<const Pod>> by_key;
  for (const auto& p : pending) by_key[p->Key()] = p;
  out.reserve(pending.size());
  for (const auto& key : recorder.order()) {
    PodResult r = std::move(recorder.results()[key]);
    r.pod = key;
    r.scheduler_name = by_key[key]->spec.scheduler_name;
    out.push_back(std::move(r));
  }
  for (const auto& p : pending) {
    if (recorder.results().count(p->Key())) continue;
    PodResult r;
    r.pod = p->Key();
    r.scheduler_name = p->spec.scheduler_name;
    Framework* fw = sched.ProfileFor(*p);
    if (!fw) {
      r.result = "NotHandled";
      r.message = fmt::format("no profile for schedulerName \"{}\"", p->spec.scheduler_name);
    } else if (Status s = fw->RunPreEnqueuePlugins(*p); !s.IsSuccess()) {
      r.result = "Gated";
      r.message = s.Message();
    } else {
      r.result = "Unschedulable";
      r.message = "never attempted";
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

Result<SimulationResult> Simulate(const config::SchedulerConfiguration& config,
                                  const Registry& registry, const std::vector<Object>& objects,
                                  const SimulationOptions& options) {
  InMemoryCluster cluster;
  // The simulated clock starts after every timestamp in the input so that creation times
  // order the queue and nothing looks like it is from the future.
  LoadedObjects loaded = AddObjects(objects, cluster);
  if (loaded.error) return *loaded.error;
  const UnixTime latest = loaded.latest;
  const std::string& latest_object = loaded.latest_object;
  std::vector<std::shared_ptr<const Pod>>& bound = loaded.bound;
  std::vector<std::shared_ptr<const Pod>>& pending = loaded.pending;
  std::vector<std::shared_ptr<const Node>>& nodes = loaded.nodes;
  // Pods named by namespace/name must be unique, as in a cluster.
  {
    std::unordered_map<std::string, int> seen;
    for (const auto* list : {&bound, &pending})
      for (const auto& p : *list)
        if (seen[p->Key()]++)
          return Error{fmt::format("duplicate Pod {} in the manifests", p->Key())};
  }

  // The clock counts nanoseconds from 1970 in 64 bits: it ends in April 2262.
  constexpr UnixTime kLastRepresentable = 9'200'000'000;
  if (latest > kLastRepresentable) {
    return Error{
        fmt::format("{}: metadata.creationTimestamp {} is after 2261, which the "
                    "simulated clock cannot represent",
                    latest_object, FormatTimestamp(latest))};
  }
  FakeClock clock(FromUnix(latest));
  SchedulerOptions so;
  so.config = &config;
  so.registry = &registry;
  so.client = &cluster;
  so.clock = &clock;
  so.seed = options.seed;
  auto extenders = extender::BuildExtenders(config.extenders);
  if (!extenders.ok())
    return Error{fmt::format("{}: {}", options.config_source, extenders.error().message)};
  so.extenders = std::move(extenders).value();
  so.inline_binding = true;
  so.record_details = options.record_details;
  so.node_local_plugins = options.node_local_plugins;
  so.reuse_equivalent_pod_results = options.reuse_equivalent_pod_results;
  so.opportunistic_batching = options.opportunistic_batching;
  auto sched_r = Scheduler::Create(so);
  if (!sched_r.ok())
    return Error{fmt::format("{}: {}", options.config_source, sched_r.error().message)};
  Scheduler& sched = **sched_r;

  // Fill the scheduler's cache from what is already there, as informers' initial lists would.
  for (const auto& n : nodes) sched.OnNodeAdd(n);
  // The cluster and the cache hold the nodes now; the list's 16 bytes a node (and its spare
  // capacity) are not kept through the run.
  std::vector<std::shared_ptr<const Node>>().swap(nodes);
  for (const auto& p : bound) cluster.AddPod(p);
  for (const auto& p : bound) sched.OnPodAdd(p);
  std::vector<std::shared_ptr<const Pod>>().swap(bound);
  cluster.SetEventHandler(&sched);

  std::stable_sort(pending.begin(), pending.end(), [](const auto& a, const auto& b) {
    return a->metadata.creation_timestamp < b->metadata.creation_timestamp;
  });
  Recorder recorder(options.keep_last_attempts, options.observer);
  sched.SetObserver(&recorder);
  for (const auto& p : pending) cluster.AddPod(p);

  // The scheduler runs until nothing is left to try; a pod that failed too often is given up.
  IdleRunHooks hooks;
  hooks.after_cycle = [&] {
    auto failed = recorder.TakeLastFailed();
    const bool more = !options.keep_running || options.keep_running();
    if (!failed) return more;
    const PodResult& r = recorder.results()[failed->Key()];
    if (r.attempts >= options.max_attempts) sched.GiveUp(*failed);
    return more && !options.stop_at_first_failure;
  };
  sched.RunUntilIdle(clock, hooks);

  // Attempted pods in the order the queue gave them; then the others in input order.
  SimulationResult out;
  out.results = Results(recorder, pending, sched);
  return out;
}

}  // namespace berth::sim
