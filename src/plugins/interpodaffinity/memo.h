// Cross-cycle indexes of InterPodAffinity (internal).
//
// IncomingMemo: for one set of incoming-pod terms, per-group counts of the existing pods that
// match them. Pods of one workload share their terms, so consecutive cycles reuse the memo and
// only rematch the nodes that changed. MemoCache keeps the most recently used memos.
//
// ExistingTermIndex: the existing pods' own terms (e.g. their required anti-affinity), grouped
// by identical term. Each group counts where the pods carrying it sit; a cycle only matches each
// distinct term against the incoming pod once, instead of every pod's terms.
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "berth/framework/node_info.h"
#include "plugins/interpodaffinity/node_index.h"

namespace berth::interpodaffinity {

// Appends an unambiguous encoding of one incoming-pod term (after its namespaceSelector has
// been folded into its namespaces) to `out`. `raw` is the term as the pod spec states it.
void AppendIncomingTermSignature(std::string& out, const Pod& pod, const PodAffinityTerm& raw,
                                 const AffinityTerm& merged);

struct IncomingMemo {
  explicit IncomingMemo(NodeIndex::PodsOf pods_of) : index(pods_of) {}
  // The terms the memo counts matches of; compute functions read them concurrently. The first
  // `split` terms are affinity terms, the rest anti-affinity terms.
  std::vector<AffinityTerm> terms;
  size_t split = 0;
  NodeIndex index;
};

// The most recently used memos by signature, at most `capacity` of them.
class MemoCache {
 public:
  explicit MemoCache(size_t capacity) : capacity_(capacity) {}
  // The memo for `signature`, or null.
  IncomingMemo* Find(const std::string& signature);
  // Stores a new memo (evicting the least recently used one when full) and returns it.
  IncomingMemo* Insert(std::string signature, std::unique_ptr<IncomingMemo> memo);

 private:
  size_t capacity_;
  // Front = most recently used.
  std::list<std::pair<std::string, std::unique_ptr<IncomingMemo>>> memos_;
};

class ExistingTermIndex {
 public:
  enum class Kind : char {
    kRequiredAffinity = 'A',
    kRequiredAntiAffinity = 'N',
    kPreferredAffinity = 'P',
    kPreferredAntiAffinity = 'Q',
  };
  struct Group {
    AffinityTerm term;  // as compiled for the first pod that carried it
    Kind kind;
    int32_t weight;  // the term's weight; 0 for required terms
    std::string signature;
  };

  // Tracks the terms of the given kinds of the pods `pods_of` returns.
  ExistingTermIndex(NodeIndex::PodsOf pods_of, std::vector<Kind> kinds)
      : index_(pods_of), kinds_(std::move(kinds)) {}

  void Refresh(std::span<const NodeInfo* const> nodes);

  // Calls fn(group, counter) for every group that some pod on a node carries; the counter
  // counts, per topology pair, the pods carrying the term.
  template <class F>
  void ForEachGroup(F&& fn) const {
    for (uint32_t g = 0; g < groups_.size(); ++g)
      if (groups_[g] && index_.references(g) > 0) fn(*groups_[g], index_.counter(g));
  }

 private:
  void Compute(const Node& node, const std::vector<PodInfoPtr>& pods,
               std::vector<Contribution>& out);
  uint32_t GroupFor(const Pod& pod, const PodAffinityTerm* raw, const AffinityTerm& term, Kind kind,
                    int32_t weight);

  NodeIndex index_;
  std::vector<Kind> kinds_;
  std::unordered_map<std::string, uint32_t> by_signature_;
  std::vector<std::optional<Group>> groups_;  // by group id
  std::string scratch_;
};

// Everything InterPodAffinity keeps across cycles.
struct PluginCaches {
  // Incoming pods' required terms (PreFilter) and preferred terms (PreScore).
  MemoCache required{8};
  MemoCache preferred{8};
  // Existing pods' required anti-affinity (PreFilter) and the terms scoring reads (PreScore).
  ExistingTermIndex existing_anti_affinity{&NodeInfo::pods_with_required_anti_affinity,
                                           {ExistingTermIndex::Kind::kRequiredAntiAffinity}};
  ExistingTermIndex existing_scoring{
      &NodeInfo::pods_with_affinity,
      {ExistingTermIndex::Kind::kRequiredAffinity, ExistingTermIndex::Kind::kPreferredAffinity,
       ExistingTermIndex::Kind::kPreferredAntiAffinity}};
};

}  // namespace berth::interpodaffinity
