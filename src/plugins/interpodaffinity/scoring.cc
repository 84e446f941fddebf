#include <cstdint>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugins/interpodaffinity/chunks.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/state.h"

namespace berth::interpodaffinity {
namespace {

const Labels kNoLabels;

// What PreScore needs while walking the existing pods.
struct ScoreInputs {
  const Pod* pod = nullptr;
  std::vector<WeightedAffinityTerm> preferred_affinity;  // namespaceSelector folded in
  std::vector<WeightedAffinityTerm> preferred_anti_affinity;
  Labels namespace_labels;
  int32_t hard_pod_affinity_weight = 0;
};

void ProcessTerm(const AffinityTerm& term, int32_t weight, const Pod& pod, const Labels* ns_labels,
                 const Node& node, int32_t multiplier, TopologyCounter& acc) {
  const std::string* value = NodeLabel(node, term.topology_key);
  if (value && term.Matches(pod, ns_labels))
    acc.Add(term.topology_key, *value, static_cast<int64_t>(weight * multiplier));
}

void ProcessTerms(const std::vector<WeightedAffinityTerm>& terms, const Pod& pod,
                  const Labels* ns_labels, const Node& node, int32_t multiplier,
                  TopologyCounter& acc) {
  for (const auto& t : terms) ProcessTerm(t.term, t.weight, pod, ns_labels, node, multiplier, acc);
}

void ProcessExistingPod(const ScoreInputs& in, const PodInfo& existing, const Node& node,
                        TopologyCounter& acc) {
  const Pod& incoming = *in.pod;
  // The incoming pod's preferred terms, attracted to / repelled by the existing pod.
  ProcessTerms(in.preferred_affinity, *existing.pod, &kNoLabels, node, 1, acc);
  ProcessTerms(in.preferred_anti_affinity, *existing.pod, &kNoLabels, node, -1, acc);
  // The existing pod's terms, matched against the incoming pod: its required affinity counts
  // with hardPodAffinityWeight, its preferred terms with their own weights.
  if (in.hard_pod_affinity_weight > 0) {
    for (const auto& t : existing.required_affinity)
      ProcessTerm(t, in.hard_pod_affinity_weight, incoming, &in.namespace_labels, node, 1, acc);
  }
  ProcessTerms(existing.preferred_affinity, incoming, &in.namespace_labels, node, 1, acc);
  ProcessTerms(existing.preferred_anti_affinity, incoming, &in.namespace_labels, node, -1, acc);
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

  ScoreInputs in;
  in.pod = &pod;
  in.preferred_affinity = pod_info.preferred_affinity;
  in.preferred_anti_affinity = pod_info.preferred_anti_affinity;
  std::optional<std::vector<Ptr<Namespace>>> namespaces;
  for (auto& t : in.preferred_affinity)
    MergeNamespaceSelector(t.term, handle_.client(), namespaces);
  for (auto& t : in.preferred_anti_affinity)
    MergeNamespaceSelector(t.term, handle_.client(), namespaces);
  in.namespace_labels = NamespaceLabels(handle_.client(), pod.metadata.namespace_);
  in.hard_pod_affinity_weight = args_.hard_pod_affinity_weight;

  // Without preferred terms of its own, only existing pods with affinity can contribute. Like
  // kube-scheduler, every node of the snapshot is walked, not just the feasible ones: a pair's
  // weight comes from pods anywhere in the topology domain.
  const Snapshot& snapshot = handle_.snapshot();
  const std::vector<NodeInfo*>& nodes =
      has_constraints ? snapshot.nodes() : snapshot.have_pods_with_affinity();
  auto chunks = ForEachChunk<TopologyCounter>(
      handle_.parallelizer(), nodes.size(), [&](size_t begin, size_t end, TopologyCounter& acc) {
        for (size_t i = begin; i < end; ++i) {
          const NodeInfo& ni = *nodes[i];
          const Node* node = ni.node();
          if (!node || node->metadata.labels.empty()) continue;
          const auto& pods = has_constraints ? ni.pods() : ni.pods_with_affinity();
          for (const PodInfoPtr& existing : pods) ProcessExistingPod(in, *existing, *node, acc);
        }
      });

  auto s = std::make_shared<PreScoreState>();
  for (const auto& c : chunks) s->topology_score.Merge(c);
  // Nothing matched anywhere: every node would score the same.
  if (s->topology_score.entries() == 0) return Status::Skip();
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
  const TopologyCounter& scores = s->topology_score;
  const auto& keys = scores.keys();
  int64_t sum = 0;
  for (size_t k = 0; k < keys.size(); ++k) {
    if (const std::string* value = NodeLabel(*node, keys[k]))
      sum += scores.Get(static_cast<TopologyCounter::KeyId>(k), *value);
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
  if (s->topology_score.entries() == 0) return Status::Success();

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
