// The scheduling algorithm for one pod: filter, score, select.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <numeric>

#include "framework/guard.h"
#include "framework/node_prefetch.h"
#include "scheduler/equivalence.h"
#include "scheduler/extenders.h"
#include "scheduler/fit_error.h"
#include "scheduler/scheduler_internal.h"

namespace berth {
namespace {

constexpr int kMinFeasibleNodesToFind = 100;
constexpr int kMinFeasibleNodesPercentageToFind = 5;
// Nodes a worker filters per call when a window is filtered in parallel.
constexpr int kFilterRun = 16;

}  // namespace

int Scheduler::NumFeasibleNodesToFind(const Framework& fw, int num_all_nodes) const {
  if (num_all_nodes < kMinFeasibleNodesToFind) return num_all_nodes;
  int percentage =
      fw.percentage_of_nodes_to_score().value_or(config_->percentage_of_nodes_to_score);
  if (percentage == 0) {
    percentage = 50 - num_all_nodes / 125;
    if (percentage < kMinFeasibleNodesPercentageToFind)
      percentage = kMinFeasibleNodesPercentageToFind;
  }
  int n = static_cast<int>(static_cast<int64_t>(num_all_nodes) * percentage / 100);
  return std::max(n, kMinFeasibleNodesToFind);
}

// A windowed filter scan: nodes are examined from `start`, wrapping, until `to_find` feasible
// ones are found.
struct Scheduler::FilterScan {
  const std::vector<const NodeInfo*>& nodes;
  int n = 0, start = 0, to_find = 0;
  // In a sampled cycle every kPerNodeTimingStride-th node's Filter plugins are timed; with a
  // metrics sink every evaluation is counted (from where each node stopped, not per call).
  bool timing = false, counting = false;
  int found = 0, scanned = 0;
  uint64_t passed = 0;

  // Position in `nodes` of scan step i: start < n and i < n, so one wrap at most (no division
  // per node).
  int position(int i) const { return start + i < n ? start + i : start + i - n; }
  // The next window: from where the scan got to, asking for the feasible nodes still missing.
  int WindowEnd() const { return std::min(n, scanned + std::max(32, to_find - found)); }
};

Status Scheduler::FindNodesThatPassFilters(Framework& fw, const CycleState& state,
                                           const PodInfo& pod,
                                           const std::vector<const NodeInfo*>& nodes, bool rotate,
                                           std::vector<const NodeInfo*>* feasible,
                                           SchedulingAttempt* attempt, bool use_memo) {
  const int n = static_cast<int>(nodes.size());
  if (n == 0) return Status::Success();
  int to_find = NumFeasibleNodesToFind(fw, n);
  // Without scoring the first feasible node is as good as any (extender filters still see a
  // full window, as in kube-scheduler).
  if (!fw.HasScorePlugins() && !extenders_filter_ && !extenders_prioritize_) to_find = 1;
  const int start = rotate ? next_start_node_index_ % n : 0;
  feasible->reserve(feasible->size() + to_find);

  if (!fw.HasFilterPlugins()) {
    for (int i = 0; i < to_find; ++i) feasible->push_back(nodes[(start + i) % n]);
    return Status::Success();
  }

  if (use_memo)
    return FindNodesThatPassFiltersMemoized(fw, state, pod, nodes, start, to_find, feasible,
                                            attempt);

  // Nodes are checked in parallel in windows, and the search stops at the node where the
  // to_find-th feasible node is found, exactly as a sequential scan from `start` would: the
  // result does not depend on thread timing. Each window asks for what is still missing, so
  // when most nodes fit, hardly any node is checked in vain.
  FilterScan scan{
      nodes, n, start, to_find, state.ShouldRecordPluginMetrics(), fw.counts_plugin_evaluations()};
  if (scan.counting) filter_rejected_at_.assign(fw.num_filter_plugins(), 0);
  // Without nominated pods a node runs the plugins PreFilter left, listed once for all nodes.
  fw.ActiveFilters(state, 0, SIZE_MAX, &active_filters_);
  while (scan.scanned < n && scan.found < to_find) {
    const int begin = scan.scanned;
    const int end = scan.WindowEnd();
    Status error = FilterWindow(fw, state, pod, scan, begin, end);
    if (!error.IsSuccess()) return error;
    TakeFilterWindow(fw, scan, begin, end, feasible, attempt);
  }
  if (scan.counting) fw.CountFilterEvaluations(state, scan.passed, filter_rejected_at_);
  return Status::Success();
}

Status Scheduler::FilterWindow(Framework& fw, const CycleState& state, const PodInfo& pod,
                               const FilterScan& scan, int begin, int end) {
  // Buffers live across cycles; an entry is non-Success only while a window is examined.
  std::vector<Status>& statuses = filter_statuses_buffer_;
  std::vector<char>& ok = filter_ok_buffer_;
  if (statuses.size() < static_cast<size_t>(end - begin)) statuses.resize(end - begin);
  ok.assign(end - begin, 0);
  std::atomic<bool> error{false};
  const bool nominated = fw.has_nominated_pods();
  const std::span<const Framework::ActiveFilter> filters(active_filters_);
  auto at = [&](int k) { return scan.nodes[scan.position(begin + k)]; };
  const int len = end - begin;
  auto filter_node = [&](int k) {
    const NodeInfo& node = *at(k);
    // The loop is memory-bound: load NodeInfos eight steps ahead and their Node objects four
    // steps ahead while this node is filtered.
    if (k + 8 < len) PrefetchNodeInfo(at(k + 8));
    if (k + 4 < len) PrefetchNode(at(k + 4));
    const bool timed = scan.timing && (begin + k) % kPerNodeTimingStride == 0;
    Status s = Guarded("running Filter plugins", [&] {
      return nominated ? fw.RunFilterPluginsWithNominatedPods(state, pod, node, timed)
                       : fw.RunActiveFilters(state, pod, node, filters, timed);
    });
    if (s.IsSuccess()) {
      ok[k] = 1;
    } else {
      if (s.IsError()) error.store(true);
      statuses[k] = std::move(s);
    }
  };
  // Workers take runs of nodes: one call through the parallelizer per run, not per node (a
  // window of a few runs is filtered inline, cheaper than waking the workers).
  const int runs = (len + kFilterRun - 1) / kFilterRun;
  fw.parallelizer().Until(runs, [&](int r) {
    const int to = std::min(len, (r + 1) * kFilterRun);
    for (int k = r * kFilterRun; k < to; ++k) {
      if (error.load(std::memory_order_relaxed)) return;
      filter_node(k);
    }
  });
  if (!error) return Status::Success();
  Status first;
  for (int k = 0; k < end - begin; ++k) {
    if (statuses[k].IsError() && first.IsSuccess()) first = statuses[k];
    statuses[k] = Status();
  }
  return first;
}

void Scheduler::TakeFilterWindow(Framework& fw, FilterScan& scan, int begin, int end,
                                 std::vector<const NodeInfo*>* feasible,
                                 SchedulingAttempt* attempt) {
  std::vector<Status>& statuses = filter_statuses_buffer_;
  for (int i = begin; i < end; ++i) {
    ++scan.scanned;
    const NodeInfo* node = scan.nodes[scan.position(i)];
    if (filter_ok_buffer_[i - begin]) {
      ++scan.passed;
      feasible->push_back(node);
      if (++scan.found == scan.to_find) break;
    } else {
      if (scan.counting) {
        const int at = fw.FilterPluginIndex(statuses[i - begin].plugin());
        if (at >= 0) ++filter_rejected_at_[at];
      }
      if (attempt) RecordRejection(attempt, node, std::move(statuses[i - begin]));
      statuses[i - begin] = Status();
    }
  }
  // Nodes past the stopping point were examined but do not count; clear their results.
  for (int k = scan.scanned - begin; k < end - begin; ++k) statuses[k] = Status();
}

Status Scheduler::FindNodesThatPassFiltersMemoized(Framework& fw, const CycleState& state,
                                                   const PodInfo& pod,
                                                   const std::vector<const NodeInfo*>& nodes,
                                                   int start, int to_find,
                                                   std::vector<const NodeInfo*>* feasible,
                                                   SchedulingAttempt* attempt) {
  FilterScan scan{nodes,   static_cast<int>(nodes.size()),    start,
                  to_find, state.ShouldRecordPluginMetrics(), fw.counts_plugin_evaluations()};
  if (scan.counting) filter_rejected_at_.assign(fw.num_filter_plugins(), 0);
  reuse_.feasible_rows().reserve(to_find);
  const size_t fresh_from = reuse_.fresh_filters_from();
  fw.ActiveFilters(state, 0, fresh_from, &active_filters_);
  fw.ActiveFilters(state, fresh_from, SIZE_MAX, &fresh_filters_);
  // Windows as in FindNodesThatPassFilters: each asks for the feasible nodes still missing.
  // Nodes without a verdict (the ones the last binds changed; every node while the results
  // fill after a change of pod) are filtered first, in parallel when there are enough of them;
  // then the window is read in order up to the stopping point, so the outcome is the
  // sequential scan's. Verdicts past the stopping point are kept for later cycles.
  while (scan.scanned < scan.n && scan.found < to_find) {
    const int begin = scan.scanned;
    const int end = scan.WindowEnd();
    Status error = FilterUnknownNodes(fw, state, pod, scan, begin, end);
    if (!error.IsSuccess()) return error;
    error = FilterAfresh(fw, state, pod, scan, begin, end);
    if (!error.IsSuccess()) return error;
    TakeMemoizedWindow(fw, scan, begin, end, feasible, attempt);
  }
  if (scan.counting) fw.CountFilterEvaluations(state, scan.passed, filter_rejected_at_);
  return Status::Success();
}

namespace {

// Runs `run` for 0..m-1: a handful of nodes costs less than waking the workers.
template <class F>
void ForEachNode(Framework& fw, int m, F&& run) {
  if (m >= 32) {
    fw.parallelizer().Until(m, run);
  } else {
    for (int k = 0; k < m; ++k) run(k);
  }
}

}  // namespace

Status Scheduler::FilterUnknownNodes(Framework& fw, const CycleState& state, const PodInfo& pod,
                                     const FilterScan& scan, int begin, int end) {
  NodeResultReuse::Slot& slot = *reuse_.slot();
  std::vector<uint32_t>& unknown = unknown_rows_buffer_;
  unknown.clear();
  for (int i = begin; i < end; ++i) {
    const int pos = scan.position(i);
    if (!slot.Known(pos)) unknown.push_back(pos);
  }
  reuse_.CountReused(static_cast<uint64_t>(end - begin) - unknown.size());
  if (unknown.empty()) return Status::Success();
  const int m = static_cast<int>(unknown.size());
  // The plugins up to the ones run afresh, as FindNodesThatPassFiltersMemoized listed them.
  const std::span<const Framework::ActiveFilter> kept_filters(active_filters_);
  std::vector<Status>& statuses = filter_statuses_buffer_;
  if (statuses.size() < unknown.size()) statuses.resize(unknown.size());
  ForEachNode(fw, m, [&](int k) {
    if (k + 8 < m) PrefetchNodeInfo(scan.nodes[unknown[k + 8]]);
    if (k + 4 < m) PrefetchNode(scan.nodes[unknown[k + 4]]);
    const bool timed = scan.timing && k % kPerNodeTimingStride == 0;
    // No pod is nominated in a cycle that reuses results: the plain Filter plugins, up to
    // the ones run afresh every cycle.
    statuses[k] = Guarded("running Filter plugins", [&] {
      return fw.RunActiveFilters(state, pod, *scan.nodes[unknown[k]], kept_filters, timed);
    });
  });
  const uint32_t feasible_verdict = slot.feasible_verdict();
  Status error;
  for (int k = 0; k < m; ++k) {
    Status& s = statuses[k];
    if (s.IsError()) {
      if (error.IsSuccess()) error = std::move(s);
      s = Status();
      continue;
    }
    if (s.IsSuccess()) {
      slot.verdicts[unknown[k]] = feasible_verdict;
    } else {
      slot.verdicts[unknown[k]] = slot.rejected_verdict();
      slot.rejection_of[unknown[k]] = slot.Intern(std::move(s));
      s = Status();
    }
  }
  return error;
}

Status Scheduler::FilterAfresh(Framework& fw, const CycleState& state, const PodInfo& pod,
                               const FilterScan& scan, int begin, int end) {
  // The spreading plugins' Filter, when it runs, reads other nodes: it runs afresh on the
  // window's nodes that pass the others (it comes after them in the profile's order).
  std::vector<Status>& fresh = fresh_statuses_buffer_;
  const size_t fresh_from = reuse_.fresh_filters_from();
  if (fresh_from >= fw.num_filter_plugins()) {
    fresh.clear();
    return Status::Success();
  }
  const std::span<const Framework::ActiveFilter> fresh_filters(fresh_filters_);
  const NodeResultReuse::Slot& slot = *reuse_.slot();
  const uint32_t feasible_verdict = slot.feasible_verdict();
  std::vector<uint32_t>& passing = unknown_rows_buffer_;  // reused: window entries now
  passing.clear();
  for (int i = begin; i < end; ++i)
    if (slot.verdicts[scan.position(i)] == feasible_verdict) passing.push_back(i - begin);
  fresh.assign(end - begin, Status());
  ForEachNode(fw, static_cast<int>(passing.size()), [&](int k) {
    const NodeInfo& node = *scan.nodes[scan.position(begin + static_cast<int>(passing[k]))];
    const bool timed = scan.timing && k % kPerNodeTimingStride == 0;
    fresh[passing[k]] = Guarded("running Filter plugins", [&] {
      return fw.RunActiveFilters(state, pod, node, fresh_filters, timed);
    });
  });
  for (const Status& f : fresh)
    if (f.IsError()) return f;
  return Status::Success();
}

void Scheduler::TakeMemoizedWindow(Framework& fw, FilterScan& scan, int begin, int end,
                                   std::vector<const NodeInfo*>* feasible,
                                   SchedulingAttempt* attempt) {
  NodeResultReuse::Slot& slot = *reuse_.slot();
  const uint32_t feasible_verdict = slot.feasible_verdict();
  std::vector<uint32_t>& feasible_rows = reuse_.feasible_rows();
  std::vector<Status>& fresh = fresh_statuses_buffer_;
  for (int i = begin; i < end && scan.found < scan.to_find; ++i) {
    ++scan.scanned;
    const int pos = scan.position(i);
    const bool fresh_rejected = !fresh.empty() && !fresh[i - begin].IsSuccess();
    if (slot.verdicts[pos] == feasible_verdict && !fresh_rejected) {
      ++scan.passed;
      ++scan.found;
      feasible->push_back(scan.nodes[pos]);
      feasible_rows.push_back(static_cast<uint32_t>(pos));
      continue;
    }
    Status& rejection = fresh_rejected ? fresh[i - begin] : slot.rejections[slot.rejection_of[pos]];
    if (scan.counting) {
      const int at = fw.FilterPluginIndex(rejection.plugin());
      if (at >= 0) ++filter_rejected_at_[at];
    }
    if (!attempt) continue;
    if (fresh_rejected) {
      RecordRejection(attempt, scan.nodes[pos], std::move(rejection));
    } else if (defer_rejections_) {
      kept_rejections_.emplace_back(scan.nodes[pos], &rejection);  // the slot keeps it
    } else {
      attempt->filter_statuses[scan.nodes[pos]->name()] = rejection;
    }
  }
}

Status Scheduler::FindNodesThatFitPod(Framework& fw, CycleState& state, const PodInfo& pod,
                                      std::vector<const NodeInfo*>* feasible,
                                      SchedulingAttempt* attempt) {
  outside_nodes_.reset();
  const auto& all = snapshot_.nodes();
  PreFilterResult pre_result;
  std::vector<std::string> rejected_by;
  Status s = Timed(fw, "PreFilter", [&] {
    return fw.RunPreFilterPlugins(state, pod, &pre_result, &rejected_by,
                                  record_details_ ? &attempt->pre_filter_outcomes : nullptr);
  });
  if (!s.IsSuccess()) {
    if (!s.IsRejected()) return s;
    attempt->pre_filter_rejection = s;
    return Status::Success();
  }

  // Opportunistic batching: the next node of the previous alike pod's ranking, alone.
  if (TryBatchHint(fw, state, pod, feasible, attempt)) return Status::Success();

  // A pod that preempted before tries its nominated node first, alone.
  const std::string& nominated = pod.pod->status.nominated_node_name;
  if (!nominated.empty()) {
    if (const NodeInfo* ni = snapshot_.Get(nominated)) {
      std::vector<const NodeInfo*> one{ni};
      Status fs = FindNodesThatPassFilters(fw, state, pod, one, false, feasible, attempt);
      bool rejected = false;
      if (fs.IsSuccess())
        fs = FilterWithExtenders(extenders_, *pod.pod, feasible, &attempt->filter_statuses,
                                 &rejected, &attempt->skipped_extender_errors);
      if (fs.IsSuccess() && !feasible->empty()) return Status::Success();
      feasible->clear();
    }
  }

  std::vector<const NodeInfo*> nodes;
  const std::vector<const NodeInfo*>* candidates = &all;
  if (!pre_result.AllNodes()) {
    for (const auto& name : *pre_result.node_names) {
      if (const NodeInfo* ni = snapshot_.Get(name)) nodes.push_back(ni);
    }
    candidates = &nodes;
    // Nodes outside the PreFilterResult count as rejected by the plugins that narrowed it
    // (written into the attempt only when needed: AddOutsideNodeStatuses).
    outside_nodes_ =
        OutsideNodes{std::move(pre_result),
                     Status::Unresolvable(fmt::format("node(s) didn't satisfy plugin(s) [{}]",
                                                      fmt::join(rejected_by, " ")))};
  }
  // Not in a pod group's cycle: its tentative placements change nodes under the kept results.
  const bool reuse =
      !in_group_cycle_ && candidates == &all && reuse_.Admit(fw, state, pod, all.size());
  // Rejections are kept aside, not written into the attempt's map by node name, unless the
  // attempt records its details or a nominated node was already rejected (a node rejected
  // twice counts once): most attempts succeed and never read them.
  defer_rejections_ = !record_details_ && attempt->filter_statuses.empty();
  Status fs = FindNodesThatPassFilters(fw, state, pod, *candidates, true, feasible, attempt, reuse);
  defer_rejections_ = false;
  // Processed, as kube-scheduler counts it: the feasible nodes and the nodes with a status of
  // their own (a nominated node that failed included). Nodes outside a PreFilterResult share
  // one "absent" status there, so they are not processed (nor in the map yet).
  const int processed = static_cast<int>(feasible->size() + attempt->filter_statuses.size() +
                                         NumDeferredRejections());
  if (!all.empty())
    next_start_node_index_ = (next_start_node_index_ + processed) % static_cast<int>(all.size());
  if (!fs.IsSuccess()) return fs;
  bool rejected = false;
  // Extenders judge every cycle afresh; the reused plugin scores follow the nodes they keep.
  const bool keep_rows = reuse && extenders_filter_;
  if (keep_rows) extender_input_buffer_.assign(feasible->begin(), feasible->end());
  Status es = FilterWithExtenders(extenders_, *pod.pod, feasible, &attempt->filter_statuses,
                                  &rejected, &attempt->skipped_extender_errors);
  if (rejected) attempt->rejected_by_extender = true;
  if (keep_rows) reuse_.KeepRowsOf(extender_input_buffer_, *feasible);
  return es;
}

void Scheduler::RecordRejection(SchedulingAttempt* attempt, const NodeInfo* node, Status status) {
  if (defer_rejections_) {
    owned_rejections_.emplace_back(node, std::move(status));
  } else {
    attempt->filter_statuses[node->name()] = std::move(status);
  }
}

void Scheduler::AddDeferredRejections(SchedulingAttempt* attempt) {
  for (auto& [node, status] : owned_rejections_)
    attempt->filter_statuses[node->name()] = std::move(status);
  for (const auto& [node, status] : kept_rejections_)
    attempt->filter_statuses[node->name()] = *status;
  owned_rejections_.clear();
  kept_rejections_.clear();
}

void Scheduler::AddOutsideNodeStatuses(SchedulingAttempt* attempt) {
  if (!outside_nodes_) return;
  const std::set<std::string>& kept = *outside_nodes_->kept.node_names;
  for (const NodeInfo* ni : snapshot_.nodes())
    if (!kept.count(ni->name())) attempt->filter_statuses[ni->name()] = outside_nodes_->status;
  outside_nodes_.reset();
}

namespace {

// Keeps the `keep` best rows of `table` (the selected node first, then by total, ties by
// position), in their original order, so that an observer ordering them again finds the same
// order as in the whole table.
void KeepBestRows(ScoreTable* table, size_t selected_row, size_t keep) {
  const size_t n = table->nodes.size();
  std::vector<size_t> order = BestScoredRows(table->totals, selected_row, keep);
  std::sort(order.begin(), order.end());
  auto pick = [&](auto& column) {
    std::remove_reference_t<decltype(column)> kept;
    kept.reserve(keep);
    for (size_t i : order) kept.push_back(column[i]);
    column = std::move(kept);
  };
  pick(table->nodes);
  pick(table->totals);
  for (auto& row : table->plugin_scores)
    if (row.size() == n) pick(row);
  for (auto& [extender, contributions] : table->extender_scores)
    if (contributions.size() == n) pick(contributions);
}

}  // namespace

std::vector<size_t> BestScoredRows(const std::vector<int64_t>& totals, size_t selected,
                                   size_t keep) {
  std::vector<size_t> order(totals.size());
  std::iota(order.begin(), order.end(), 0);
  keep = std::min(keep, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<long>(keep), order.end(),
                    [&](size_t x, size_t y) {
                      if ((x == selected) != (y == selected)) return x == selected;
                      if (totals[x] != totals[y]) return totals[x] > totals[y];
                      return x < y;
                    });
  order.resize(keep);
  return order;
}

size_t Scheduler::SelectHostRow(const ScoreTable& table) {
  // Reservoir sampling over the best nodes: each tie has equal probability.
  int64_t best = std::numeric_limits<int64_t>::min();
  size_t selected = 0;
  uint64_t count = 0;
  const size_t n = table.nodes.size();
  const int64_t* totals = table.totals.data();
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = totals[i];
    if (t > best) {
      best = t;
      selected = i;
      count = 1;
    } else if (t == best) {
      ++count;
      if (DrawsZero(random_, count)) selected = i;
    }
  }
  return selected;
}

void Scheduler::RefreshSnapshot(Framework& fw) {
  cache_.UpdateSnapshot(&snapshot_, reuse_.changes());
  fw.SetSnapshot(&snapshot_);
  if (reuse_.enabled()) reuse_.TrackNodeChanges(snapshot_);
}

Status Scheduler::SchedulePod(Framework& fw, CycleState& state, const PodInfo& pod,
                              ScheduleResult* result, SchedulingAttempt* attempt) {
  ++cycle_count_;
  // A pod group's members are scheduled against the snapshot their group cycle took.
  if (!in_group_cycle_) RefreshSnapshot(fw);
  if (snapshot_.size() == 0) return Status::Unresolvable("no nodes available to schedule pods");
  reuse_.EndCycle();
  owned_rejections_.clear();
  kept_rejections_.clear();

  // Kept across cycles (scheduling thread only): a window of feasible nodes is allocated once.
  std::vector<const NodeInfo*>& feasible = feasible_buffer_;
  feasible.clear();
  Status s = FindNodesThatFitPod(fw, state, pod, &feasible, attempt);
  if (!s.IsSuccess()) return s;
  if (feasible.empty()) return Status(Code::kUnschedulable, std::vector<std::string>{});
  attempt->feasible_nodes = static_cast<int>(feasible.size());
  attempt->evaluated_nodes =
      static_cast<int>(feasible.size() + attempt->filter_statuses.size() + NumDeferredRejections());
  // A placed pod's record holds the nodes Filter ran on, as kube-scheduler's Filter results do:
  // nodes outside a PreFilterResult (all but one for a DaemonSet pod) are left out, which keeps a
  // recorded cycle as cheap as the nodes it evaluated.
  if (feasible.size() == 1) {
    result->host = feasible[0]->name();
    StoreBatchResults(fw, pod, result->host, feasible, score_scratch_);
    return Status::Success();
  }
  // Unrecorded cycles reuse one table (scheduling thread only): no allocation per plugin row.
  ScoreTable& table = record_details_ ? attempt->scores : score_scratch_;
  table.extender_scores.clear();
  const RawScoreMemo* kept_memo = nullptr;  // the raw scores, for opportunistic batching
  if (!fw.HasScorePlugins() && extenders_.empty()) {
    table.nodes.assign(feasible.begin(), feasible.end());
    table.totals.assign(feasible.size(), 1);
  } else {
    Status ps = Timed(fw, "PreScore", [&] {
      return fw.RunPreScorePlugins(state, pod, feasible,
                                   record_details_ ? &attempt->pre_score_outcomes : nullptr);
    });
    if (!ps.IsSuccess()) return ps;
    RawScoreMemo* memo = BatchScoreMemo(fw, reuse_.ScoreMemo(feasible.size()), feasible.size());
    Status ss =
        Timed(fw, "Score", [&] { return fw.RunScorePlugins(state, pod, feasible, &table, memo); });
    if (!ss.IsSuccess()) return ss;
    kept_memo = memo;
    PrioritizeWithExtenders(extenders_, *pod.pod, fw.parallelizer(), &table);
  }
  const size_t selected = SelectHostRow(table);
  result->host = table.nodes[selected]->name();
  StoreBatchResults(fw, pod, result->host, feasible, table, kept_memo);
  if (record_details_) {
    if (detail_nodes_ > 0 && table.nodes.size() > detail_nodes_) {
      attempt->scored_nodes_omitted = table.nodes.size() - detail_nodes_;
      KeepBestRows(&table, selected, detail_nodes_);
    }
    attempt->scored_nodes.reserve(table.nodes.size());
    for (const NodeInfo* ni : table.nodes) attempt->scored_nodes.push_back(ni->name());
  }
  return Status::Success();
}

}  // namespace berth
