// DecisionLog: the last scheduling attempt of each pod, kept for the web view of `berth up`.
//
// Each attempt is stored as its decision JSON (DecisionJson), built once when it is reported:
// the score matrix and filter results of at most `max_nodes` nodes — the chosen node first,
// then the best scored, then rejected nodes, as the decision records bound them — with the
// outcome, message and counts. The log is bounded twice, by pods and by bytes; the pods
// least recently decided go first.
//
// Threads: OnAttempt is called on the scheduling thread (or a binding thread); Get and size on
// any thread (the API server's I/O threads). Each takes one short lock.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "scheduler/scheduler.h"

namespace berth::ui {

// One attempt as the web view's JSON (docs/web-view.md):
//   {"pod", "profile", "outcome": "Scheduled"|"Unschedulable"|"Error", "node", "message",
//    "attempt", "evaluatedNodes", "feasibleNodes", "nominatedNode", "victims",
//    "filterPlugins", "scorePlugins", "scoreWeights",
//    "filter": {node: {plugin: "passed" | reason}}, "score": {node: {plugin: "n"}},
//    "finalScore": {node: {plugin: "n x weight"}}, "preFilter": {plugin: reason},
//    "truncatedNodes": n}
// Pure; any thread.
std::string DecisionJson(const SchedulingAttempt& attempt, size_t max_nodes);

struct DecisionLogOptions {
  size_t max_pods = 10000;
  // Per attempt: the chosen node and the next best, or the first rejected nodes. A decision of
  // 100 nodes (what --record-decisions keeps) is about 90 KB of JSON; written for every attempt
  // it held `berth up` at 5,000 nodes to a fifth of its speed. `berth explain` shows every node.
  size_t max_nodes = 20;
  size_t max_bytes = size_t{128} << 20;  // all entries' JSON together
};

class DecisionLog final : public AttemptObserver {
 public:
  explicit DecisionLog(DecisionLogOptions options = {});
  void OnAttempt(const SchedulingAttempt& attempt) override;
  // The last decision for "namespace/name", or nullopt.
  std::optional<std::string> Get(const std::string& pod_key) const;
  size_t size() const;
  size_t bytes() const;

 private:
  struct Entry {
    std::string json;
    std::list<std::string>::iterator order;
  };
  const DecisionLogOptions options_;
  mutable std::mutex mu_;
  std::list<std::string> order_;  // pod keys, least recently decided first
  std::unordered_map<std::string, Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace berth::ui
