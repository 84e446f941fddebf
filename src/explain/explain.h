// `berth explain`: why a pod is where it is, or pending, and the smallest changes that would
// place it. One read-only scheduling attempt for the pod over the cluster (other pending pods
// do not take part), then, for a pod that fits nowhere, candidate changes derived from the
// rejections — a toleration to add, a node to uncordon, a label a node lacks for the pod's
// nodeSelector or required node affinity, the zone of the pod's volume, resources to free on a
// node (with the lower-priority pods preemption would evict), the maxSkew a topology spread
// constraint would need, the pods required anti-affinity keeps it apart from, and for required
// pod affinity the matching pod its domain lacks (a running pod's labels, a new pod, a node's
// topology label, or the pod's own labels when it would be the first of its group) — each applied
// to a copy of the cluster and checked by scheduling again; only changes that make the pod fit are
// shown, ranked by how many nodes they open, then by how little they change.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "api/codec.h"
#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"
#include "scheduler/scheduler.h"

namespace berth::explain {

struct Suggestion {
  // toleration, uncordon, label, volume-zone, resources, spread-skew, anti-affinity,
  // pod-affinity
  std::string kind;
  std::string description;  // one line, imperative
  std::string yaml;         // the pod change to apply, when it is the pod that changes
  std::string node;         // the node that changes, when it is a node
  int opens_nodes = 0;      // nodes the pod fits on after the change
  int64_t cost = 0;         // how much changes (resources: the shortfall; else 0)
  // resources: the lower-priority pods on the node preemption would evict to make the room
  // (empty when evicting them would not be enough); anti-affinity: the pods to move.
  std::vector<std::string> victims;
  // pod-affinity: which change — label-pod (a running pod's labels), new-pod (a pod to run in
  // the domain), label-node (a node's topology label), label-self (the pod's own labels).
  std::string change;
  std::string domain;       // pod-affinity: the topology domain, "key=value[,key=value]"
  std::string running_pod;  // label-pod: the running pod whose labels change
  std::string new_pod;      // new-pod: the pod to run (YAML: namespace, labels, nodeSelector)
};

struct Explanation {
  std::string pod;     // namespace/name
  std::string result;  // Scheduled, Unschedulable, Error, Bound (already on a node)
  std::string node;
  std::string message;
  std::optional<SchedulingAttempt> attempt;
  std::vector<Suggestion> suggestions;
};

struct ExplainOptions {
  uint64_t seed = 1;
  std::string config_source = "default configuration";
  size_t max_suggestions = 5;
  // Candidate changes tried per kind (each is one scheduling attempt over the cluster).
  size_t max_candidates_per_kind = 8;
};

Result<Explanation> Explain(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::vector<Object>& objects, const std::string& pod_key,
                            const ExplainOptions& options);

nlohmann::json ToJson(const Explanation& e);
std::string ToText(const Explanation& e);

}  // namespace berth::explain
