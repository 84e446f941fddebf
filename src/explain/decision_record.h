// Decision records: a scheduling attempt as the pod annotations kube-scheduler-simulator writes
// (kube-scheduler-simulator.sigs.k8s.io/filter-result, score-result, finalscore-result,
// selected-node, prefilter-result-status), in its JSON shapes, so tools built for the simulator
// read Berth's decisions (`--record-decisions`).
//
//   filter-result      {"<node>": {"<plugin>": "passed" | "<reason>"}}
//   score-result       {"<node>": {"<plugin>": "<score>"}}        (after NormalizeScore)
//   finalscore-result  {"<node>": {"<plugin>": "<score x weight>"}}
//   selected-node      "<node>"                                    (scheduled pods)
//   prefilter-result-status {"<plugin>": "<reason>"}               (a PreFilter rejection)
//
// Size stays bounded on large clusters: at most `max_nodes` nodes per result (the chosen node,
// then the best scored, then rejected nodes); the annotation
// kube-scheduler-simulator.sigs.k8s.io/result-nodes-truncated says how many were left out.
// Pure function; any thread.
#pragma once

#include <map>
#include <string>

#include "scheduler/scheduler.h"

namespace berth::explain {

inline constexpr std::string_view kAnnotationPrefix = "kube-scheduler-simulator.sigs.k8s.io/";

std::map<std::string, std::string> DecisionAnnotations(const SchedulingAttempt& attempt,
                                                       size_t max_nodes = 100);

}  // namespace berth::explain
