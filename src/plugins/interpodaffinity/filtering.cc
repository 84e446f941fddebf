#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugins/interpodaffinity/chunks.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/state.h"

namespace berth::interpodaffinity {
namespace {

// Namespace labels for matching the incoming pod's own terms: their namespaceSelector has been
// folded into the namespace set, so only an "everything" selector is left to consult, and it
// matches an empty set as well as any other.
const Labels kNoLabels;

bool MatchesAll(const std::vector<AffinityTerm>& terms, const Pod& pod) {
  if (terms.empty()) return false;
  for (const auto& t : terms)
    if (!t.Matches(pod, &kNoLabels)) return false;
  return true;
}

// Per-chunk accumulator of the incoming pod's affinity / anti-affinity matches.
struct IncomingAcc {
  TopologyCounter affinity, anti_affinity;
  std::vector<TopologyCounter::KeyId> affinity_ids, anti_affinity_ids;
  // Scratch reused for every node of the chunk.
  std::vector<const std::string*> affinity_values, anti_affinity_values;
  std::vector<int64_t> anti_affinity_matches;
  bool ready = false;

  void Init(const IncomingPod& in) {
    for (const auto& t : in.required_affinity)
      affinity_ids.push_back(affinity.InternKey(t.topology_key));
    for (const auto& t : in.required_anti_affinity)
      anti_affinity_ids.push_back(anti_affinity.InternKey(t.topology_key));
    affinity_values.resize(in.required_affinity.size());
    anti_affinity_values.resize(in.required_anti_affinity.size());
    anti_affinity_matches.resize(in.required_anti_affinity.size());
    ready = true;
  }
};

void CountIncomingMatches(const IncomingPod& in, const NodeInfo& ni, IncomingAcc& acc) {
  const Node* node = ni.node();
  if (!node || ni.pods().empty()) return;
  const auto& aff = in.required_affinity;
  const auto& anti = in.required_anti_affinity;

  // The node's value for each term's topology key is the same for every pod on it.
  bool any_affinity = false, any_anti = false;
  for (size_t i = 0; i < aff.size(); ++i) {
    acc.affinity_values[i] = NodeLabel(*node, aff[i].topology_key);
    any_affinity |= acc.affinity_values[i] != nullptr;
  }
  for (size_t i = 0; i < anti.size(); ++i) {
    acc.anti_affinity_values[i] = NodeLabel(*node, anti[i].topology_key);
    any_anti |= acc.anti_affinity_values[i] != nullptr;
    acc.anti_affinity_matches[i] = 0;
  }
  if (!any_affinity && !any_anti) return;

  int64_t match_all = 0;
  for (const PodInfoPtr& existing : ni.pods()) {
    const Pod& p = *existing->pod;
    if (any_affinity && MatchesAll(aff, p)) ++match_all;
    if (any_anti) {
      for (size_t i = 0; i < anti.size(); ++i)
        if (acc.anti_affinity_values[i] && anti[i].Matches(p, &kNoLabels))
          ++acc.anti_affinity_matches[i];
    }
  }
  if (match_all > 0) {
    for (size_t i = 0; i < aff.size(); ++i)
      if (acc.affinity_values[i])
        acc.affinity.Add(acc.affinity_ids[i], *acc.affinity_values[i], match_all);
  }
  for (size_t i = 0; i < anti.size(); ++i)
    if (acc.anti_affinity_matches[i] > 0)
      acc.anti_affinity.Add(acc.anti_affinity_ids[i], *acc.anti_affinity_values[i],
                            acc.anti_affinity_matches[i]);
}

// Adds, for every required anti-affinity term of `existing` that matches the incoming pod, the
// node's pair for the term's topology key.
void CountExistingAntiAffinity(const IncomingPod& in, const PodInfo& existing, const Node& node,
                               int64_t multiplier, TopologyCounter& counts) {
  for (const auto& t : existing.required_anti_affinity) {
    const std::string* value = NodeLabel(node, t.topology_key);
    if (value && t.Matches(*in.pod, &in.namespace_labels))
      counts.Add(t.topology_key, *value, multiplier);
  }
}

bool SatisfyPodAffinity(const PreFilterState& s, const Node& node) {
  const IncomingPod& in = *s.incoming;
  bool pods_exist = true;
  for (size_t i = 0; i < in.required_affinity.size(); ++i) {
    const std::string* value = NodeLabel(node, in.required_affinity[i].topology_key);
    // Every topology key must be present on the node, even for the first pod of a group.
    if (!value) return false;
    if (s.affinity_counts.Get(in.affinity_key_ids[i], *value) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group whose members attract each other: no pod anywhere matches the
  // terms yet, but the pod matches them itself, so it may go to any node with the keys.
  return s.affinity_counts.empty() && in.matches_own_affinity;
}

bool SatisfyPodAntiAffinity(const PreFilterState& s, const Node& node) {
  if (s.anti_affinity_counts.empty()) return true;
  const IncomingPod& in = *s.incoming;
  for (size_t i = 0; i < in.required_anti_affinity.size(); ++i) {
    const std::string* value = NodeLabel(node, in.required_anti_affinity[i].topology_key);
    if (value && s.anti_affinity_counts.Get(in.anti_affinity_key_ids[i], *value) > 0) return false;
  }
  return true;
}

bool SatisfyExistingPodsAntiAffinity(const PreFilterState& s, const Node& node) {
  const TopologyCounter& counts = s.existing_anti_affinity_counts;
  if (counts.empty()) return true;
  // Only the keys that appear in the counts can match one of the node's labels.
  const auto& keys = counts.keys();
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::string* value = NodeLabel(node, keys[k]);
    if (value && counts.Get(static_cast<TopologyCounter::KeyId>(k), *value) > 0) return false;
  }
  return true;
}

}  // namespace

Status InterPodAffinity::PreFilter(CycleState& state, const PodInfo& pod_info,
                                   std::span<NodeInfo* const> nodes, PreFilterResult* result) {
  const Pod& pod = *pod_info.pod;
  if (auto err = AffinityParseError(pod)) return Status::Unresolvable("parsing pod: " + *err);

  auto in = std::make_shared<IncomingPod>();
  in->pod = pod_info.pod;
  in->required_affinity = pod_info.required_affinity;
  in->required_anti_affinity = pod_info.required_anti_affinity;
  std::optional<std::vector<Ptr<Namespace>>> namespaces;
  for (auto& t : in->required_affinity) MergeNamespaceSelector(t, handle_.client(), namespaces);
  for (auto& t : in->required_anti_affinity)
    MergeNamespaceSelector(t, handle_.client(), namespaces);
  in->namespace_labels = NamespaceLabels(handle_.client(), pod.metadata.namespace_);
  in->matches_own_affinity = MatchesAll(in->required_affinity, pod);

  auto s = std::make_shared<PreFilterState>();
  for (const auto& t : in->required_affinity)
    in->affinity_key_ids.push_back(s->affinity_counts.InternKey(t.topology_key));
  for (const auto& t : in->required_anti_affinity)
    in->anti_affinity_key_ids.push_back(s->anti_affinity_counts.InternKey(t.topology_key));

  const auto& with_anti = handle_.snapshot().have_pods_with_required_anti_affinity();
  auto existing = ForEachChunk<TopologyCounter>(
      handle_.parallelizer(), with_anti.size(),
      [&](size_t begin, size_t end, TopologyCounter& acc) {
        for (size_t i = begin; i < end; ++i) {
          const NodeInfo& ni = *with_anti[i];
          if (!ni.node()) continue;
          for (const PodInfoPtr& e : ni.pods_with_required_anti_affinity())
            CountExistingAntiAffinity(*in, *e, *ni.node(), 1, acc);
        }
      });
  for (const auto& c : existing) s->existing_anti_affinity_counts.Merge(c);

  if (!in->required_affinity.empty() || !in->required_anti_affinity.empty()) {
    auto incoming = ForEachChunk<IncomingAcc>(handle_.parallelizer(), nodes.size(),
                                              [&](size_t begin, size_t end, IncomingAcc& acc) {
                                                acc.Init(*in);
                                                for (size_t i = begin; i < end; ++i)
                                                  CountIncomingMatches(*in, *nodes[i], acc);
                                              });
    for (const auto& c : incoming) {
      if (!c.ready) continue;
      s->affinity_counts.Merge(c.affinity);
      s->anti_affinity_counts.Merge(c.anti_affinity);
    }
  }

  if (s->existing_anti_affinity_counts.empty() && in->required_affinity.empty() &&
      in->required_anti_affinity.empty()) {
    return Status::Skip();
  }
  s->incoming = std::move(in);
  state.Write(kPreFilterStateKey, std::move(s));
  return Status::Success();
}

Status InterPodAffinity::Filter(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node_info) const {
  const PreFilterState* s = state.Read(kPreFilterStateKey);
  if (!s) {
    return Status::Error("error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
  }
  const Node* node = node_info.node();
  if (!node) return Status::Error("node not found");

  if (!SatisfyPodAffinity(*s, *node))
    return Status::Unresolvable(std::string(kErrReasonAffinityRulesNotMatch));
  if (!SatisfyPodAntiAffinity(*s, *node))
    return Status::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
  if (!SatisfyExistingPodsAntiAffinity(*s, *node))
    return Status::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
  return Status::Success();
}

Status InterPodAffinity::UpdateWithPod(CycleState& state, const PodInfo& other,
                                       const NodeInfo& node_info, int64_t multiplier) const {
  PreFilterState* s = state.ReadMutable(kPreFilterStateKey);
  if (!s) {
    return Status::Error("error reading \"PreFilterInterPodAffinity\" from cycleState: not found");
  }
  const Node* node = node_info.node();
  if (!node) return Status::Error("node not found");
  const IncomingPod& in = *s->incoming;
  const Pod& p = *other.pod;

  CountExistingAntiAffinity(in, other, *node, multiplier, s->existing_anti_affinity_counts);
  if (MatchesAll(in.required_affinity, p)) {
    for (size_t i = 0; i < in.required_affinity.size(); ++i)
      if (const std::string* v = NodeLabel(*node, in.required_affinity[i].topology_key))
        s->affinity_counts.Add(in.affinity_key_ids[i], *v, multiplier);
  }
  for (size_t i = 0; i < in.required_anti_affinity.size(); ++i) {
    const AffinityTerm& t = in.required_anti_affinity[i];
    const std::string* v = NodeLabel(*node, t.topology_key);
    if (v && t.Matches(p, &kNoLabels))
      s->anti_affinity_counts.Add(in.anti_affinity_key_ids[i], *v, multiplier);
  }
  return Status::Success();
}

Status InterPodAffinity::AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                const PodInfoPtr& pod_to_add, const NodeInfo& node) const {
  return UpdateWithPod(state, *pod_to_add, node, 1);
}

Status InterPodAffinity::RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                   const PodInfoPtr& pod_to_remove, const NodeInfo& node) const {
  return UpdateWithPod(state, *pod_to_remove, node, -1);
}

}  // namespace berth::interpodaffinity
