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

#include <cstdint>
#include <map>
#include <optional>
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

// The per-node part of a decision record as values: at most `max_nodes` nodes (chosen as
// above), copied out of the attempt so that they outlive it. The web view keeps these for
// every attempt `berth up` makes and writes the JSON only when it is asked for.
struct NodeResultValues {
  std::vector<std::string> filter_plugins;
  std::vector<std::string> score_plugins;  // those that ran, in the profile's order
  std::vector<int64_t> score_weights;      // aligned with score_plugins
  std::vector<std::string> extenders;      // with scores, in the attempt's order
  struct Scored {
    std::string node;
    std::vector<int64_t> scores;         // aligned with score_plugins
    std::vector<int64_t> contributions;  // aligned with extenders
  };
  std::optional<std::string> lone_node;  // the only feasible node: passed, not scored
  std::vector<Scored> scored;            // best first
  struct Rejected {
    std::string node;
    std::string plugin;  // "Unknown" when the status names none
    std::string message;
    size_t passed = 0;  // filter plugins before the failing one
  };
  std::vector<Rejected> rejected;  // in name order
  size_t truncated = 0;            // nodes left out
  size_t bytes() const;            // the memory the values hold, roughly
};
NodeResultValues SelectNodeResults(const SchedulingAttempt& attempt, size_t max_nodes);

// The values as the decision records' JSON: filter-result, score-result, finalscore-result.
struct NodeResults {
  std::string filter;
  std::string score;
  std::string final_score;
};
NodeResults NodeResultsJson(const NodeResultValues& values);

// Adds result-history to `record` (DecisionAnnotations' output) for a pod whose annotations
// are `current`: the pod's history with the record appended, the oldest entries dropped until
// all annotations fit the limit. A record equal to the last entry is not appended again (a
// retried pod with an unchanged decision is not rewritten).
void WithResultHistory(const Labels& current, std::map<std::string, std::string>* record);

// Go's time.Duration.String(): "0s", "1.5s", "1m30s", "1h0m0s", "250ms".
std::string GoDurationString(Duration d);

}  // namespace berth::explain
