// Framework: one scheduling profile at run time. Built once from a config::Profile and a
// Registry: plugins are instantiated once each, multiPoint is expanded, every point's plugins
// are kept in typed vectors, and the runners below call them in order with kube-scheduler's
// semantics. The Framework is also the Handle its plugins receive.
//
// Threading: Run* methods are called from the scheduling thread, except the binding-cycle ones
// (WaitOnPermit, RunPreBind, RunBind, RunPostBind), which run on the pod's binding thread.
// RunFilterPlugins and the score loop are called concurrently for different nodes.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/dra.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "berth/framework/registry.h"
#include "config/types.h"
#include "framework/detached_services.h"
#include "framework/node_batch_score.h"
#include "framework/volume_attachments.h"

namespace berth {

class PluginSeries;
class SchedulerMetricsSink;
namespace observe {
class Logger;
}

// Services shared by all profiles, owned by the scheduler.
struct FrameworkServices {
  ClusterClient* client = nullptr;
  const Clock* clock = nullptr;
  Parallelizer* parallelizer = nullptr;
  PodNominator* nominator = nullptr;
  uint64_t seed = 1;
  std::span<Extender* const> extenders;  // owned by the scheduler
  // Per-plugin metrics (execution durations in sampled cycles, evaluation counts, Permit
  // waits); null: none are taken. Must outlive the framework.
  SchedulerMetricsSink* metrics = nullptr;
  // Where plugins' recovered failures (Handle::LogError) go; null: nowhere (simulation).
  observe::Logger* log = nullptr;
  // Handle::Activate (the scheduler's queue); null: ignored. Any thread.
  std::function<void(const Pod&)> activate;
  // Asynchronous preemptions under way, for every profile and across reloads
  // (DetachedServices); null: each DefaultPreemption keeps its own.
  std::shared_ptr<preemption::PreemptionsInFlight> preemptions_in_flight;
};

// Per-node scores of one cycle: scores[plugin_index] over `nodes`, after normalization and
// before weights; totals include weights and extender contributions.
struct ScoreTable {
  std::vector<const NodeInfo*> nodes;
  std::vector<std::vector<int64_t>> plugin_scores;  // [plugin][node]
  std::vector<bool> plugin_ran;                     // false when skipped by PreScore
  std::vector<int64_t> totals;                      // [node]
  // Whether plugin `p` scored the nodes (a plugin its PreScore skipped has no row).
  bool HasRow(size_t p) const {
    return p < plugin_scores.size() && p < plugin_ran.size() && plugin_ran[p];
  }
  // Extender name -> [node] weighted contribution (filled by the scheduler).
  std::map<std::string, std::vector<int64_t>> extender_scores;
};

// Raw scores (before NormalizeScore) kept across cycles for pods that give the Score plugins the
// same inputs (the scheduler's equivalent pods, berth capacity's copies of one template), per
// node position. RunScorePlugins reads row rows[i] for nodes[i] when it was filled in the
// current epoch and fills it otherwise; the caller clears the rows of nodes that changed and
// bumps the epoch to drop them all (O(1), so a change of pod costs nothing per node).
struct RawScoreMemo {
  std::span<const uint32_t> rows;  // per scored node; the caller sets it each cycle
  std::vector<uint32_t> filled;    // per row: the epoch it was filled in (0: never)
  uint32_t epoch = 1;
  std::vector<int64_t> scores;  // [row * score plugins + plugin]
  std::vector<bool> ran;        // the plugins that ran when the rows were filled
  // Per score plugin: scored afresh for every node this cycle and never kept (a plugin whose
  // score of a node reads other nodes, such as PodTopologySpread's counts). Empty: none.
  std::vector<bool> fresh;

  // Drops every row.
  void NextEpoch() {
    if (++epoch == 0) {  // wrapped: rows filled 2^32 epochs ago would look current
      std::fill(filled.begin(), filled.end(), 0);
      epoch = 1;
    }
  }
};

// One plugin's outcome at an extension point other than Filter and Score, for decision records.
// Runners given a list append one per plugin they call, in order; given null they record
// nothing and cost nothing.
struct PluginOutcome {
  PluginOutcome(std::string plugin, Status status, Duration timeout = {})
      : plugin(std::move(plugin)), status(std::move(status)), timeout(timeout) {}
  std::string plugin;
  Status status;  // as the plugin returned it: Success, Skip, Wait, a rejection or an error
  // PreFilter: the nodes its PreFilterResult kept, when it narrowed them (sorted).
  std::optional<std::vector<std::string>> node_names;
  Duration timeout{};  // Permit: how long the plugin asked the pod to wait
};
using PluginOutcomes = std::vector<PluginOutcome>;

class Framework final : public Handle, public DetachedServicesProvider {
 public:
  static Result<std::unique_ptr<Framework>> Create(const config::Profile& profile,
                                                   const Registry& registry,
                                                   FrameworkServices services);
  ~Framework() override;

  const std::string& profile_name() const { return profile_name_; }
  std::optional<int32_t> percentage_of_nodes_to_score() const { return percentage_; }

  struct ScorePluginEntry {
    ScorePlugin* plugin;
    int64_t weight;
    // The plugin's NodeBatchScorer side, when it scores runs of nodes (resolved once, here).
    const NodeBatchScorer* batch = nullptr;
  };
  // Plugin lists per point, in execution order (for reports and tests).
  std::vector<std::string> ListPlugins(std::string_view point) const;
  const std::vector<ScorePluginEntry>& score_plugins() const { return score_; }
  // The plugins at PreFilter, Filter, PreScore and Score, each once, in that order (the ones
  // whose inputs a pod's signature covers: opportunistic batching).
  std::vector<const Plugin*> CyclePlugins() const;
  bool HasFilterPlugins() const { return !filter_.empty(); }
  size_t num_filter_plugins() const { return filter_.size(); }
  // The Filter plugins, in the order they run (explain asks them for remedies).
  const std::vector<FilterPlugin*>& filter_plugins() const { return filter_; }
  bool HasScorePlugins() const { return !score_.empty(); }
  bool HasPostFilterPlugins() const { return !post_filter_.empty(); }
  const QueueSortPlugin& queue_sort() const { return *queue_sort_; }

  // Each plugin's EventsToRegister, asked once at creation. A plugin that does not implement
  // EnqueueExtensions (or threw) is registered for every event without a hint.
  struct PluginEvents {
    std::string plugin;
    std::vector<ClusterEventWithHint> events;
    // DraEnqueueExtensions' registrations (none without the interface).
    std::vector<DraClusterEventWithHint> dra_events;
    // VolumeAttachmentEnqueueExtensions' hint for a deleted VolumeAttachment (empty without
    // the interface: such a deletion moves none of the plugin's pods, unless it registered
    // every event).
    VolumeAttachmentHintFn volume_attachment_delete_hint;
  };
  const std::vector<PluginEvents>& event_registrations() const { return event_registrations_; }
  // What is likely wrong with the profile though it builds (a plugin's Score enabled without
  // the PreScore it needs), one sentence each; also logged at creation when services.log is set.
  const std::vector<std::string>& warnings() const { return warnings_; }
  // Name and args of the QueueSort plugin, to check all profiles agree.
  std::string queue_sort_name() const;

  // The snapshot for the next cycle (owned by the scheduler). Also samples whether any pod is
  // nominated, so filtering skips nominated-pod lookups in the common case.
  void SetSnapshot(const Snapshot* snapshot) {
    snapshot_ = snapshot;
    has_nominated_ = !services_.nominator || services_.nominator->HasNominatedPods();
  }
  // Whether some pod was nominated when the cycle's snapshot was set (Filter then also
  // evaluates nodes with the nominated pods added).
  bool has_nominated_pods() const { return has_nominated_; }

  // ---- scheduling cycle
  // First non-Success PreEnqueue status (plugin stamped), or Success.
  Status RunPreEnqueuePlugins(const Pod& pod) const;

  // Runs PreFilter plugins in order. On rejection returns it (plugin stamped); Skip marks the
  // paired Filter skipped. `result` is the intersection of all PreFilterResults.
  // `rejected_by` receives the names of plugins that rejected (for requeueing).
  Status RunPreFilterPlugins(CycleState& state, const PodInfo& pod, PreFilterResult* result,
                             std::vector<std::string>* rejected_by,
                             PluginOutcomes* outcomes = nullptr);
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                     const PodInfoPtr& pod_to_add, const NodeInfo& node) override;
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                        const PodInfoPtr& pod_to_remove,
                                        const NodeInfo& node) override;
  // Filters in order; returns the first non-Success (plugin stamped). Thread-safe.
  // `time_plugins`: in a cycle that records plugin metrics, time each plugin on this node.
  // [first, last): only the Filter plugins at those positions (for the scheduler's reuse of
  // per-node results, which runs some plugins every cycle and keeps the others' verdicts).
  Status RunFilterPlugins(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                          bool time_plugins = false, size_t first = 0,
                          size_t last = SIZE_MAX) const;
  // The Filter plugins at positions [first, last) that run in `state`'s cycle (their PreFilter
  // did not skip them), for RunActiveFilters: the per-node loops look the skips up once per
  // cycle instead of once per node and plugin.
  struct ActiveFilter {
    const FilterPlugin* plugin;
    PluginSeries* series;  // null without metrics
  };
  void ActiveFilters(const CycleState& state, size_t first, size_t last,
                     std::vector<ActiveFilter>* out) const;
  // RunFilterPlugins over a list ActiveFilters made (no nominated pods). Thread-safe.
  Status RunActiveFilters(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                          std::span<const ActiveFilter> filters, bool time_plugins) const;
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node) override;
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node, bool time_plugins);
  // True when plugin evaluations are counted (a metrics sink is attached): the scheduler then
  // reports the cycle's Filter evaluations through CountFilterEvaluations.
  bool counts_plugin_evaluations() const { return !series_.filter.empty(); }
  // Position of a Filter plugin in this profile's Filter list, or -1.
  int FilterPluginIndex(std::string_view name) const;
  // Position of a Score plugin in score_plugins(), or -1.
  int ScorePluginIndex(std::string_view name) const;
  // One cycle's Filter evaluations (scheduler_plugin_evaluation_total): `passed` nodes ran every
  // Filter plugin not skipped; rejected_at[i] nodes stopped at Filter plugin i.
  void CountFilterEvaluations(const CycleState& state, uint64_t passed,
                              std::span<const uint64_t> rejected_at);
  // Runs PostFilter plugins until one returns Success or a non-Unschedulable status.
  // `messages` collects the messages of plugins that could not help (for the FitError).
  Status RunPostFilterPlugins(CycleState& state, const PodInfo& pod, const NodeStatusMap& statuses,
                              PostFilterResult* result, std::vector<std::string>* messages,
                              PluginOutcomes* outcomes = nullptr);
  Status RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                            std::span<const NodeInfo* const> nodes,
                            PluginOutcomes* outcomes = nullptr);
  // Score + NormalizeScore + range check + weights over `nodes` (parallel over nodes).
  Status RunScorePlugins(const CycleState& state, const PodInfo& pod,
                         std::span<const NodeInfo* const> nodes, ScoreTable* table,
                         RawScoreMemo* memo = nullptr);
  Status RunReservePluginsReserve(CycleState& state, const PodInfo& pod, const std::string& node,
                                  PluginOutcomes* outcomes = nullptr);
  void RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod, const std::string& node);
  // Success, Wait (the pod is registered as waiting), or a rejection.
  Status RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                          PluginOutcomes* outcomes = nullptr);

  // ---- binding cycle
  // Blocks until every waiting plugin allowed the pod, one rejected it, or the timeout passed.
  // With a FakeClock, the caller resolves timeouts via ExpireWaitingPods().
  Status WaitOnPermit(const Pod& pod);
  // Rejects waiting pods whose deadline passed on the injected clock (returns how many).
  int ExpireWaitingPods();
  // The continuation of a pod that Permit holds: `then` runs once its wait is decided (allowed,
  // rejected or timed out), on the thread that decides it, or at once if it is decided or not
  // waiting. Returns the earliest deadline while it waits: the caller arranges for
  // ExpireWaitingPod then. Afterwards WaitOnPermit returns without blocking.
  std::optional<TimePoint> OnPermitDecided(const Pod& pod, std::function<void()> then);
  // Rejects the pod if one of its Permit deadlines passed; true if it did.
  bool ExpireWaitingPod(const Pod& pod);
  // True while the pod waits at Permit undecided: not yet allowed by every waiting plugin,
  // rejected, or expired (by ExpireWaitingPods or a waiting WaitOnPermit). False for a pod that
  // is not waiting; once false, WaitOnPermit returns without blocking.
  bool IsWaitingOnPermit(std::string_view uid);
  // Whether the PreBind plugins have work for the pod on `node` (PreBindPreFlight): Skip when
  // every one says it has none, Success when one has (or cannot tell: it lacks the interface),
  // an Error naming the plugin when one fails.
  Status RunPreBindPreFlights(CycleState& state, const PodInfo& pod, const std::string& node);
  Status RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                           PluginOutcomes* outcomes = nullptr);
  Status RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                        PluginOutcomes* outcomes = nullptr);
  void RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node);

  // ---- Handle
  const Snapshot& snapshot() const override { return *snapshot_; }
  const ClusterListers& listers() const override { return *services_.client; }
  ClusterWriter& writer() override { return *services_.client; }
  void LogError(std::string_view plugin, std::string_view message) override;
  const Clock& clock() const override { return *services_.clock; }
  Random& random() override { return random_; }
  Parallelizer& parallelizer() override { return *services_.parallelizer; }
  PodNominator& nominator() override { return *services_.nominator; }
  void Activate(const Pod& pod) override {
    if (services_.activate) services_.activate(pod);
  }
  DetachedServices Detached() const override;
  std::span<Extender* const> extenders() const override { return services_.extenders; }
  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) override;
  std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) override;
  bool RejectWaitingPod(std::string_view uid) override;

 private:
  class WaitingPodImpl;
  Framework() = default;
  void RegisterEvents();
  using ExtensionCall = Status (PreFilterExtensions::*)(CycleState&, const PodInfo&,
                                                        const PodInfoPtr&, const NodeInfo&) const;
  Status RunPreFilterExtension(ExtensionCall call, std::string_view what, CycleState& state,
                               const PodInfo& pod_to_schedule, const PodInfoPtr& pod,
                               const NodeInfo& node);
  Status FilterWithNominated(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                             bool time_plugins);
  void WarnAboutScoreWithoutPreScore(const std::vector<std::string>& score,
                                     const std::vector<std::string>& pre_score,
                                     const std::function<Plugin*(const std::string&)>& get);
  void ResolvePluginSeries();
  // Runs one plugin call, timing it when `series` is set and the cycle records plugin metrics.
  template <class Call>
  Status Measured(const CycleState& state, PluginSeries* series, Call&& call) const;
  template <class Call>
  void MeasuredVoid(const CycleState& state, PluginSeries* series, Call&& call) const;

  std::string profile_name_;
  std::optional<int32_t> percentage_;
  FrameworkServices services_;
  Random random_;
  const Snapshot* snapshot_ = nullptr;
  bool has_nominated_ = true;

  std::vector<std::unique_ptr<Plugin>> owned_;
  std::vector<PluginEvents> event_registrations_;
  std::vector<std::string> warnings_;
  std::vector<PreEnqueuePlugin*> pre_enqueue_;
  const QueueSortPlugin* queue_sort_ = nullptr;
  struct PreFilterEntry {
    PreFilterPlugin* plugin;
    int filter_index;  // the same plugin in filter_, or -1
  };
  std::vector<PreFilterEntry> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::vector<PostFilterPlugin*> post_filter_;
  struct PreScoreEntry {
    PreScorePlugin* plugin;
    int score_index;
  };
  std::vector<PreScoreEntry> pre_score_;
  std::vector<ScorePluginEntry> score_;
  std::vector<ReservePlugin*> reserve_;
  std::vector<PermitPlugin*> permit_;
  std::vector<PreBindPlugin*> pre_bind_;
  std::vector<BindPlugin*> bind_;
  std::vector<PostBindPlugin*> post_bind_;

  std::vector<std::vector<NodeScore>> score_buffer_;  // RunScorePlugins' raw scores
  // One Score plugin that runs this cycle, with where its raw scores go: set up once per cycle
  // so that the per-node loop reads one compact array.
  struct ScoreColumn {
    const ScorePlugin* plugin;
    const NodeBatchScorer* batch;  // null: scored one node per call
    PluginSeries* series;          // null: untimed
    int64_t* direct;               // the table's row (plugins without NormalizeScore), or null
    NodeScore* list;               // else the raw list NormalizeScore gets
    int memo_col;                  // its column in a memo row; -1: no memo, or scored afresh
  };
  std::vector<ScoreColumn> score_columns_;
  // RunScorePlugins with a memo: rows to score again, rows reused.
  std::vector<int> memo_stale_buffer_;
  std::vector<char> memo_kept_buffer_;

  // Metric series per plugin, index-aligned with the plugin vectors above (empty without a
  // metrics sink). Reserve and Unreserve are separate extension points in the metrics.
  struct PluginSeriesSet {
    std::vector<PluginSeries*> pre_filter, filter, post_filter, pre_score, score, normalize,
        reserve, unreserve, permit, pre_bind, bind, post_bind;
  };
  PluginSeriesSet series_;

  std::mutex waiting_mu_;
  std::map<std::string, std::shared_ptr<WaitingPodImpl>, std::less<>> waiting_;
};

}  // namespace berth
