// `berth explain`: why a pod is where it is, or pending, and the smallest changes that would
// place it. One read-only scheduling attempt for the pod over the cluster (other pending pods
// do not take part), then, for a pod that fits nowhere, what the profile's Filter plugins say of
// it (include/berth/framework/remedy.h, diagnosis.h): facts that explain it (no node large
// enough, a claim that is not bound and why) and the changes they propose for the nodes they
// rejected — a toleration, uncordoning, node labels for the nodeSelector or required node
// affinity, the zone of the pod's volume, resources to free or a larger node, the maxSkew a
// topology spread constraint would need, the pods required anti-affinity keeps it apart from,
// the matching pod required pod affinity lacks, or a plugin library's own — each applied to a
// copy of the cluster and checked by scheduling again through the profile's plugins; only
// changes that make the pod fit are shown, ranked by how many nodes they open, then by how
// little they change. Explain itself knows no plugin's rules.
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
  // toleration, uncordon, label, volume-zone, resources, larger-node, spread-skew,
  // anti-affinity, pod-affinity
  std::string kind;
  std::string description;  // one line, imperative
  std::string yaml;         // the pod change to apply, when it is the pod that changes
  // the node that changes, when it is a node (larger-node: the node the new one is like)
  std::string node;
  int opens_nodes = 0;  // nodes the pod fits on after the change
  int64_t cost = 0;     // how much changes (resources: the shortfall; else 0)
  // resources: the pods to evict, when all have a lower priority than the pod (those
  // preemption would evict; empty otherwise); anti-affinity: the pods to move.
  std::vector<std::string> victims;
  // pod-affinity: which change — label-pod (a running pod's labels), new-pod (a pod to run in
  // the domain), label-node (a node's topology label), label-self (the pod's own labels).
  std::string change;
  std::string domain;       // pod-affinity: the topology domain, "key=value[,key=value]"
  std::string running_pod;  // label-pod: the running pod whose labels change
  std::string new_pod;      // new-pod: the pod to run (YAML: namespace, labels, nodeSelector)
  // Suggestions with one non-empty key are shown as the best of them and a count; `same_change`
  // picks the words ("the same change on N other node(s)" or "N other change(s) like it").
  std::string merge_key;
  bool same_change = true;
};

// Why a Filter plugin rejected one node, in its own words (FilterDiagnosis,
// include/berth/framework/diagnosis.h): DynamicResources names the claim, request and selector
// no device satisfies, or the claims holding the matching devices.
struct NodeDiagnosis {
  std::string node;
  std::string plugin;
  std::vector<std::string> lines;
};

struct Explanation {
  std::string pod;     // namespace/name
  std::string result;  // Scheduled, Unschedulable, Error, Bound (already on a node)
  std::string node;
  std::string message;
  // The scheduler configuration the attempts ran with (ExplainOptions::config_source).
  std::string configuration;
  std::optional<SchedulingAttempt> attempt;
  // Facts that explain why the pod fits nowhere without being a change: "no node is large
  // enough: ...", or a claim that is not bound and why.
  std::vector<std::string> notes;
  std::vector<Suggestion> suggestions;
  std::vector<NodeDiagnosis> diagnoses;
};

struct ExplainOptions {
  uint64_t seed = 1;
  // Names the configuration: in errors, and in the explanation (Explanation::configuration).
  std::string config_source = "default configuration";
  size_t max_suggestions = 5;
  // Candidate changes tried per kind (each is one scheduling attempt over the cluster).
  size_t max_candidates_per_kind = 8;
};

// Where `berth up` publishes the configuration its scheduler runs with, so that `berth explain
// --kubeconfig` against it schedules with the same profiles and plugin arguments: a ConfigMap
// whose data holds the KubeSchedulerConfiguration (as /configz would show it) and its source.
inline constexpr std::string_view kPublishedConfigNamespace = "kube-system";
inline constexpr std::string_view kPublishedConfigName = "berth-scheduler-config";
inline constexpr std::string_view kPublishedConfigKey = "config.yaml";
inline constexpr std::string_view kPublishedSourceKey = "source";

Result<Explanation> Explain(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::vector<Object>& objects, const std::string& pod_key,
                            const ExplainOptions& options);

nlohmann::json ToJson(const Explanation& e);
std::string ToText(const Explanation& e);

}  // namespace berth::explain
