// DecisionLog: the last scheduling attempt of each pod, kept for the web view of `berth up`.
//
// Each attempt is kept as values (Decision): the outcome, message and counts, and the filter
// results and scores of at most `max_nodes` nodes — the chosen node first, then the best
// scored, then rejected nodes, as the decision records bound them. Its JSON (DecisionJson's
// text) is written when the web view asks, not for every attempt. The log is bounded twice, by
// pods and by the bytes the values hold; the pods least recently decided go first.
//
// Threads: OnAttempt is called on the scheduling thread (or a binding thread); Get and size on
// any thread (the API server's I/O threads). Each takes one short lock; Get writes the JSON
// outside it.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

#include "explain/decision_record.h"
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

// One attempt as the web view shows it, copied out of the attempt when it is reported.
class Decision {
 public:
  Decision(const SchedulingAttempt& attempt, size_t max_nodes);
  std::string Json() const;  // DecisionJson's text
  size_t bytes() const;      // the memory it holds, roughly
  const std::string& pod_key() const { return pod_; }

 private:
  std::string pod_, profile_, outcome_, node_, message_;
  int attempt_ = 0;
  int evaluated_nodes_ = 0, feasible_nodes_ = 0;
  std::optional<std::string> nominated_node_;
  std::vector<std::string> victims_;
  std::vector<std::string> score_plugins_;  // every Score plugin of the profile
  std::vector<int64_t> score_weights_;
  int64_t decided_at_ms_ = 0;
  std::optional<std::pair<std::string, std::string>> pre_filter_rejection_;  // plugin, message
  explain::NodeResultValues nodes_;
};

struct DecisionLogOptions {
  size_t max_pods = 10000;
  // Per attempt: the chosen node and the next best, or the first rejected nodes (`berth
  // explain` shows every node). About 2 KB of values at 20 nodes and 8 Score plugins; the JSON
  // of such a decision is about 18 KB.
  size_t max_nodes = 20;
  size_t max_bytes = size_t{64} << 20;  // all entries' values together
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
    std::shared_ptr<const Decision> decision;  // shared with a Get writing its JSON
    size_t bytes;
    std::list<std::string>::iterator order;
  };
  const DecisionLogOptions options_;
  mutable std::mutex mu_;
  std::list<std::string> order_;  // pod keys, least recently decided first
  std::unordered_map<std::string, Entry> entries_;
  size_t bytes_ = 0;
};

}  // namespace berth::ui
