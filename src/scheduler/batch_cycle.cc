// The scheduling cycle's side of opportunistic batching (opportunistic_batch.h): the checks a
// hint needs (Filter on the previous pod's node, scoring the kept nodes again) and the ranking
// a full cycle leaves.
#include <algorithm>
#include <numeric>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "framework/guard.h"
#include "scheduler/scheduler_internal.h"

namespace berth {
namespace {

class CycleChecks : public OpportunisticBatch::Checks {
 public:
  using RawScores = std::unordered_map<std::string, std::vector<int64_t>>;
  CycleChecks(Framework& fw, CycleState& state, const PodInfo& pod, const Snapshot& snapshot,
              const RawScores& raw, const std::vector<bool>& raw_ran)
      : fw_(fw), state_(state), pod_(pod), snapshot_(snapshot), raw_(raw), raw_ran_(raw_ran) {}

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
    // The kept nodes keep the raw scores of the cycle that ranked them: only the previous
    // pod's node (last) is scored again, then all are normalized together.
    RawScoreMemo memo;
    const bool kept = KeptScores(*ranking, &memo);
    std::span<const NodeInfo* const> pre_score(nodes);
    if (kept) pre_score = pre_score.last(1);
    if (!fw_.RunPreScorePlugins(state_, pod_, pre_score).IsSuccess()) return Flush::kPreScoreError;
    ScoreTable table;
    if (!fw_.RunScorePlugins(state_, pod_, nodes, &table, kept ? &memo : nullptr).IsSuccess())
      return Flush::kRescoreError;
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
  // A memo whose rows are `ranking`'s nodes, filled with their kept raw scores but for the last
  // (the previous pod's node); false when some kept node has none (then all are scored).
  bool KeptScores(const std::vector<std::string>& ranking, RawScoreMemo* memo) {
    const size_t plugins = fw_.score_plugins().size();
    if (raw_ran_.size() != plugins) return false;
    rows_.resize(ranking.size());
    memo->filled.assign(ranking.size(), 0);
    memo->scores.assign(ranking.size() * plugins, 0);
    memo->ran = raw_ran_;
    for (size_t i = 0; i < ranking.size(); ++i) {
      rows_[i] = static_cast<uint32_t>(i);
      if (i + 1 == ranking.size()) continue;
      auto it = raw_.find(ranking[i]);
      if (it == raw_.end() || it->second.size() != plugins) return false;
      std::copy(it->second.begin(), it->second.end(), memo->scores.begin() + i * plugins);
      memo->filled[i] = memo->epoch;
    }
    memo->rows = rows_;
    return true;
  }

  Framework& fw_;
  CycleState& state_;
  const PodInfo& pod_;
  const Snapshot& snapshot_;
  const RawScores& raw_;
  const std::vector<bool>& raw_ran_;
  std::vector<uint32_t> rows_;
};

}  // namespace

bool Scheduler::TryBatchHint(Framework& fw, CycleState& state, const PodInfo& pod,
                             std::vector<const NodeInfo*>* feasible, SchedulingAttempt* attempt) {
  batch_hint_.clear();
  batch_signable_ = false;
  if (in_group_cycle_ || !batch_.Batches(&fw)) return false;
  batch_signable_ = batch_.Signable(&fw, *pod.pod);
  CycleChecks checks(fw, state, pod, snapshot_, batch_raw_, batch_raw_ran_);
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

RawScoreMemo* Scheduler::BatchScoreMemo(const Framework& fw, RawScoreMemo* reuse_memo,
                                        size_t nodes) {
  if (reuse_memo || in_group_cycle_ || !batch_signable_ || !batch_.Batches(&fw)) return reuse_memo;
  // Every row afresh: the memo only records what the plugins score.
  batch_rows_.resize(nodes);
  for (size_t i = 0; i < nodes; ++i) batch_rows_[i] = static_cast<uint32_t>(i);
  batch_memo_.rows = batch_rows_;
  if (batch_memo_.filled.size() < nodes) batch_memo_.filled.resize(nodes, 0);
  batch_memo_.fresh.clear();
  batch_memo_.NextEpoch();
  return &batch_memo_;
}

void Scheduler::StoreBatchResults(const Framework& fw, const PodInfo& pod, const std::string& host,
                                  const std::vector<const NodeInfo*>& feasible,
                                  const ScoreTable& table, const RawScoreMemo* memo) {
  if (in_group_cycle_ || !batch_.Batches(&fw)) return;
  std::vector<std::string> rest;
  // An unsigned pod's ranking serves no later pod: nothing to sort or keep.
  if (batch_signable_ && feasible.size() > 1) {
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
  if (batch_signable_ && !rest.empty() && batch_hint_ != host) KeepRawScores(fw, table, memo);
  batch_.Store(&fw, pod.pod, batch_signable_, batch_hint_, host, std::move(rest), cycle_count_,
               clock_->Now());
}

void Scheduler::KeepRawScores(const Framework& fw, const ScoreTable& table,
                              const RawScoreMemo* memo) {
  batch_raw_.clear();
  batch_raw_ran_.clear();
  // Without a memo (no score plugins), or with plugins scored afresh and so not in it, the
  // kept nodes are scored again when the previous pod's node competes.
  if (memo == nullptr) return;
  const size_t plugins = fw.score_plugins().size();
  for (size_t p = 0; p < plugins && p < memo->fresh.size(); ++p)
    if (memo->fresh[p] && table.plugin_ran[p]) return;
  for (size_t i = 0; i < table.nodes.size(); ++i) {
    const int64_t* row = &memo->scores[memo->rows[i] * plugins];
    batch_raw_.emplace(table.nodes[i]->name(), std::vector<int64_t>(row, row + plugins));
  }
  batch_raw_ran_ = table.plugin_ran;
}

}  // namespace berth
