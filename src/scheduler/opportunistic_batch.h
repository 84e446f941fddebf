// OpportunisticBatch (the OpportunisticBatching feature gate, on by default as in
// kube-scheduler v1.37): a profile's ranking of the nodes one pod's full cycle scored, kept so
// that the next pod, when it has the same signature (PodSigner), is offered the next node of
// that ranking as a hint. The scheduling cycle then checks only that node with Filter and
// takes it, without filtering or scoring the others; when the hint fails Filter the cycle runs
// in full and its ranking replaces the kept one.
//
// The ranking serves consecutive cycles of one profile only, for at most kMaxAge from the full
// cycle that made it, and only while the node the previous pod took can host no more such pods
// (Filter rejects the new pod there); when it still can, that node is scored again and competes
// for the hint with the kept ones, which keep the raw scores of the cycle that ranked them
// (Rescore).
//
// Unlike equivalence reuse (node_result_reuse.h), which keeps per-node verdicts and scores and
// decides exactly as a full cycle, a batched pod's decision can differ from a full cycle's: the
// ranking covered only the nodes its cycle scored and breaks ties its own way.
//
// Threads: the scheduling thread only.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "berth/framework/clock.h"
#include "berth/framework/pod_signer.h"
#include "runtime/framework.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

class OpportunisticBatch {
 public:
  // How long a ranking serves after the full cycle that made it.
  static constexpr Duration kMaxAge = std::chrono::milliseconds(500);

  // Why a kept ranking was dropped (kube-scheduler's scheduler_batch_cache_flushed_total
  // reasons, in its spelling by Reasons()).
  enum class Flush : uint8_t {
    kPodSkipped,       // a cycle of another profile, or one that placed nothing, came between
    kPodNominated,     // the pod has a nominated node: it tries that one instead
    kPodIncompatible,  // another signature, or none
    kExpired,          // older than kMaxAge
    kNodeMissing,      // a node of the ranking, or the previous pod's, left the cluster
    kPreScoreError,
    kRescoreError,
    kPodNotBatchable,  // a full cycle for an unsignable pod replaced it with nothing
    kEmptyList,        // a full cycle left no other node to rank
    kCount,
  };
  static std::string_view FlushReason(Flush f);

  // What the scheduling cycle checks for a hint.
  class Checks {
   public:
    enum class LastNode : uint8_t { kMissing, kFull, kStillFits };
    virtual ~Checks() = default;
    // Filter for the new pod on the node the previous pod took.
    virtual LastNode CheckLastChosen(const std::string& node) = 0;
    // Scores the last node of `ranking` (the kept nodes, then the previous pod's node) for the
    // new pod, normalizes it with the kept nodes' earlier raw scores, and orders `ranking` best
    // first; a Flush reason when it could not.
    virtual std::optional<Flush> Rescore(std::vector<std::string>* ranking) = 0;
  };

  struct Counts {
    uint64_t no_hint = 0, hint_used = 0, hint_not_used = 0;
    std::array<uint64_t, static_cast<size_t>(Flush::kCount)> flushed{};
  };

  // Which profiles sign pods: every PreFilter, Filter, PreScore and Score plugin implements
  // PodSigner and no extender is configured. `enabled`: the feature gate.
  // `metrics` (null: none) receives each attempt and flush.
  void SetUp(const std::vector<std::unique_ptr<Framework>>& profiles, bool enabled,
             bool has_extenders, SchedulerMetricsSink* metrics = nullptr);
  // A profile (its Framework, as a key) named `name` that signs pods with `signers` (SetUp;
  // tests).
  void AddProfile(const void* profile, std::vector<const PodSigner*> signers,
                  std::string name = "");
  // Whether `profile` signs pods at all.
  bool Batches(const void* profile) const;
  // Whether `pod` has a signature under `profile` (every signer can sign it).
  bool Signable(const void* profile, const Pod& pod) const;

  // After PreFilter in scheduling cycle `cycle` (cycles of every profile counted): the node
  // to try alone, or "" for a full cycle.
  std::string Hint(const void* profile, const std::shared_ptr<const Pod>& pod, bool signable,
                   uint64_t cycle, TimePoint now, Checks& checks);
  // After the cycle chose `chosen` (before Reserve): `hinted` is what Hint returned, `rest`
  // the other scored nodes best first (empty when one node was feasible; the caller need not
  // build it for a pod that is not `signable`, whose ranking is dropped as not batchable).
  void Store(const void* profile, const std::shared_ptr<const Pod>& pod, bool signable,
             const std::string& hinted, const std::string& chosen, std::vector<std::string> rest,
             uint64_t cycle, TimePoint now);

  const Counts& counts() const { return counts_; }
  uint64_t flushed(Flush why) const { return counts_.flushed[static_cast<size_t>(why)]; }
  // The nodes left in `profile`'s kept ranking, best first (tests).
  std::vector<std::string> Ranking(const void* profile) const;

 private:
  struct State {
    std::string name;
    std::vector<const PodSigner*> signers;
    // The kept ranking, best first from `next`, and the pod whose cycle made it.
    std::vector<std::string> ranking;
    size_t next = 0;
    std::shared_ptr<const Pod> signed_pod;
    TimePoint created{};
    // The last cycle that chose a node, and that node.
    uint64_t last_cycle = 0;
    bool has_last = false;
    std::string last_chosen;
    bool Empty() const { return next >= ranking.size(); }
  };
  bool SameSignature(const State& s, const Pod& a, const Pod& b) const;
  // Whether the kept ranking may serve `pod` (drops it, counting why, when not).
  bool Compatible(State& s, const Pod& pod, bool signable, uint64_t cycle, TimePoint now);
  void Drop(State& s, Flush why);
  void Attempt(const State& s, std::string_view result, uint64_t& count);

  bool enabled_ = false;
  std::unordered_map<const void*, State> states_;
  Counts counts_;
  SchedulerMetricsSink* metrics_ = nullptr;
};

}  // namespace berth
