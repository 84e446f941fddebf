// FilterRemedies: an optional interface a Filter plugin may implement so that `berth explain`
// can ask it what would make a node it rejected pass — a change to the pod or to the node,
// worked out with the plugin's own rules. Explain finds it with dynamic_cast on the plugin
// (a plugin without it is simply not asked), applies each change to a copy of the cluster and
// shows it only when scheduling the pod again places it.
//
// A new interface, not a change to FilterPlugin: plugins built against an SDK without it keep
// working unchanged.
//
// FilterRemedySearch (SDK 10) is the fuller form: asked once about every node the plugin
// rejected, it may also change the cluster around the pod — bound pods that leave, change or
// join, nodes changed or added — and say which of its remedies are alike. The built-in Filter
// plugins explain themselves through it; a plugin implements one of the two interfaces.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "berth/api/objects.h"
#include "berth/export.h"
#include "berth/framework/status.h"

namespace berth {

struct BERTH_EXPORT FilterRemedy {
  // Short and stable, for grouping and for JSON ("toleration", "uncordon", ...).
  std::string kind;
  // One line, imperative ("add a toleration for the taint gpu=true:NoSchedule").
  std::string description;
  // The pod after the change, or null when the pod stays as it is.
  std::shared_ptr<const Pod> pod;
  // The node after the change (same name), or null when the node stays as it is.
  std::shared_ptr<const Node> node;
  // When the pod changes: the YAML to merge into it, for people.
  std::string pod_change;
  // How much changes, for ranking remedies that open as many nodes (0: least).
  int64_t cost = 0;
};

class BERTH_EXPORT FilterRemedies {
 public:
  virtual ~FilterRemedies() = default;
  // Changes after which this plugin's Filter would pass `node` for `pod`, given the rejection
  // it returned there; empty when it knows none. Called outside any scheduling cycle, on one
  // thread, with objects not in the cluster's caches.
  virtual std::vector<FilterRemedy> Remedies(const Pod& pod, const Node& node,
                                             const Status& rejection) const = 0;
};

// One change to the cluster (everything in it applied together) after which the pod should fit
// on at least one more node. Explain applies it to a copy of the cluster, schedules the pod
// again, and shows it only when the pod is placed.
struct BERTH_EXPORT ClusterRemedy {
  // Short and stable, for grouping and for JSON ("resources", "pod-affinity", ...).
  std::string kind;
  // Which change of the kind, when a kind has several (JSON "change": "label-pod", ...).
  std::string variant;
  // One line, imperative.
  std::string description;
  // The node the remedy is about (for a new node: the node it is like); empty when none.
  std::string node;

  // The changes. The pod after the change, or null when the pod stays as it is.
  std::shared_ptr<const Pod> pod;
  // Nodes after the change: one named like an existing node replaces it, another is added.
  std::vector<std::shared_ptr<const Node>> nodes;
  // Bound pods ("namespace/name") that leave the cluster.
  std::vector<std::string> removed_pods;
  // Bound pods after the change: one with the key of a bound pod replaces it, another joins.
  std::vector<std::shared_ptr<const Pod>> bound_pods;

  // For people. When the pod changes: the YAML to merge into it.
  std::string pod_change;
  // When a pod is to be run: its YAML (JSON "newPod").
  std::string new_pod;
  // Bound pods the remedy moves or evicts, to list (JSON "victims").
  std::vector<std::string> victims;
  // The topology domain the remedy is about, "key=value[,key=value]" (JSON "domain").
  std::string domain;
  // A bound pod the remedy changes (JSON "runningPod").
  std::string running_pod;

  // How much changes, for ranking remedies that open as many nodes (0: least).
  int64_t cost = 0;
  // Remedies with the same non-empty merge key that pass are shown as the first of them and a
  // count: "the same change on N other node(s)" when `same_change` (the change is one, made on
  // alike nodes), "N other change(s) like it" otherwise.
  std::string merge_key;
  bool same_change = true;
  // Of remedies with the same non-empty key, only the first that passes is kept (the others are
  // not tried): alternatives for one node, one of which is enough to show.
  std::string alternatives;
};

// A node the plugin's Filter rejected, with the status it returned there.
struct BERTH_EXPORT RejectedNode {
  const Node* node = nullptr;
  const Status* rejection = nullptr;
};

// What a plugin proposes for the nodes it rejected.
struct BERTH_EXPORT RemedyProposal {
  // Facts that explain the rejections without being a change ("no node is large enough: ...").
  std::vector<std::string> notes;
  // Candidate changes, most promising first.
  std::vector<ClusterRemedy> remedies;
};

class BERTH_EXPORT FilterRemedySearch {
 public:
  virtual ~FilterRemedySearch() = default;
  // Called once per explanation, outside any scheduling cycle, on one thread, with every node
  // this plugin's Filter rejected for `pod` (sorted by name; the pointers live for the call).
  // The rest of the cluster is read through the plugin's Handle listers, which hold the
  // cluster being explained. Explain tries at most `max_per_group` remedies of each kind and
  // variant (each costs a scheduling attempt), so a plugin may stop proposing after that many
  // distinct ones per group; it drops a remedy that changes nothing.
  virtual RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                         size_t max_per_group) const = 0;
};

}  // namespace berth
