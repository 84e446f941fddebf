// Scheduler: the data path watch event -> cache -> queue -> scheduling cycle -> bind.
//
//   * Cluster events arrive through the ClusterEventHandler methods and update the Cache
//     (assigned pods, nodes) or the SchedulingQueue (pending pods of our profiles).
//   * ScheduleOne() pops one pod, runs the scheduling cycle of its profile (schedule_one.cc),
//     assumes it in the cache and hands it to the binding cycle: inline (simulation, bench) or
//     on its own thread (daemon).
//   * Every attempt is reported to the AttemptObserver with its full explanation: per-node
//     filter statuses, per-plugin scores, the FitError message and preemption results.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <stop_token>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "berth/framework/clock.h"
#include "berth/framework/cluster.h"
#include "berth/framework/dra.h"
#include "berth/framework/extender.h"
#include "berth/framework/registry.h"
#include "cache/cache.h"
#include "config/types.h"
#include "framework/mt19937_64.h"
#include "framework/parallelizer.h"
#include "framework/volume_attachments.h"
#include "queue/scheduling_queue.h"
#include "runtime/framework.h"
#include "runtime/scheduler_metrics.h"
#include "scheduler/binding_executor.h"
#include "scheduler/deadline_timer.h"
#include "scheduler/node_result_reuse.h"
#include "scheduler/opportunistic_batch.h"
#include "scheduler/requeue_policy.h"

namespace berth::observe {
class Logger;
}

namespace berth {

// What one scheduling attempt decided, and why.
struct SchedulingAttempt {
  enum class Outcome { kScheduled, kUnschedulable, kError };

  std::shared_ptr<const Pod> pod;
  std::string profile;
  Outcome outcome = Outcome::kError;
  std::string node;                          // kScheduled: where it was bound
  std::string message;                       // FitError or error text when not scheduled
  std::optional<NominatingInfo> nominating;  // set by PostFilter (preemption)
  std::vector<std::string> victims;          // "ns/name" of preempted pods
  int evaluated_nodes = 0;
  int feasible_nodes = 0;
  std::optional<Status> pre_filter_rejection;        // when a PreFilter plugin rejected
  bool rejected_by_extender = false;                 // an extender filtered out some node
  std::vector<std::string> skipped_extender_errors;  // errors of ignorable extenders
  NodeStatusMap filter_statuses;                     // rejected nodes
  // Unschedulable after Filter: how many nodes gave each reason (the message's histogram as
  // data, kept when filter_statuses is not).
  std::map<std::string, int> filter_reason_counts;
  std::vector<std::string> filter_plugins;  // the profile's Filter plugins, in order
  std::vector<std::string> score_plugins;   // names, index-aligned with scores
  std::vector<int64_t> score_weights;
  ScoreTable scores;  // empty when < 2 feasible nodes
  // Names of scores.nodes (the NodeInfo pointers are only valid during the cycle).
  std::vector<std::string> scored_nodes;
  // Scored nodes left out of scores and scored_nodes (SchedulerOptions::detail_nodes).
  size_t scored_nodes_omitted = 0;
  // Where the cycle placed the pod (Reserve ran), whether or not the binding then succeeded.
  std::string selected_node;
  // Each plugin's outcome at the other points, in run order (recorded with record_details;
  // the decision records of src/explain carry them).
  PluginOutcomes pre_filter_outcomes;
  PluginOutcomes post_filter_outcomes;
  PluginOutcomes pre_score_outcomes;
  PluginOutcomes reserve_outcomes;
  PluginOutcomes permit_outcomes;
  PluginOutcomes pre_bind_outcomes;
  PluginOutcomes bind_outcomes;
  int attempt = 0;  // 1 for the first attempt of this pod
  // Timing on the scheduler's clock, for metrics: when this cycle started, how long the
  // algorithm (filter, score, select) took, and when the pod first entered activeQ.
  TimePoint cycle_start{};
  Duration algorithm_duration{};
  TimePoint initial_attempt_timestamp{};
};

// The first `keep` of the scored rows whose totals are `totals`, best first: row `selected`
// (the selected node; npos for none), then by total, ties in scoring order. The scheduler's
// detail_nodes bound and the decision records both keep the nodes this names, so a record made
// from a bounded attempt lists what it would from the whole table.
std::vector<size_t> BestScoredRows(const std::vector<int64_t>& totals, size_t selected,
                                   size_t keep);

class AttemptObserver {
 public:
  virtual ~AttemptObserver() = default;
  // Called from the scheduling thread (or binding thread for binding failures).
  virtual void OnAttempt(const SchedulingAttempt& attempt) = 0;
};

struct SchedulerOptions {
  const config::SchedulerConfiguration* config = nullptr;
  const Registry* registry = nullptr;
  ClusterClient* client = nullptr;
  const Clock* clock = nullptr;
  uint64_t seed = 1;
  // true: run the binding cycle on the scheduling thread (simulation, bench).
  bool inline_binding = true;
  // Without inline_binding: binding cycles run at once before more wait for a thread
  // (BindingExecutor's core; its most is twice as many). More in flight than the client may
  // send in a second only lengthens a stop.
  int binding_threads = 128;
  // Record filter statuses and score tables for the observer (explanations).
  bool record_details = true;
  // With record_details: the scored nodes an attempt keeps, best first (the selected node,
  // then by total score, ties in scoring order, kept in scoring order); 0: all. For observers
  // that show only so many (the web view of `berth up`): at 5,000 nodes every attempt would
  // otherwise copy the names and score rows of 500 nodes.
  size_t detail_nodes = 0;
  // Scheduler extenders, consulted in this order (src/extender builds them from the config).
  std::vector<std::shared_ptr<Extender>> extenders;
  // Framework, plugin, event and queue metrics; must outlive the scheduler. Null: none are
  // taken (and the hot path pays nothing for them).
  SchedulerMetricsSink* metrics = nullptr;
  // Reuse a node's Filter verdict and raw Score plugin scores across consecutive equivalent
  // pods (equivalence.h) until the node changes, in profiles whose PreFilter, Filter, PreScore
  // and Score plugins are all in NodeLocalPluginNames(). Extenders, NormalizeScore, weights and
  // selection still run every cycle; decisions are the same either way.
  bool reuse_equivalent_pod_results = true;
  // Set by berth capacity, whose pods are all copies of one template it checked: the plugins
  // (by name) whose Filter verdict and raw Score on a node depend, for such pods, on that node
  // alone. When the only profile's PreFilter, Filter, PreScore and Score plugins are all listed,
  // results are reused with no check per cycle. Empty: never.
  std::vector<std::string> node_local_plugins;
  // NominatedNodeNameForExpectation (on by default, as in kube-scheduler v1.37): when a PreBind
  // plugin has work for the pod (PreBindPreFlight) or the pod will wait at Permit, the chosen
  // node is written as the pod's status.nominatedNodeName before the binding cycle goes on.
  bool nominate_before_binding = true;
  // SchedulerPopFromBackoffQ (SchedulingQueue::SetPopFromBackoffQ): the daemon sets it from the
  // gate (on by default). Off for RunUntilIdle, whose fake clock jumps over backoff when the
  // queue has nothing else to do, so simulations keep their timelines.
  bool pop_from_backoff_q = false;
  // GenericWorkload (off by default, as in kube-scheduler v1.37): the pods of a scheduling
  // group (spec.schedulingGroup) are scheduled together in one pod group cycle against one
  // snapshot (pod_group_cycle.cc) rather than one cycle each.
  bool pod_group_cycles = false;
  // OpportunisticBatching (on by default, as in kube-scheduler v1.37): a pod whose signature
  // (PodSigner) equals the previous pod's is offered the next node of that pod's ranking,
  // checked with Filter alone (opportunistic_batch.h). Decisions can then differ from a full
  // cycle's; profiles that sign no pod (the default one) decide as without it.
  bool opportunistic_batching = true;
  // Failed writes the scheduler recovers from (the PodScheduled condition, a nomination, a
  // cache entry to forget) and plugins' LogError are logged here; null: nowhere (simulation).
  observe::Logger* log = nullptr;
};

// What a reload did (Scheduler::RequestReload), reported on the scheduling thread.
struct ReloadResult {
  // Set when the configuration was refused: the one in use keeps running.
  std::optional<Error> error;
  // A newer request replaced this one before the loop picked it up: nothing was done.
  bool superseded = false;
  // Profiles by schedulerName: new ones, ones that went away, ones rebuilt in place.
  std::vector<std::string> added, removed, kept;
  // Pending pods ("ns/name") of removed profiles: taken out of the queue, left pending.
  std::vector<std::string> orphaned_pods;
  // Pending pods of added profiles queued from the informers' caches.
  size_t queued_pods = 0;
  // How long the scheduling loop spent on the reload (building the profiles, the swap).
  Duration duration{};
  bool ok() const { return !error && !superseded; }
};

// A configuration for the scheduler to switch to between two scheduling cycles.
struct ReloadRequest {
  std::shared_ptr<const config::SchedulerConfiguration> config;
  // The extenders of `config` (src/extender builds them); they replace the running ones.
  std::vector<std::shared_ptr<Extender>> extenders;
  // Called once, on the scheduling thread, when the request was applied, refused or superseded.
  std::function<void(const ReloadResult&)> done;
};

// How Scheduler::Run keeps the queue moving (kube-scheduler's periods).
struct RunOptions {
  std::chrono::milliseconds backoff_flush{1000};         // pods whose backoff ended -> activeQ
  std::chrono::milliseconds unschedulable_flush{30000};  // how often the leftover check runs
  // Pods unschedulable for longer than this are retried (--pod-max-in-unschedulable-pods-duration).
  std::chrono::milliseconds max_in_unschedulable{300000};
};

// What Scheduler::RunUntilIdle lets its caller do around each cycle (simulation, benchmarks).
struct IdleRunHooks {
  std::function<void()> before_cycle;  // before each attempt to pop a pod
  // After each cycle that popped a pod; false ends the run at once.
  std::function<bool()> after_cycle;
  // Rounds of "schedule what is active, then jump the clock to the next backoff expiry".
  int max_rounds = 100000;
};

class Scheduler final : public ClusterEventHandler,
                        public DraEventHandler,
                        public VolumeAttachmentEventHandler {
 public:
  static Result<std::unique_ptr<Scheduler>> Create(const SchedulerOptions& options);
  ~Scheduler() override;

  // The daemon's loop (berth scheduler, berth up): schedules pods as they arrive, on the
  // calling thread, until `stop` is requested (which closes the queue); a timer thread of its
  // own moves pods whose backoff ended to activeQ and retries pods left unschedulable too long.
  // Binding cycles run on the binding executor. Call once.
  void Run(std::stop_token stop, const RunOptions& options = {});
  // Simulation's loop (simulate, bench, explain, capacity): schedules on the calling thread
  // until nothing is left to try, moving `clock` over backoff and Permit waits instead of
  // waiting for them. Needs inline binding.
  void RunUntilIdle(FakeClock& clock, const IdleRunHooks& hooks = {});
  // Asks the scheduling loop to switch to another configuration between two cycles (Run's loop,
  // RunUntilIdle or the next ScheduleOne picks it up; a blocking wait for a pod is woken). Any
  // thread. The profiles and extenders are rebuilt; the queue, the cache and the pods in flight
  // are kept: binding cycles and pods waiting at Permit finish under the profile that scheduled
  // them. Global settings the scheduler was built with (parallelism, backoff, the queue sort)
  // stay; a configuration that changes the queue sort is refused. A request not picked up yet
  // is superseded by a newer one.
  void RequestReload(ReloadRequest request);
  // Gives up on a pending pod: it leaves the queue (simulation's limit of attempts).
  void GiveUp(const Pod& pod);
  // Brings the scheduler's snapshot up to date now, as the next cycle would first (a benchmark
  // counts this as loading the cluster). Scheduling thread.
  void WarmUp();
  // What waits and what is cached, for metrics. Any thread.
  SchedulingQueue::Counts pending_counts() const { return queue_->counts(); }
  std::vector<SchedulingQueue::PluginCount> unschedulable_by_plugin() const {
    return queue_->UnschedulableByPlugin();
  }
  struct CacheCounts {
    size_t nodes = 0, pods = 0, assumed_pods = 0;
  };
  CacheCounts cache_counts() const {
    return {cache_.NodeCount(), cache_.PodCount(), cache_.AssumedPodCount()};
  }

  // Runs one scheduling cycle (after applying a requested reload). Returns false if no pod was
  // available (non-blocking, or woken for a reload) or the queue was closed.
  bool ScheduleOne(bool block);
  // Binding cycles deferred because a Permit plugin said Wait: completes those whose wait
  // resolved (simulation). Returns how many completed.
  int CompleteWaitingBindings();
  bool HasWaitingBindings() const;

  void SetObserver(AttemptObserver* observer) { observer_ = observer; }
  // The profile of a pod, and all profiles, of the configuration in use. Scheduling thread.
  Framework* ProfileFor(const Pod& pod) const;
  const std::vector<std::unique_ptr<Framework>>& profiles() const;
  SchedulingQueue& queue() { return *queue_; }
  Cache& cache() { return cache_; }
  // Filter verdicts taken from earlier cycles instead of running the Filter plugins
  // (SchedulerOptions::reuse_equivalent_pod_results). Scheduling thread.
  uint64_t reused_verdicts() const { return reuse_.reused_verdicts(); }
  // Opportunistic batching's hints and dropped rankings so far. Scheduling thread.
  const OpportunisticBatch::Counts& batch_counts() const { return batch_.counts(); }
  // Binding cycles started and not yet ended (Permit waits included). Any thread.
  int binding_cycles_running() const {
    return binding_cycles_running_.load(std::memory_order_relaxed);
  }
  // Whether the destructor has begun (tests: it stops binding cycles that have not bound).
  bool stopping() const { return stopping_.load(); }

  // ---- ClusterEventHandler
  void OnPodAdd(const Ptr<Pod>& pod) override;
  void OnPodUpdate(const Ptr<Pod>& old_pod, const Ptr<Pod>& new_pod) override;
  void OnPodDelete(const Ptr<Pod>& pod) override;
  void OnNodeAdd(const Ptr<Node>& node) override;
  void OnNodeUpdate(const Ptr<Node>& old_node, const Ptr<Node>& new_node) override;
  void OnNodeDelete(const Ptr<Node>& node) override;
  // ---- DraEventHandler: DRA changes move the pods whose plugins' DRA hints say so.
  void OnDraEvent(const DraClusterEvent& event, const DraEventObject& old_object,
                  const DraEventObject& new_object) override;
  // ---- VolumeAttachmentEventHandler: a deleted attachment moves the pods whose plugins'
  // hints say so.
  void OnVolumeAttachmentDelete(const VolumeAttachmentInfo& deleted) override;
  void OnObjectEvent(const ClusterEvent& event, const EventObject& old_object,
                     const EventObject& new_object) override;

 private:
  struct ScheduleResult;
  struct BindingTask;
  // The profiles, extenders and requeue policy of one configuration (scheduler_internal.h).
  struct Generation;
  Scheduler() = default;

  // Builds the profiles of `config` (reload.cc); `number` tells generations apart.
  Result<std::shared_ptr<Generation>> BuildGeneration(
      const config::SchedulerConfiguration& config,
      std::vector<std::shared_ptr<Extender>> extenders, uint64_t number);
  // Makes `next` the generation in use: scheduling thread, between cycles.
  void SwapGeneration(std::shared_ptr<Generation> next, ReloadResult* result);
  // Applies a requested reload, if any; true if there was one. Scheduling thread.
  bool ApplyRequestedReload();
  // Frees retired generations nothing uses any more. Scheduling thread.
  void PruneRetiredGenerations();
  // The generation in use, for threads other than the scheduling thread.
  std::shared_ptr<const Generation> CurrentGeneration() const;
  // The generation in use and the retired ones still alive (their pods may wait at Permit).
  std::vector<std::shared_ptr<const Generation>> LiveGenerations() const;

  // The scheduling algorithm (schedule_one.cc).
  Status SchedulePod(Framework& fw, CycleState& state, const PodInfo& pod, ScheduleResult* result,
                     SchedulingAttempt* attempt);
  Status FindNodesThatFitPod(Framework& fw, CycleState& state, const PodInfo& pod,
                             std::vector<const NodeInfo*>* feasible, SchedulingAttempt* attempt);
  // Writes the shared status of the nodes the cycle's PreFilterResult excluded into the
  // attempt's filter statuses. Deferred to when the attempt fails or its details are recorded:
  // a pod narrowed to one node (a DaemonSet's) must not cost O(cluster) when it fits.
  void AddOutsideNodeStatuses(SchedulingAttempt* attempt);
  // A node the Filter plugins rejected: into the attempt's map, or aside while
  // defer_rejections_ (the cycle's main scan of an attempt that records no details).
  void RecordRejection(SchedulingAttempt* attempt, const NodeInfo* node, Status status);
  // Writes the rejections kept aside into the attempt (it failed: the FitError message and
  // PostFilter read them). Same cycle only: they point into the snapshot and the verdicts.
  void AddDeferredRejections(SchedulingAttempt* attempt);
  size_t NumDeferredRejections() const {
    return owned_rejections_.size() + kept_rejections_.size();
  }
  Status FindNodesThatPassFilters(Framework& fw, const CycleState& state, const PodInfo& pod,
                                  const std::vector<const NodeInfo*>& nodes, bool rotate,
                                  std::vector<const NodeInfo*>* feasible,
                                  SchedulingAttempt* attempt, bool use_memo = false);
  // FindNodesThatPassFilters over reused verdicts: a sequential scan from `start` that runs
  // the Filter plugins only on nodes without a valid verdict (those the last snapshot update
  // overwrote, a handful per cycle), so a reused verdict costs a load and a compare.
  Status FindNodesThatPassFiltersMemoized(Framework& fw, const CycleState& state,
                                          const PodInfo& pod,
                                          const std::vector<const NodeInfo*>& nodes, int start,
                                          int to_find, std::vector<const NodeInfo*>* feasible,
                                          SchedulingAttempt* attempt);
  // The steps of both scans (schedule_one.cc). FilterScan: where a scan starts, what it looks
  // for, how far it got.
  struct FilterScan;
  // Filters a window's nodes in parallel into filter_statuses_buffer_ / filter_ok_buffer_; the
  // first Error, if any.
  Status FilterWindow(Framework& fw, const CycleState& state, const PodInfo& pod,
                      const FilterScan& scan, int begin, int end);
  // Reads a filtered window in order up to the stopping point.
  void TakeFilterWindow(Framework& fw, FilterScan& scan, int begin, int end,
                        std::vector<const NodeInfo*>* feasible, SchedulingAttempt* attempt);
  // Memoized: gives the window's nodes without a verdict one; the first Error, if any.
  Status FilterUnknownNodes(Framework& fw, const CycleState& state, const PodInfo& pod,
                            const FilterScan& scan, int begin, int end);
  // Memoized: runs the Filter plugins kept out of the verdicts on the window's passing nodes
  // into fresh_statuses_buffer_ (empty when there are none); the first Error, if any.
  Status FilterAfresh(Framework& fw, const CycleState& state, const PodInfo& pod,
                      const FilterScan& scan, int begin, int end);
  // Memoized: reads the window's verdicts in order up to the stopping point.
  void TakeMemoizedWindow(Framework& fw, FilterScan& scan, int begin, int end,
                          std::vector<const NodeInfo*>* feasible, SchedulingAttempt* attempt);
  int NumFeasibleNodesToFind(const Framework& fw, int num_all_nodes) const;
  // The row of the table the pod goes to: the highest total, ties drawn at random.
  size_t SelectHostRow(const ScoreTable& table);
  // Opportunistic batching (batch_cycle.cc). After PreFilter: asks the batch for a hint and
  // checks it alone with Filter; true when it passed (then `feasible` holds it).
  bool TryBatchHint(Framework& fw, CycleState& state, const PodInfo& pod,
                    std::vector<const NodeInfo*>* feasible, SchedulingAttempt* attempt);
  // After the cycle chose `host` among `feasible` (scored in `table` when more than one).
  void StoreBatchResults(const Framework& fw, const PodInfo& pod, const std::string& host,
                         const std::vector<const NodeInfo*>& feasible, const ScoreTable& table,
                         const RawScoreMemo* memo = nullptr);
  // The memo a full cycle's Score plugins fill so that its raw scores can be kept for a
  // ranking: `reuse_memo` when there is one, else the batch's own (null when `fw` does not
  // batch or the pod is not signed).
  RawScoreMemo* BatchScoreMemo(const Framework& fw, RawScoreMemo* reuse_memo, size_t nodes);
  // Keeps the raw scores of `table`'s nodes (from `memo`) for a new ranking.
  void KeepRawScores(const Framework& fw, const ScoreTable& table, const RawScoreMemo* memo);
  void RunBindingCycle(std::unique_ptr<BindingTask> task);
  // Brings the snapshot up to date for a cycle of `fw`.
  void RefreshSnapshot(Framework& fw);
  // The assume, Reserve, Permit and binding hand-off of a pod placed on `host`.
  void CommitPlacement(Framework& fw, QueuedPodInfo qpi, CycleState state,
                       SchedulingAttempt attempt, const std::string& host);
  // The pod group cycle (pod_group_cycle.cc): `first` and the rest of its group's queued
  // members, placed one after another in one snapshot; all go to binding or none does.
  void ScheduleGroup(QueuedPodInfo first);
  struct GroupMember;
  // Tries one member in the group's snapshot, placing it there (and reserving) when it fits.
  void PlaceGroupMember(Framework& fw, GroupMember& member);
  // Takes the group's tentative placements out of the snapshot again, last first.
  void UnplaceGroupMembers(Framework& fw, std::vector<GroupMember>& members);
  // The group's verdict handed to each member: binding, or back to the queue with why.
  void SubmitGroupResult(Framework& fw, std::vector<GroupMember>& members, const Status& group);
  // Members (bound or assumed) of the group ns/name already scheduled.
  int ScheduledGroupMembers(const std::string& ns, const std::string& name) const;
  // After a FitError: the rejections into the attempt, the rejecting plugins into the pod.
  void NoteRejectingPlugins(QueuedPodInfo& qpi, SchedulingAttempt& attempt);
  // ScheduleOne's phases: the attempt's record, a failed cycle, the hand-off to binding.
  SchedulingAttempt StartAttempt(const Framework& fw, const QueuedPodInfo& qpi);
  void FailSchedulingCycle(Framework& fw, CycleState& state, QueuedPodInfo& qpi, const Status& s,
                           SchedulingAttempt& attempt);
  void StartBindingCycle(std::unique_ptr<BindingTask> task, bool waits);
  void HandleFailure(Framework& fw, QueuedPodInfo& qpi, const Status& status,
                     const std::optional<NominatingInfo>& nominating, SchedulingAttempt& attempt);
  void Report(const SchedulingAttempt& attempt);
  // Runs one extension point, reporting its duration and status to the metrics sink.
  template <class Run>
  Status Timed(const Framework& fw, std::string_view point, Run&& run) {
    if (!metrics_) return run();
    const TimePoint start = clock_->Now();
    Status status = run();
    metrics_->ExtensionPoint(fw.profile_name(), point, status, clock_->Now() - start);
    return status;
  }
  // Timed, for the points whose plugins return nothing (Unreserve, PostBind).
  template <class Run>
  void TimedVoid(const Framework& fw, std::string_view point, Run&& run) {
    if (!metrics_) return run();
    const TimePoint start = clock_->Now();
    run();
    metrics_->ExtensionPoint(fw.profile_name(), point, Status::Success(), clock_->Now() - start);
  }
  // Logs a failed write the scheduler goes on without.
  void LogFailedWrite(std::string_view what, const Pod& pod, const Error& error);
  // Runs an event handler, reporting its duration under `event` (kube-scheduler's event label).
  template <class Fn>
  void Handled(std::string_view event, Fn&& handle) {
    if (!metrics_) return handle();
    const TimePoint start = clock_->Now();
    handle();
    metrics_->EventHandling(event, clock_->Now() - start);
  }
  // Hands a cluster event to the queue, unless no plugin registered for it.
  void Requeue(const ClusterEvent& event, const EventObject& old_object,
               const EventObject& new_object, std::string_view except_uid = {});

  const config::SchedulerConfiguration* config_ = nullptr;  // gen_'s, for the scheduling thread
  const Registry* registry_ = nullptr;
  uint64_t seed_ = 1;
  std::vector<std::string> node_local_plugins_;
  bool reuse_equivalent_pod_results_ = true;
  ClusterClient* client_ = nullptr;
  const Clock* clock_ = nullptr;
  bool inline_binding_ = true;
  bool nominate_before_binding_ = true;
  bool pod_group_cycles_ = false;
  bool opportunistic_batching_ = true;
  // Set while a pod group's members are tried: SchedulePod keeps the group's snapshot.
  bool in_group_cycle_ = false;
  SchedulerMetricsSink* metrics_ = nullptr;
  observe::Logger* log_ = nullptr;
  bool record_details_ = true;
  size_t detail_nodes_ = 0;
  // The tie-break's draws: Random's sequence from the same seed, refilled faster (every node
  // of a large cluster scored means a draw per tied node).
  Mt19937_64 random_{1};
  // Picks the cycles whose plugins are timed; apart from random_ so that attaching metrics does
  // not change tie-breaks (the daemon decides as the simulator does).
  Random metrics_random_;
  std::unique_ptr<ThreadPoolParallelizer> parallelizer_;
  // Asynchronous preemptions under way, for every profile of every generation: a reload's new
  // DefaultPreemption keeps gating the preemptors of the old one (FrameworkServices).
  std::shared_ptr<preemption::PreemptionsInFlight> preemptions_in_flight_;
  std::unique_ptr<SchedulingQueue> queue_;
  Cache cache_;
  Snapshot snapshot_;
  // The configuration in use: replaced by the scheduling thread (under gen_mu_), read there
  // without a lock and elsewhere through CurrentGeneration().
  std::shared_ptr<Generation> gen_;
  mutable std::mutex gen_mu_;
  // Replaced generations, until nothing uses them (binding cycles, Permit waits, their timers
  // hold a reference). Under gen_mu_; has_retired_ tells the scheduling thread to look.
  std::vector<std::shared_ptr<Generation>> retired_;
  bool has_retired_ = false;
  // gen_'s QueueSort plugin (every generation's has the same name and args). Replaced before
  // the queue's lock is next taken, so no comparison still uses the old one once that returns.
  std::atomic<const QueueSortPlugin*> queue_sort_{nullptr};
  uint64_t generations_built_ = 0;
  // A reload waiting for the scheduling loop.
  std::mutex reload_mu_;
  std::optional<ReloadRequest> requested_reload_;
  std::atomic<bool> reload_requested_{false};
  // gen_'s extenders, for the scheduling thread.
  std::vector<Extender*> extenders_;
  bool extenders_filter_ = false;  // some extender filters or prioritizes
  bool extenders_prioritize_ = false;
  AttemptObserver* observer_ = nullptr;
  std::mutex observer_mu_;
  int next_start_node_index_ = 0;
  // Opportunistic batching: its kept rankings, the scheduling cycles so far (a ranking serves
  // the next cycle of its profile only), and this cycle's hint and whether its pod is signed.
  OpportunisticBatch batch_;
  uint64_t cycle_count_ = 0;
  std::string batch_hint_;
  bool batch_signable_ = false;
  // The raw Score plugin scores of the kept ranking's nodes (by name), from the full cycle that
  // made it, and which plugins ran then: a rescore scores only the previous pod's node and
  // normalizes it with these. Empty when that cycle's raw scores were not all kept.
  std::unordered_map<std::string, std::vector<int64_t>> batch_raw_;
  std::vector<bool> batch_raw_ran_;
  // Where a full cycle of a signed pod records its raw scores when no reuse memo does.
  RawScoreMemo batch_memo_;
  std::vector<uint32_t> batch_rows_;
  // This cycle's PreFilterResult, when it excluded nodes, and the status they share.
  struct OutsideNodes {
    PreFilterResult kept;
    Status status;
  };
  std::optional<OutsideNodes> outside_nodes_;
  std::vector<const NodeInfo*> feasible_buffer_;  // SchedulePod's feasible nodes
  std::vector<Status> filter_statuses_buffer_;    // FindNodesThatPassFilters' per-window results
  std::vector<char> filter_ok_buffer_;
  // Per-node results reused across cycles of equivalent pods.
  NodeResultReuse reuse_;
  std::vector<Status> fresh_statuses_buffer_;  // a window's afresh Filter results
  // The cycle's Filter plugins that run (Framework::ActiveFilters): all of them, or with reuse
  // those whose verdicts are kept and those run afresh.
  std::vector<Framework::ActiveFilter> active_filters_, fresh_filters_;
  ScoreTable score_scratch_;  // SchedulePod's table when the attempt is not recorded
  std::vector<uint32_t> unknown_rows_buffer_;           // a filter window's nodes without a verdict
  std::vector<const NodeInfo*> extender_input_buffer_;  // the feasible nodes before extenders
  // This cycle's rejections kept aside (RecordRejection): statuses the scan produced, and
  // reused ones (pointing into the slot's rejections, which no insertion moves).
  bool defer_rejections_ = false;
  std::vector<std::pair<const NodeInfo*, Status>> owned_rejections_;
  std::vector<std::pair<const NodeInfo*, const Status*>> kept_rejections_;
  std::vector<uint64_t> filter_rejected_at_;  // per Filter plugin, for evaluation counts

  std::vector<std::unique_ptr<BindingTask>> waiting_bindings_;
  // Declared last: destroyed first, draining binding cycles while everything they use lives.
  std::unique_ptr<BindingExecutor> binding_executor_;
  std::atomic<int> binding_cycles_running_{0};
  // Permit timeouts of pods waiting with no thread (threaded binding only).
  std::unique_ptr<DeadlineTimer> permit_timer_;
  // Set by the destructor: binding cycles not past Permit forget their pod instead of binding.
  std::atomic<bool> stopping_{false};
};

}  // namespace berth
