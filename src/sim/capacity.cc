#include "sim/capacity.h"

#include <fmt/format.h>

#include <map>

#include "api/codec.h"
#include "scheduler/equivalence.h"
#include "sim/simulator.h"

namespace berth::sim {
namespace {

// The reason given by the most nodes (the first in byte order among equals), as the
// attempt's FitError histogram counted them; "" when a PreFilter plugin or an error ended it.
std::string MostFrequentReason(const std::map<std::string, int>& reason_counts) {
  std::string best;
  int best_count = -1;
  for (const auto& [reason, n] : reason_counts) {
    if (n > best_count) {
      best_count = n;
      best = reason;
    }
  }
  return best;
}

std::string ZoneOf(const Node& node) {
  for (const char* key :
       {"topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone"}) {
    auto it = node.metadata.labels.find(key);
    if (it != node.metadata.labels.end()) return it->second;
  }
  return "";
}

// Whether a copy of `pod` passes or fails a node's filters, and scores it, from that node alone
// (and from what the copies do not change), so that a placement changes the results of its own
// node only. True when the template has no pod (anti-)affinity, no topology spread constraints
// and no volume claims (PVCs, ephemeral volumes: the copies would share or create claims), and
// neither a Service in its namespace nor a controller selects it (PodTopologySpread's default
// constraints would count the copies across nodes). Pods already in the cluster keep their
// (anti-)affinity terms and spreading where they are: the copies add none. Conservative: when
// this is false, every copy is filtered and scored in full.
bool CopiesAreNodeLocal(const Pod& pod, const std::vector<Object>& cluster) {
  if (pod.spec.affinity &&
      (pod.spec.affinity->pod_affinity || pod.spec.affinity->pod_anti_affinity))
    return false;
  if (!pod.spec.topology_spread_constraints.empty()) return false;
  for (const auto& v : pod.spec.volumes)
    if (v.persistent_volume_claim || v.ephemeral) return false;
  for (const auto& ref : pod.metadata.owner_references)
    if (ref.controller) return false;
  auto ns_of = [](const ObjectMeta& m) {
    return m.namespace_.empty() ? std::string("default") : m.namespace_;
  };
  for (const Object& o : cluster) {
    auto* svc = std::get_if<std::shared_ptr<const Service>>(&o);
    if (!svc || (*svc)->selector.empty() || ns_of((*svc)->metadata) != ns_of(pod.metadata))
      continue;
    bool selects = true;
    for (const auto& [k, v] : (*svc)->selector) {
      auto it = pod.metadata.labels.find(k);
      if (it == pod.metadata.labels.end() || it->second != v) selects = false;
    }
    if (selects) return false;
  }
  return true;
}

// The plugins that, for such copies, judge and score a node from the node itself and from
// cluster state the copies leave alone (NodeResourcesFit's and BalancedAllocation's usage, the
// node's ports, labels, taints, images, inline volumes; InterPodAffinity's and
// PodTopologySpread's terms of other pods): the scheduler's node-local plugins, vouched for
// here even in cycles where the spreading plugins run. Any other plugin turns reuse off.
std::vector<std::string> NodeLocalPlugins() {
  std::vector<std::string> out;
  for (std::string_view name : NodeLocalPluginNames()) out.emplace_back(name);
  return out;
}

}  // namespace

Result<CapacityResult> EstimateCapacity(const config::SchedulerConfiguration& config,
                                        const Registry& registry,
                                        const std::vector<Object>& cluster, const Pod& pod,
                                        const CapacityOptions& options) {
  if (options.max <= 0) return Error{fmt::format("--max: must be positive, got {}", options.max)};
  std::vector<Object> objects;
  objects.reserve(cluster.size() + options.max);
  std::map<std::string, std::string> zone_of;
  UnixTime latest = 0;
  for (const Object& o : cluster) {
    if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o)) {
      if ((*p)->spec.node_name.empty()) continue;  // pending pods do not compete
      latest = std::max(latest, (*p)->metadata.creation_timestamp);
    } else if (auto* n = std::get_if<std::shared_ptr<const Node>>(&o)) {
      zone_of[(*n)->metadata.name] = ZoneOf(**n);
    }
    objects.push_back(o);
  }
  const std::string ns = pod.metadata.namespace_.empty() ? "default" : pod.metadata.namespace_;
  const std::string base = pod.metadata.name.empty() ? "capacity" : pod.metadata.name;
  for (int i = 0; i < options.max; ++i) {
    auto copy = std::make_shared<Pod>(pod);
    copy->metadata.namespace_ = ns;
    copy->metadata.name = fmt::format("{}-capacity-{}", base, i);
    copy->metadata.uid = fmt::format("capacity-{}", i);
    copy->metadata.creation_timestamp = latest + 1;
    copy->spec.node_name.clear();
    copy->spec.preemption_policy = "Never";
    copy->raw = DocumentOnlyFields(copy->raw);
    objects.push_back(Object(std::shared_ptr<const Pod>(std::move(copy))));
  }
  SimulationOptions so;
  so.seed = options.seed;
  so.config_source = options.config_source;
  so.max_attempts = 1;
  so.stop_at_first_failure = true;
  so.record_details = false;
  // Each placement changes one node: the others keep their verdicts and raw scores.
  config::SchedulerConfiguration run_config = config;
  if (options.reuse_node_results && CopiesAreNodeLocal(pod, cluster)) {
    so.node_local_plugins = NodeLocalPlugins();
    // With the results reused, a cycle does a few nanoseconds per node: waking workers to share
    // it costs more than it saves (measured: 1.4 s wall and 2.1 s CPU with two threads, 1.0 s
    // and 1.0 s with one). Parallelism never changes a decision.
    run_config.parallelism = 1;
  }
  BERTH_TRY_ASSIGN(sim, Simulate(run_config, registry, objects, so));

  CapacityResult out;
  out.template_pod = fmt::format("{}/{}", ns, base);
  for (const PodResult& r : sim.results) {
    if (r.result == "Scheduled") {
      ++out.placed;
      ++out.per_node[r.node];
      ++out.per_zone[zone_of[r.node]];
    } else if (r.attempts > 0 && out.limit_message.empty()) {
      out.limit_message = r.message;
      if (r.last) out.limiting_reason = MostFrequentReason(r.last->filter_reason_counts);
    }
  }
  out.reached_max = out.placed == options.max;
  return out;
}

nlohmann::json ToJson(const CapacityResult& r) {
  nlohmann::json j = {{"pod", r.template_pod},
                      {"placed", r.placed},
                      {"reachedMax", r.reached_max},
                      {"perNode", r.per_node},
                      {"perZone", r.per_zone}};
  if (!r.limit_message.empty()) {
    j["limit"] = {{"message", r.limit_message}, {"reason", r.limiting_reason}};
  }
  return j;
}

std::string ToTable(const CapacityResult& r) {
  std::string out = fmt::format("{} more pod(s) like {} fit now", r.placed, r.template_pod);
  if (r.reached_max) out += " (stopped at --max)";
  out += ".\n";
  if (!r.limit_message.empty()) {
    out += fmt::format("Runs out first: {}\n  {}\n", r.limiting_reason, r.limit_message);
  }
  if (!r.per_zone.empty() && !(r.per_zone.size() == 1 && r.per_zone.begin()->first.empty())) {
    out += "\nZONE                 PODS\n";
    for (const auto& [zone, n] : r.per_zone)
      out += fmt::format("{:<20} {:>5}\n", zone.empty() ? "(none)" : zone, n);
  }
  if (!r.per_node.empty()) {
    out += "\nNODE                 PODS\n";
    for (const auto& [node, n] : r.per_node) out += fmt::format("{:<20} {:>5}\n", node, n);
  }
  return out;
}

}  // namespace berth::sim
