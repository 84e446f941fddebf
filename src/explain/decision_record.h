// Decision records: a scheduling attempt as the pod annotations kube-scheduler-simulator writes,
// under its keys (kube-scheduler-simulator.sigs.k8s.io/...) and in its JSON shapes, so tools
// built for the simulator read Berth's decisions (`--record-decisions`). Every key is written
// for every decision, "{}" when its point did not run, as the simulator does:
//
//   prefilter-result-status {"<plugin>": "success" | "<message>"}
//   prefilter-result        {"<plugin>": ["<node>", ...]}   (plugins that narrowed the nodes)
//   filter-result           {"<node>": {"<plugin>": "passed" | "<reason>"}}
//   postfilter-result       {"<node>": {}} for the rejected nodes PostFilter saw, and
//                           {"<node>": {"<plugin>": "preemption victim"}} for its nomination
//   prescore-result         {"<plugin>": "success" | "<message>"}
//   score-result            {"<node>": {"<plugin>": "<score>"}}          (after NormalizeScore)
//   finalscore-result       {"<node>": {"<plugin>": "<score x weight>"}}
//   reserve-result          {"<plugin>": "success" | "<message>"}
//   permit-result           {"<plugin>": "success" | "wait" | "<message>"}
//   permit-result-timeout   {"<plugin>": "<Go duration, e.g. 0s, 10s, 1m30s>"}
//   prebind-result          {"<plugin>": "success" | "<message>"}
//   bind-result             {"<plugin>": "success" | "<message>"}
//   selected-node           "<node>" once Reserve ran, "" before
//   result-history          [{<all of the above>}, ...]  (oldest first; WithResultHistory)
//
// Size stays bounded on large clusters: the per-node results hold at most `max_nodes` nodes
// (the chosen node, then the best scored, then rejected nodes in name order) and a
// prefilter-result list at most `max_nodes` names; the annotation
// kube-scheduler-simulator.sigs.k8s.io/result-nodes-truncated says how many nodes were left
// out. The history drops its oldest entries to keep all of the pod's annotations within the
// API server's limit (256 KiB).
// Pure functions; any thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "scheduler/scheduler.h"

namespace berth::explain {

inline constexpr std::string_view kAnnotationPrefix = "kube-scheduler-simulator.sigs.k8s.io/";
inline constexpr std::string_view kResultHistoryKey =
    "kube-scheduler-simulator.sigs.k8s.io/result-history";
// kube-apiserver's limit on the total size of a pod's annotations (keys and values).
inline constexpr size_t kTotalAnnotationSizeLimit = 256 * 1024;

std::map<std::string, std::string> DecisionAnnotations(const SchedulingAttempt& attempt,
                                                       size_t max_nodes = 100);

// The per-node part of a decision record, as JSON text: filter-result, score-result and
// finalscore-result for at most `max_nodes` nodes (chosen as above), the rejected nodes among
// them, and how many nodes were left out. Written straight from the attempt: the web view
// takes it for every attempt `berth up` makes.
struct NodeResults {
  std::string filter = "{}";
  std::string score = "{}";
  std::string final_score = "{}";
  std::vector<std::string> recorded_rejected;  // in name order
  size_t truncated = 0;
};
NodeResults NodeResultsJson(const SchedulingAttempt& attempt, size_t max_nodes);

// Adds result-history to `record` (DecisionAnnotations' output) for a pod whose annotations
// are `current`: the pod's history with the record appended, the oldest entries dropped until
// all annotations fit the limit. A record equal to the last entry is not appended again (a
// retried pod with an unchanged decision is not rewritten).
void WithResultHistory(const Labels& current, std::map<std::string, std::string>* record);

// Go's time.Duration.String(): "0s", "1.5s", "1m30s", "1h0m0s", "250ms".
std::string GoDurationString(Duration d);

}  // namespace berth::explain
