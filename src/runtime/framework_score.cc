#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>

#include "config/decode_util.h"
#include "framework/guard.h"
#include "framework/node_prefetch.h"
#include "observe/log.h"
#include "runtime/framework.h"
#include "runtime/framework_internal.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// ---------------------------------------------------------------- scoring

Status Framework::RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     std::span<const NodeInfo* const> nodes,
                                     PluginOutcomes* outcomes) {
  state.skip_score_.assign(score_.size(), false);
  for (size_t i = 0; i < pre_score_.size(); ++i) {
    const PreScoreEntry& e = pre_score_[i];
    PluginSeries* series = SeriesAt(series_.pre_score, i);
    Status s = Measured(state, series, [&] { return e.plugin->PreScore(state, pod, nodes); });
    if (outcomes) outcomes->emplace_back(std::string(e.plugin->Name()), s);
    if (s.IsSkip()) {
      if (e.score_index >= 0) state.skip_score_[e.score_index] = true;
      continue;
    }
    if (series) series->Evaluated(1);
    if (!s.IsSuccess())
      return Status::Error(
          fmt::format("running PreScore plugin \"{}\": {}", e.plugin->Name(), s.Message()));
  }
  return Status::Success();
}

namespace {
// Nodes per run when the Score plugins run over runs of nodes.
constexpr int kScoreRun = 32;
}  // namespace

// Long by design: it is the hot loop of scoring, and its lambdas share the cycle's buffers
// (the active plugins' columns, memo rows, the first error) by reference; split, every piece
// would take the same dozen arguments.
Status Framework::RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                  std::span<const NodeInfo* const> nodes, ScoreTable* table,
                                  RawScoreMemo* memo) {
  const size_t n = nodes.size();
  table->nodes.assign(nodes.begin(), nodes.end());
  // Rows keep their capacity when the caller reuses the table across cycles.
  table->plugin_scores.resize(score_.size());
  for (auto& row : table->plugin_scores) row.clear();
  table->plugin_ran.assign(score_.size(), false);
  table->totals.assign(n, 0);

  std::vector<size_t> active;
  for (size_t p = 0; p < score_.size(); ++p) {
    if (p < state.skip_score_.size() && state.skip_score_[p]) continue;
    active.push_back(p);
    table->plugin_ran[p] = true;
  }
  if (active.empty()) return Status::Success();
  const size_t num_plugins = score_.size();
  if (memo) {
    // Rows filled while other plugins ran (PreScore skipped differently) cannot be reused.
    if (memo->ran != table->plugin_ran) {
      memo->ran = table->plugin_ran;
      memo->NextEpoch();
    }
    memo->scores.resize(memo->filled.size() * num_plugins);
  }

  // Raw scores, node-major so each worker touches one node's data for all plugins. A plugin
  // with NormalizeScore gets them as a NodeScore list (the buffer lives across cycles, scheduling
  // thread only); the others' go straight into the table's row, which is what they end as
  // (at 250,000 nodes a list is 4 MB per plugin). A plugin scored afresh every cycle (it reads
  // other nodes) has no memo column.
  std::vector<std::vector<NodeScore>>& scores = score_buffer_;
  if (scores.size() < active.size()) scores.resize(active.size());
  std::vector<ScoreColumn>& columns = score_columns_;
  columns.clear();
  bool any_fresh = false;
  for (size_t a = 0; a < active.size(); ++a) {
    const size_t p = active[a];
    ScoreColumn c{
        score_[p].plugin, score_[p].batch, series_.score.empty() ? nullptr : series_.score[p],
        nullptr,          nullptr,         -1};
    if (score_[p].plugin->HasNormalize()) {
      scores[a].resize(n);
      c.list = scores[a].data();
    } else {
      auto& row = table->plugin_scores[p];
      row.resize(n);
      c.direct = row.data();
    }
    if (memo) {
      const bool fresh = p < memo->fresh.size() && memo->fresh[p];
      any_fresh |= fresh;
      if (!fresh) c.memo_col = static_cast<int>(p);
    }
    columns.push_back(c);
  }
  const ScoreColumn* const cols = columns.data();
  const size_t num_cols = columns.size();
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  Status first_error;
  auto fail = [&](const ScoreColumn& c, const Status& st) {
    std::lock_guard lock(err_mu);
    if (!failed.exchange(true))
      first_error = Status::Error(fmt::format(
          "running Score plugins: plugin \"{}\" failed with: {}", c.plugin->Name(), st.Message()));
    return false;
  };
  // In a sampled cycle, every kPerNodeTimingStride-th node's plugin calls are timed.
  const bool timing = !series_.score.empty() && state.ShouldRecordPluginMetrics();
  // Scores node i into each column (and its memo row); false when a plugin failed. With
  // `fresh_only`, only the plugins scored afresh run (the node's memo row is valid).
  auto score_node = [&](int i, bool timed, bool fresh_only) {
    int64_t* row = memo ? &memo->scores[memo->rows[i] * num_plugins] : nullptr;
    const NodeInfo* node = nodes[i];
    for (size_t a = 0; a < num_cols; ++a) {
      const ScoreColumn& c = cols[a];
      if (fresh_only && c.memo_col >= 0) continue;
      int64_t s = 0;
      Status st = Guarded("Score", [&] {
        if (timed)
          return Measured(state, c.series, [&] { return c.plugin->Score(state, pod, *node, &s); });
        return c.plugin->Score(state, pod, *node, &s);
      });
      if (!st.IsSuccess()) return fail(c, st);
      if (c.direct) {
        c.direct[i] = s;
      } else {
        c.list[i] = {node, s};
      }
      if (row && c.memo_col >= 0) row[c.memo_col] = s;
    }
    if (memo && !fresh_only) memo->filled[memo->rows[i]] = memo->epoch;
    return true;
  };
  // One plugin over a run of nodes into `dst`: one call where it can (NodeBatchScorer), else
  // one per node, leaving 0 for the nodes `wanted` (when given) says to skip.
  auto score_column = [&](const ScoreColumn& c, std::span<const NodeInfo* const> run, int64_t* dst,
                          const char* wanted) {
    return Guarded("Score", [&] {
      if (c.batch) return c.batch->ScoreNodes(state, pod, run, dst);
      for (size_t k = 0; k < run.size(); ++k) {
        dst[k] = 0;
        if (wanted != nullptr && !wanted[k]) continue;
        Status s = c.plugin->Score(state, pod, *run[k], &dst[k]);
        if (!s.IsSuccess()) return s;
      }
      return Status::Success();
    });
  };
  // Nodes scored in runs: each plugin scores a run's nodes in one call where it can
  // (NodeBatchScorer), else one call per node, and every plugin goes over the run before the
  // next run, so its nodes stay in cache. Results are the per-node calls'.
  auto score_run = [&](int begin, int end) {
    int64_t out[kScoreRun];
    const std::span<const NodeInfo* const> run = nodes.subspan(begin, end - begin);
    // Workers take consecutive runs, last to first, and the loads are pipelined over them:
    // while this run is scored, the Node objects of the next run load (its NodeInfos were asked
    // for one run earlier, so reading where its Nodes are costs no wait) and the NodeInfos of
    // the run after it. A worker's first run waits for its own (asking again for a line that is
    // cached or on its way costs next to nothing).
    const int next = std::max(0, begin - kScoreRun);
    const int after_next = std::max(0, begin - 2 * kScoreRun);
    for (const NodeInfo* node : run) PrefetchNodeInfo(node);
    for (int k = after_next; k < next; ++k) PrefetchNodeInfo(nodes[k]);
    for (int k = next; k < begin; ++k) PrefetchNode(nodes[k]);
    for (size_t a = 0; a < num_cols; ++a) {
      const ScoreColumn& c = cols[a];
      int64_t* dst = c.direct ? c.direct + begin : out;
      Status st = score_column(c, run, dst, nullptr);
      if (!st.IsSuccess()) {
        fail(c, st);
        return;
      }
      if (!c.direct)
        for (size_t k = 0; k < run.size(); ++k) c.list[begin + k] = {run[k], out[k]};
    }
  };
  // The plugins without a memo column over nodes [begin, end), written where kept[i].
  auto score_fresh_run = [&](int begin, int end, const std::vector<char>& kept) {
    int64_t out[kScoreRun];
    const std::span<const NodeInfo* const> run = nodes.subspan(begin, end - begin);
    for (size_t a = 0; a < num_cols; ++a) {
      const ScoreColumn& c = cols[a];
      if (c.memo_col >= 0) continue;
      Status st = score_column(c, run, out, &kept[begin]);
      if (!st.IsSuccess()) {
        fail(c, st);
        return;
      }
      for (size_t k = 0; k < run.size(); ++k) {
        const size_t i = begin + k;
        if (!kept[i]) continue;
        if (c.direct) {
          c.direct[i] = out[k];
        } else {
          c.list[i] = {run[k], out[k]};
        }
      }
    }
  };
  if (memo) {
    // Only rows without a valid memo are scored (the nodes the last snapshot update
    // overwrote); the others are read from the memo.
    std::vector<int>& stale = memo_stale_buffer_;
    stale.clear();
    std::vector<char>& kept = memo_kept_buffer_;
    kept.assign(n, 1);
    for (size_t i = 0; i < n; ++i)
      if (memo->filled[memo->rows[i]] != memo->epoch) {
        stale.push_back(static_cast<int>(i));
        kept[i] = 0;
      }
    parallelizer().Until(static_cast<int>(stale.size()), [&](int k) {
      if (!failed.load(std::memory_order_relaxed))
        score_node(stale[k], timing && k % kPerNodeTimingStride == 0, false);
    });
    if (failed) return first_error;
    if (any_fresh && timing) {
      parallelizer().Until(static_cast<int>(n), [&](int i) {
        if (kept[i] && !failed.load(std::memory_order_relaxed))
          score_node(i, i % kPerNodeTimingStride == 0, true);
      });
      if (failed) return first_error;
    } else if (any_fresh) {
      // The plugins scored afresh go over runs of the nodes, in one call per run where they
      // can (NodeBatchScorer); a run's stale nodes, scored just now, are scored again and left.
      const int runs = static_cast<int>((n + kScoreRun - 1) / kScoreRun);
      parallelizer().Until(runs, [&](int j) {
        if (failed.load(std::memory_order_relaxed)) return;
        const int begin = j * kScoreRun;
        const int end = std::min(static_cast<int>(n), begin + kScoreRun);
        score_fresh_run(begin, end, kept);
      });
      if (failed) return first_error;
    }
    // Node-major: each memo row is one cache line, loaded once for all plugins.
    for (size_t i = 0; i < n; ++i) {
      if (!kept[i]) continue;  // scored just now: its columns are written
      const int64_t* row = &memo->scores[memo->rows[i] * num_plugins];
      for (size_t a = 0; a < num_cols; ++a) {
        const ScoreColumn& c = cols[a];
        if (c.memo_col < 0) continue;
        if (c.direct) {
          c.direct[i] = row[c.memo_col];
        } else {
          c.list[i] = {nodes[i], row[c.memo_col]};
        }
      }
    }
  } else if (!timing) {
    // Runs last to first: the filter loop just walked the nodes first to last, so on a cluster
    // larger than the cache the nodes it touched last are the ones still cached.
    const int runs = static_cast<int>((n + kScoreRun - 1) / kScoreRun);
    parallelizer().Until(runs, [&](int j) {
      if (failed.load(std::memory_order_relaxed)) return;
      const int end = static_cast<int>(n) - j * kScoreRun;
      score_run(std::max(0, end - kScoreRun), end);
    });
  } else {
    // A sampled cycle times plugin calls per node. Nodes are scored last to first, as above.
    parallelizer().Until(static_cast<int>(n), [&](int j) {
      if (failed.load(std::memory_order_relaxed)) return;
      const int i = static_cast<int>(n) - 1 - j;
      // Workers take contiguous chunks: load the NodeInfos eight nodes ahead and their Nodes
      // four ahead while this node is scored (the plugins' own time is mostly these loads).
      if (i >= 8) PrefetchNodeInfo(nodes[i - 8]);
      if (i >= 4) PrefetchNode(nodes[i - 4]);
      score_node(i, timing && j % kPerNodeTimingStride == 0, false);
    });
  }
  if (failed) return first_error;
  if (!series_.score.empty())
    for (size_t a : active)
      if (PluginSeries* series = series_.score[a]) series->Evaluated(n);

  for (size_t a = 0; a < active.size(); ++a) {
    const auto& e = score_[active[a]];
    if (e.plugin->HasNormalize()) {
      Status st = Measured(state, SeriesAt(series_.normalize, active[a]),
                           [&] { return e.plugin->NormalizeScore(state, pod, scores[a]); });
      if (!st.IsSuccess())
        return Status::Error(
            fmt::format("running Normalize on Score plugins: plugin \"{}\" "
                        "failed with: {}",
                        e.plugin->Name(), st.Message()));
    }
    auto& out_row = table->plugin_scores[active[a]];
    out_row.resize(n);
    // Raw pointers: through the vectors every store would reload the others' data pointers.
    const NodeScore* in = cols[a].direct ? nullptr : scores[a].data();
    int64_t* out = out_row.data();
    int64_t* totals = table->totals.data();
    const int64_t weight = e.weight;
    for (size_t i = 0; i < n; ++i) {
      const int64_t s = in ? in[i].score : out[i];
      if (s > kMaxNodeScore || s < kMinNodeScore)
        return Status::Error(fmt::format(
            "applying score defaultWeights on Score plugins: plugin \"{}\" returns an invalid "
            "score {}, it should in the range of [{}, {}] after normalizing",
            e.plugin->Name(), s, kMinNodeScore, kMaxNodeScore));
      out[i] = s;
      totals[i] += s * weight;
    }
  }
  return Status::Success();
}

}  // namespace berth
