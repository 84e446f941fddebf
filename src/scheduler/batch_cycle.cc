// The scheduling cycle's side of opportunistic batching (opportunistic_batch.h): the checks a
// hint needs (Filter on the previous pod's node, scoring the kept nodes again) and the ranking
// a full cycle leaves.
#include <algorithm>
#include <numeric>

#include "framework/guard.h"
#include "scheduler/scheduler_internal.h"

namespace berth {
namespace {

class CycleChecks : public OpportunisticBatch::Checks {
 public:
  CycleChecks(Framework& fw, CycleState& state, const PodInfo& pod, const Snapshot& snapshot)
      : fw_(fw), state_(state), pod_(pod), snapshot_(snapshot) {}

  LastNode CheckLastChosen(const std::string& node) override {
    const NodeInfo* ni = snapshot_.Get(node);
    if (!ni) return LastNode::kMissing;
    Status s =
        Guarded("running Filter plugins", [&] { return fw_.RunFilterPlugins(state_, pod_, *ni); });
    return s.IsRejected() ? LastNode::kFull : LastNode::kStillFits;
  }

  std::optional<OpportunisticBatch::Flush> Rescore(std::vector<std::string>* ranking) override {
    using Flush = OpportunisticBatch::Flush;
    std::vector<const NodeInfo*> nodes;
    nodes.reserve(ranking->size());
    for (const std::string& name : *ranking) {
      const NodeInfo* ni = snapshot_.Get(name);
      if (!ni) return Flush::kNodeMissing;
      nodes.push_back(ni);
    }
    if (!fw_.RunPreScorePlugins(state_, pod_, nodes).IsSuccess()) return Flush::kPreScoreError;
    ScoreTable table;
    if (!fw_.RunScorePlugins(state_, pod_, nodes, &table).IsSuccess()) return Flush::kRescoreError;
    std::vector<size_t> order(nodes.size());
    std::iota(order.begin(), order.end(), 0);
    // Ties keep the kept order, the previous pod's node last.
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return table.totals[a] > table.totals[b]; });
    std::vector<std::string> sorted;
    sorted.reserve(order.size());
    for (size_t i : order) sorted.push_back(std::move((*ranking)[i]));
    *ranking = std::move(sorted);
    return std::nullopt;
  }

 private:
  Framework& fw_;
  CycleState& state_;
  const PodInfo& pod_;
  const Snapshot& snapshot_;
};

}  // namespace

bool Scheduler::TryBatchHint(Framework& fw, CycleState& state, const PodInfo& pod,
                             std::vector<const NodeInfo*>* feasible, SchedulingAttempt* attempt) {
  batch_hint_.clear();
  batch_signable_ = false;
  if (in_group_cycle_ || !batch_.Batches(&fw)) return false;
  batch_signable_ = batch_.Signable(&fw, *pod.pod);
  CycleChecks checks(fw, state, pod, snapshot_);
  batch_hint_ = batch_.Hint(&fw, pod.pod, batch_signable_, cycle_count_, clock_->Now(), checks);
  if (batch_hint_.empty()) return false;
  // The hint is tried alone, as a nominated node is; when Filter rejects it the cycle runs in
  // full (the rejection stays among the cycle's statuses).
  const NodeInfo* ni = snapshot_.Get(batch_hint_);
  if (!ni) return false;
  std::vector<const NodeInfo*> one{ni};
  Status s = FindNodesThatPassFilters(fw, state, pod, one, false, feasible, attempt);
  if (s.IsSuccess() && !feasible->empty()) return true;
  feasible->clear();
  return false;
}

void Scheduler::StoreBatchResults(const Framework& fw, const PodInfo& pod, const std::string& host,
                                  const std::vector<const NodeInfo*>& feasible,
                                  const ScoreTable& table) {
  if (in_group_cycle_ || !batch_.Batches(&fw)) return;
  std::vector<std::string> rest;
  if (feasible.size() > 1) {
    // The other scored nodes, best first; ties in scoring order.
    std::vector<size_t> order;
    order.reserve(table.nodes.size());
    for (size_t i = 0; i < table.nodes.size(); ++i)
      if (table.nodes[i]->name() != host) order.push_back(i);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return table.totals[a] > table.totals[b]; });
    rest.reserve(order.size());
    for (size_t i : order) rest.push_back(table.nodes[i]->name());
  }
  batch_.Store(&fw, pod.pod, batch_signable_, batch_hint_, host, std::move(rest), cycle_count_,
               clock_->Now());
}

}  // namespace berth
