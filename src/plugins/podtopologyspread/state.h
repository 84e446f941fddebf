// Cycle state of PodTopologySpread (internal to the plugin and its tests).
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/node_info.h"
#include "plugins/podtopologyspread/constraints.h"
#include "plugins/podtopologyspread/spread_cache.h"

namespace berth::podtopologyspread {

// Matching-pod counts of one DoNotSchedule constraint over its eligible domains. A domain is
// eligible when at least one node of it carries every constraint's key and passes this
// constraint's inclusion policies.
class DomainCounts {
 public:
  DomainCounts() = default;
  explicit DomainCounts(std::shared_ptr<const KeyDomains> domains);

  const KeyDomains& domains() const { return *domains_; }
  // PreFilter fills these per domain id (pods counted, eligible flag), then calls Seal once.
  int32_t* mutable_counts() { return count_.data(); }
  uint8_t* mutable_eligible() { return eligible_.data(); }
  void Seal();

  // Adds delta (AddPod / RemovePod) to a domain, making it eligible if it was not. `domain` may
  // be -1 for a value absent from domains(); the value then names it.
  void Update(int32_t domain, std::string_view value, int32_t delta);

  // Matching pods in a domain (0 when not eligible).
  int32_t Count(int32_t domain) const { return count_[domain]; }
  // Same, by value (for nodes outside the cycle's node table).
  int32_t CountOfValue(std::string_view value) const;
  // Eligible domains and the minimum count among them (INT32_MAX when there are none).
  int32_t num_domains() const { return num_domains_; }
  int32_t MinCount() const;
  // Count of an eligible domain by value; nullopt when the domain is not eligible.
  std::optional<int32_t> EligibleCount(std::string_view value) const;

  bool self_match = false;  // the incoming pod matches the constraint's selector

 private:
  void Histogram(int32_t count, int32_t delta);

  std::shared_ptr<const KeyDomains> domains_;
  std::vector<int32_t> count_;
  std::vector<uint8_t> eligible_;
  // Eligible domains whose value no node of the table has (added by AddPod on foreign nodes).
  std::map<std::string, int32_t, std::less<>> extra_;
  // count -> number of eligible domains holding exactly that many pods; keeps the minimum exact
  // under AddPod / RemovePod.
  std::map<int32_t, int32_t> histogram_;
  int32_t num_domains_ = 0;
};

class FilterState final : public StateData {
 public:
  std::shared_ptr<StateData> Clone() const override { return std::make_shared<FilterState>(*this); }

  std::shared_ptr<const std::vector<SpreadConstraint>> constraints;  // shared by clones
  std::shared_ptr<const NodeTable> table;
  std::vector<DomainCounts> counts;  // parallel to *constraints
};

inline constexpr StateKey<FilterState> kFilterStateKey{"PreFilterPodTopologySpread"};

class ScoreState final : public StateData, public std::enable_shared_from_this<ScoreState> {
 public:
  // Read-only after PreScore, so clones share it.
  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<ScoreState>(shared_from_this());
  }

  // Raw score of a node (0 for ignored nodes). Nodes PreScore did not see are computed here.
  int64_t RawScore(const NodeInfo& node) const;
  // True for feasible nodes lacking a topology key while keys are required.
  bool Ignored(const NodeInfo& node) const;
  // Where `nodes` sits in the feasible list PreScore saw, when it is a part of that very list
  // (the framework scores runs of it): the position of nodes[0], else -1. Positions need no
  // lookup by node object, which misses the cache on a large cluster.
  int64_t RunPosition(std::span<const NodeInfo* const> nodes) const;

  std::vector<SpreadConstraint> constraints;
  std::vector<double> weights;  // ln(#domains + 2) per constraint
  bool require_all_keys = true;
  std::string pod_namespace;

  // The feasible nodes PreScore saw, in its order, and where its caller kept that list.
  std::vector<const NodeInfo*> feasible;
  uintptr_t feasible_address = 0;
  std::vector<int64_t> scores;  // by position in `feasible`
  std::vector<uint8_t> ignored;

  // Per constraint (filled for non-hostname ones): matching pods per domain over all nodes,
  // for the domains that some non-ignored feasible node is in. Index num_domains() stands for
  // nodes lacking the key when no node has the empty value (keys not required only).
  std::vector<std::shared_ptr<const KeyDomains>> domains;
  std::vector<std::vector<int64_t>> domain_pods;

 private:
  int64_t Compute(const NodeInfo& node) const;
  // Position of a node in `feasible` (the first holding its node object), -1 when absent.
  int32_t Find(const NodeInfo& node) const;

  // Feasible nodes by node object, built on the first lookup by node (Score and Ignored for one
  // node at a time, concurrently): most cycles score runs of the list and never need it.
  mutable std::atomic<int> lookups_{0};
  mutable std::once_flag index_once_;
  mutable PtrIndex index_;
};

inline constexpr StateKey<ScoreState> kScoreStateKey{"PreScorePodTopologySpread"};

}  // namespace berth::podtopologyspread
