#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/memo.h"
#include "plugins/interpodaffinity/node_label.h"
#include "plugins/interpodaffinity/state.h"

namespace berth::interpodaffinity {
namespace {

const Labels kNoLabels;

// Counts, per node, the pods matching each of the memo's terms (group i for term i).
void CountPreferredMatches(const IncomingMemo& memo, const Node& node,
                           const std::vector<PodInfoPtr>& pods, std::vector<Contribution>& out) {
  if (pods.empty()) return;
  for (size_t i = 0; i < memo.terms.size(); ++i) {
    const AffinityTerm& t = memo.terms[i];
    const std::string* v = NodeLabel(node, t.topology_key);
    if (!v) continue;
    int64_t matches = 0;
    for (const PodInfoPtr& p : pods) matches += t.Matches(*p->pod, &kNoLabels);
    if (matches > 0) out.push_back({static_cast<uint32_t>(i), t.topology_key, *v, matches});
  }
}

// The signature of the pod's preferred terms, or nullopt when the compiled terms cannot be
// paired with the spec's (then nothing is cached).
std::optional<std::string> PreferredSignature(const Pod& pod,
                                              const std::vector<WeightedAffinityTerm>& affinity,
                                              const std::vector<WeightedAffinityTerm>& anti) {
  const auto& a = pod.spec.affinity;
  static const std::vector<WeightedPodAffinityTerm> kNone;
  const auto& raw_aff = a && a->pod_affinity ? a->pod_affinity->preferred : kNone;
  const auto& raw_anti = a && a->pod_anti_affinity ? a->pod_anti_affinity->preferred : kNone;
  if (raw_aff.size() != affinity.size() || raw_anti.size() != anti.size()) return std::nullopt;
  std::string sig;
  for (size_t i = 0; i < affinity.size(); ++i)
    AppendIncomingTermSignature(sig, pod, raw_aff[i].term, affinity[i].term);
  sig += '|';
  for (size_t i = 0; i < anti.size(); ++i)
    AppendIncomingTermSignature(sig, pod, raw_anti[i].term, anti[i].term);
  return sig;
}

}  // namespace

Status InterPodAffinity::PreScore(CycleState& state, const PodInfo& pod_info,
                                  std::span<const NodeInfo* const> feasible) {
  const Pod& pod = *pod_info.pod;
  const auto& a = pod.spec.affinity;
  const bool has_constraints =
      a && ((a->pod_affinity && !a->pod_affinity->preferred.empty()) ||
            (a->pod_anti_affinity && !a->pod_anti_affinity->preferred.empty()));
  if (args_.ignore_preferred_terms_of_existing_pods && !has_constraints) return Status::Skip();

  if (auto err = AffinityParseError(pod)) return Status::Error("failed to parse pod: " + *err);

  const Labels namespace_labels = NamespaceLabels(handle_.listers(), pod.metadata.namespace_);
  const Snapshot& snapshot = handle_.snapshot();
  // Like kube-scheduler, every node of the snapshot counts, not just the feasible ones: a pair's
  // weight comes from pods anywhere in the topology domain.
  auto s = std::make_shared<PreScoreState>();

  if (has_constraints) {
    // The pod's preferred terms, attracted to / repelled by existing pods.
    std::vector<WeightedAffinityTerm> affinity = pod_info.preferred_affinity();
    std::vector<WeightedAffinityTerm> anti = pod_info.preferred_anti_affinity();
    std::optional<std::vector<Ptr<Namespace>>> namespaces;
    for (auto& t : affinity) MergeNamespaceSelector(t.term, handle_.listers(), namespaces);
    for (auto& t : anti) MergeNamespaceSelector(t.term, handle_.listers(), namespaces);

    std::optional<std::string> sig = PreferredSignature(pod, affinity, anti);
    IncomingMemo* memo = sig ? caches_->preferred.Find(*sig) : nullptr;
    std::unique_ptr<IncomingMemo> uncached;
    if (!memo) {
      auto fresh = std::make_unique<IncomingMemo>(&NodeInfo::pods);
      for (const auto& t : affinity) fresh->terms.push_back(t.term);
      fresh->split = fresh->terms.size();
      for (const auto& t : anti) fresh->terms.push_back(t.term);
      for (size_t i = 0; i < fresh->terms.size(); ++i) fresh->index.NewGroup();
      if (sig) {
        memo = caches_->preferred.Insert(std::move(*sig), std::move(fresh));
      } else {
        uncached = std::move(fresh);
        memo = uncached.get();
      }
    }
    memo->index.Refresh(
        snapshot.nodes(),
        [memo](const Node& node, const std::vector<PodInfoPtr>& pods,
               std::vector<Contribution>& out) { CountPreferredMatches(*memo, node, pods, out); },
        &handle_.parallelizer(), &snapshot);
    for (size_t i = 0; i < memo->terms.size(); ++i) {
      const bool is_affinity = i < memo->split;
      const int32_t weight = is_affinity ? affinity[i].weight : anti[i - memo->split].weight;
      SharedCounter counts = memo->index.counter(static_cast<uint32_t>(i));
      // The memo dies with this call when uncached; the state keeps a copy.
      if (uncached) counts = std::make_shared<TopologyCounter>(*counts);
      s->sources.push_back({std::move(counts), is_affinity ? weight : -int64_t{weight}});
    }
  }

  // The existing pods' terms, matched against the pod: required affinity counts with
  // hardPodAffinityWeight, preferred terms with their own weights.
  ExistingTermIndex& existing = caches_->existing_scoring;
  existing.Refresh(snapshot.have_pods_with_affinity());
  existing.ForEachGroup([&](const ExistingTermIndex::Group& g, const SharedCounter& counts) {
    int64_t multiplier = 0;
    switch (g.kind) {
      case ExistingTermIndex::Kind::kRequiredAffinity:
        multiplier = args_.hard_pod_affinity_weight;
        break;
      case ExistingTermIndex::Kind::kPreferredAffinity:
        multiplier = g.weight;
        break;
      case ExistingTermIndex::Kind::kPreferredAntiAffinity:
        multiplier = -int64_t{g.weight};
        break;
      case ExistingTermIndex::Kind::kRequiredAntiAffinity:
        break;
    }
    if (multiplier != 0 && g.term.Matches(pod, &namespace_labels))
      s->sources.push_back({counts, multiplier});
  });

  // Nothing matched anywhere: every node would score the same.
  bool any = false;
  for (const auto& src : s->sources) any |= !src.counts->empty();
  if (!any) return Status::Skip();
  state.Write(kPreScoreStateKey, std::move(s));
  return Status::Success();
}

Status InterPodAffinity::Score(const CycleState& state, const PodInfo& pod,
                               const NodeInfo& node_info, int64_t* score) const {
  const PreScoreState* s = state.Read(kPreScoreStateKey);
  if (!s) {
    return Status::Error("failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
  }
  const Node* node = node_info.node();
  if (!node) return Status::Error("node not found");
  int64_t sum = 0;
  for (const auto& src : s->sources) {
    const auto& keys = src.counts->keys();
    int64_t count = 0;
    for (size_t k = 0; k < keys.size(); ++k) {
      if (const std::string* value = NodeLabel(*node, keys[k]))
        count += src.counts->Get(static_cast<TopologyCounter::KeyId>(k), *value);
    }
    sum += src.multiplier * count;
  }
  *score = sum;
  return Status::Success();
}

Status InterPodAffinity::NormalizeScore(const CycleState& state, const PodInfo& pod,
                                        std::span<NodeScore> scores) const {
  const PreScoreState* s = state.Read(kPreScoreStateKey);
  if (!s) {
    return Status::Error("failed to read \"PreScoreInterPodAffinity\" from cycleState: not found");
  }
  if (s->sources.empty()) return Status::Success();

  int64_t min_count = std::numeric_limits<int64_t>::max();
  int64_t max_count = std::numeric_limits<int64_t>::min();
  for (const NodeScore& ns : scores) {
    max_count = std::max(max_count, ns.score);
    min_count = std::min(min_count, ns.score);
  }
  const int64_t diff = max_count - min_count;
  for (NodeScore& ns : scores) {
    double f = 0;
    if (diff > 0) {
      f = static_cast<double>(kMaxNodeScore) *
          (static_cast<double>(ns.score - min_count) / static_cast<double>(diff));
    }
    ns.score = static_cast<int64_t>(f);
  }
  return Status::Success();
}

}  // namespace berth::interpodaffinity
