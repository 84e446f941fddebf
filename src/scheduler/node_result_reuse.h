// NodeResultReuse: per-node Filter verdicts and raw Score plugin scores kept across consecutive
// scheduling cycles of equivalent pods (equivalence.h), so that the replicas of a workload pay
// for the nodes the last binds changed rather than for the whole cluster.
//
// Results are kept per position in the snapshot's node list and dropped for a node when a
// snapshot update overwrites it (TrackNodeChanges). Validity lives here, not in the NodeInfo,
// so that a reused result costs no load of it.
//
// Threads: the scheduling thread only (the scheduler's cycle), like the snapshot it follows.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "cache/cache.h"
#include "runtime/framework.h"

namespace berth {

class NodeResultReuse {
 public:
  enum class Mode : uint8_t {
    kOff,             // disabled (SchedulerOptions::reuse_equivalent_pod_results)
    kEquivalentPods,  // checked each cycle (Admit)
    kTemplateCopies,  // SchedulerOptions::node_local_plugins: the caller vouches
  };

  // One pod's results, per node position. Verdicts are epoch << 1 | feasible (a verdict of
  // another epoch is unknown); a rejected node's status is kept beside it, read only for
  // rejected nodes, as an index into the slot's distinct statuses (rejections mostly share a
  // few: 4 bytes per node instead of a status each).
  struct Slot {
    std::shared_ptr<const Pod> pod;  // the pod the results are for (null: none yet)
    uint64_t last_used = 0;
    std::vector<uint32_t> verdicts;
    uint32_t verdict_epoch = 1;
    std::vector<uint32_t> rejection_of;  // per node position, into `rejections`
    std::deque<Status> rejections;       // a deque: callers keep pointers into it for a cycle
    RawScoreMemo scores;

    void Resize(size_t n);
    void Drop();  // O(1) but for the distinct statuses: the next epoch
    // The index of `status` among the distinct statuses, added when new.
    uint32_t Intern(Status status);
    void Forget(uint32_t position) {
      verdicts[position] = 0;
      scores.filled[position] = 0;
    }
    uint32_t feasible_verdict() const { return verdict_epoch << 1 | 1; }
    uint32_t rejected_verdict() const { return verdict_epoch << 1; }
    bool Known(uint32_t position) const { return verdicts[position] >> 1 == verdict_epoch; }
  };

  // Decides which profiles reuse results: those whose PreFilter, Filter, PreScore and Score
  // plugins are all node-local (NodeLocalPluginNames), or all in `vouched_plugins` when the
  // caller vouches that every pod is a copy of one template (then with one profile only).
  void SetUp(const std::vector<std::unique_ptr<Framework>>& profiles,
             const std::vector<std::string>& vouched_plugins, bool reuse_equivalent_pods);

  bool enabled() const { return mode_ != Mode::kOff; }
  // Where Cache::UpdateSnapshot reports the nodes it overwrote (null when disabled).
  Cache::SnapshotChanges* changes() { return enabled() ? &changes_ : nullptr; }
  // Called after each snapshot update: drops the results of the nodes it overwrote (all of
  // them when the node list or the image table changed).
  void TrackNodeChanges(const Snapshot& snapshot);

  // After PreFilter: whether this cycle's Filter and Score reuse per-node results, and whose
  // (slot()). Takes the slot of an equivalent earlier pod, or the least recently used one.
  bool Admit(const Framework& fw, const CycleState& state, const PodInfo& pod, size_t num_nodes);
  // Forgets the cycle's slot (a cycle begins, or it ended).
  void EndCycle() { slot_ = nullptr; }
  // This cycle's slot when Admit took one.
  Slot* slot() { return slot_; }
  // This cycle's first Filter plugin run afresh (a spreading one), or the number of plugins.
  size_t fresh_filters_from() const { return fresh_filters_from_; }

  // This cycle's feasible nodes' positions, in the order the scan found them.
  std::vector<uint32_t>& feasible_rows() { return feasible_rows_; }
  // After extenders filtered `sent` down to `kept`: the rows of the kept nodes (none when they
  // came back in another order).
  void KeepRowsOf(const std::vector<const NodeInfo*>& sent,
                  const std::vector<const NodeInfo*>& kept);
  // The memo the Score plugins read and fill this cycle, when `feasible` nodes are the rows
  // the scan recorded; null otherwise.
  RawScoreMemo* ScoreMemo(size_t feasible);

  void CountReused(uint64_t n) { reused_verdicts_ += n; }
  uint64_t reused_verdicts() const { return reused_verdicts_; }
  // Cycles whose results were recorded for later pods (Admit returned true).
  uint64_t recorded_cycles() const { return recorded_cycles_; }

 private:
  struct Profile {
    const Framework* framework;
    std::vector<int> spreading_filters;  // their Filter runs afresh every cycle
    // DynamicResources' Filter, -1 without it: where it runs (claims, or extended resources a
    // DeviceClass backs) its verdicts hang on devices other pods hold, and Reserve needs the
    // allocations its Filter made this cycle, so nothing is reused.
    int dra_filter = -1;
    std::vector<bool> spreading_scores;  // RawScoreMemo::fresh
  };
  // The slot of an equivalent earlier pod, or one to record this pod's results in; null when
  // the pod is taken for a one-off (see kOneOffStreak).
  Slot* TakeSlot(const PodInfo& pod, size_t num_nodes);
  // A new pod while pods are one-offs: true when a pod remembered in `pending_` is equivalent
  // (the second of a run: record from now on); else the pod is remembered instead.
  bool SeenBefore(const PodInfo& pod);

  // Replicas of several workloads arrive interleaved (two Deployments scaling at once): a few
  // pods' results are kept, each slot costs ~8 bytes + 8 per score plugin per node.
  static constexpr size_t kMaxSlots = 4;
  // Where consecutive pods differ (batch systems, many small services) no pod reuses another's
  // results, and recording them is pure cost: verdicts, interned rejections and memo rows for
  // every evaluated node. After this many pods in a row matched no slot, a new pod records
  // only when an equivalent pod was seen among the last kMaxSlots new ones (its run's second
  // pod records; the third and later reuse). Decisions are the same either way.
  static constexpr uint32_t kOneOffStreak = 8;

  Mode mode_ = Mode::kOff;
  std::vector<Profile> profiles_;
  std::vector<Slot> slots_;
  Slot* slot_ = nullptr;
  size_t fresh_filters_from_ = 0;
  uint64_t cycles_ = 0;
  uint64_t reused_verdicts_ = 0;
  uint64_t recorded_cycles_ = 0;
  uint32_t new_pods_in_a_row_ = 0;  // consecutive pods that matched no slot
  // The last new pods taken for one-offs, oldest overwritten first.
  std::vector<std::shared_ptr<const Pod>> pending_;
  size_t next_pending_ = 0;
  Cache::SnapshotChanges changes_;
  int64_t snapshot_generation_ = -1;
  std::vector<uint32_t> feasible_rows_;
};

}  // namespace berth
