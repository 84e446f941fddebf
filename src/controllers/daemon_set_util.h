// What the DaemonSet controller decides per node, as upstream's pkg/controller/daemon/util and
// NodeShouldRunDaemonPod: the tolerations every daemon pod gets, the node affinity that pins
// it to its node while the scheduler places it, and whether a node should run it.
#pragma once

#include <string>

#include "controllers/object_util.h"

namespace berth::controllers {

// Adds (or replaces, when one with the same key, operator, value and effect exists) the
// tolerations upstream gives daemon pods: not-ready and unreachable NoExecute; disk-, memory-,
// pid-pressure and unschedulable NoSchedule; network-unavailable NoSchedule when the pod uses
// the host network.
void AddDaemonPodTolerations(Json& pod_spec);

// Replaces the pod's required node affinity by one term `matchFields metadata.name In [node]`
// (upstream's ReplaceDaemonSetPodNodeNameNodeAffinity); preferred terms stay.
void ReplaceNodeNameAffinity(Json& pod_spec, const std::string& node_name);

// spec.nodeName, else the single node of a required matchFields metadata.name term ("" when
// neither names one): the node a daemon pod belongs to before it is scheduled.
std::string TargetNodeName(const Json& pod);
// The same, from the typed pod (a sync reads it for every pod of the set).
std::string TargetNodeName(const Pod& pod);

struct NodeFit {
  bool should_run = false;               // a daemon pod belongs here
  bool should_continue_running = false;  // a daemon pod already here may stay
};

// The daemon pod `template_pod` (with the daemon tolerations, see DaemonPodOf) against a node:
// spec.nodeName, nodeSelector and required node affinity must match; an untolerated NoSchedule
// or NoExecute taint stops new pods, and only an untolerated NoExecute one evicts.
// `comparison_operators`: the TaintTolerationComparisonOperators gate (Lt and Gt tolerations).
NodeFit NodeShouldRunDaemonPod(const Pod& template_pod, const Node& node,
                               bool comparison_operators);

// The template of the DaemonSet as a typed pod with the daemon tolerations (for the fit).
Result<Pod> DaemonPodOf(const Json& daemon_set);

// The pod the DaemonSet creates for `node_name`: the template with the daemon tolerations and
// node affinity, generateName "<ds>-", the controller-revision-hash label, the controller
// reference.
Json NewDaemonPod(const Json& daemon_set, const std::string& node_name, const std::string& hash);

}  // namespace berth::controllers
