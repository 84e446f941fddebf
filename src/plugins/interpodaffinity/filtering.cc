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

// Counts, per node, the pods matching all of the memo's affinity terms (group 0, once per
// term) and the pods matching each anti-affinity term (group 1).
void CountRequiredMatches(const IncomingMemo& memo, const Node& node,
                          const std::vector<PodInfoPtr>& pods, std::vector<Contribution>& out) {
  if (pods.empty()) return;
  const auto& terms = memo.terms;
  bool any_affinity_key = false;
  for (size_t i = 0; i < memo.split; ++i)
    any_affinity_key |= NodeLabel(node, terms[i].topology_key) != nullptr;
  if (any_affinity_key) {
    int64_t match_all = 0;
    for (const PodInfoPtr& p : pods) {
      bool all = true;
      for (size_t i = 0; i < memo.split && all; ++i) all = terms[i].Matches(*p->pod, &kNoLabels);
      match_all += all;
    }
    if (match_all > 0) {
      for (size_t i = 0; i < memo.split; ++i)
        if (const std::string* v = NodeLabel(node, terms[i].topology_key))
          out.push_back({0, terms[i].topology_key, *v, match_all});
    }
  }
  for (size_t i = memo.split; i < terms.size(); ++i) {
    const std::string* v = NodeLabel(node, terms[i].topology_key);
    if (!v) continue;
    int64_t matches = 0;
    for (const PodInfoPtr& p : pods) matches += terms[i].Matches(*p->pod, &kNoLabels);
    if (matches > 0) out.push_back({1, terms[i].topology_key, *v, matches});
  }
}

// A counter nobody changes without copying it first.
SharedCounter EmptyCounter() {
  static const SharedCounter kEmpty = std::make_shared<TopologyCounter>();
  return kEmpty;
}

// The signature of the pod's required terms, or nullopt when the compiled terms cannot be paired
// with the spec's (then nothing is cached).
std::optional<std::string> RequiredSignature(const Pod& pod, const IncomingPod& in) {
  const auto& a = pod.spec.affinity;
  static const std::vector<PodAffinityTerm> kNone;
  const auto& aff = a && a->pod_affinity ? a->pod_affinity->required : kNone;
  const auto& anti = a && a->pod_anti_affinity ? a->pod_anti_affinity->required : kNone;
  if (aff.size() != in.required_affinity.size() ||
      anti.size() != in.required_anti_affinity.size()) {
    return std::nullopt;
  }
  std::string sig;
  for (size_t i = 0; i < aff.size(); ++i)
    AppendIncomingTermSignature(sig, pod, aff[i], in.required_affinity[i]);
  sig += '|';
  for (size_t i = 0; i < anti.size(); ++i)
    AppendIncomingTermSignature(sig, pod, anti[i], in.required_anti_affinity[i]);
  return sig;
}

bool SatisfyPodAffinity(const PreFilterState& s, const Node& node) {
  const IncomingPod& in = *s.incoming;
  const TopologyCounter& counts = *s.affinity_counts;
  bool pods_exist = true;
  for (const auto& term : in.required_affinity) {
    const std::string* value = NodeLabel(node, term.topology_key);
    // Every topology key must be present on the node, even for the first pod of a group.
    if (!value) return false;
    if (counts.Get(term.topology_key, *value) <= 0) pods_exist = false;
  }
  if (pods_exist) return true;
  // The first pod of a group whose members attract each other: no pod anywhere matches the
  // terms yet, but the pod matches them itself, so it may go to any node with the keys.
  return counts.empty() && in.matches_own_affinity;
}

bool SatisfyPodAntiAffinity(const PreFilterState& s, const Node& node) {
  const TopologyCounter& counts = *s.anti_affinity_counts;
  if (counts.empty()) return true;
  for (const auto& term : s.incoming->required_anti_affinity) {
    const std::string* value = NodeLabel(node, term.topology_key);
    if (value && counts.Get(term.topology_key, *value) > 0) return false;
  }
  return true;
}

bool SatisfyExistingPodsAntiAffinity(const PreFilterState& s, const Node& node) {
  const TopologyCounter& counts = *s.existing_anti_affinity_counts;
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
                                   std::span<const NodeInfo* const> nodes,
                                   PreFilterResult* result) {
  const Pod& pod = *pod_info.pod;
  if (auto err = AffinityParseError(pod)) return Status::Unresolvable("parsing pod: " + *err);

  auto in = std::make_shared<IncomingPod>();
  in->pod = pod_info.pod;
  in->required_affinity = pod_info.required_affinity();
  in->required_anti_affinity = pod_info.required_anti_affinity();
  std::optional<std::vector<Ptr<Namespace>>> namespaces;
  for (auto& t : in->required_affinity) MergeNamespaceSelector(t, handle_.listers(), namespaces);
  for (auto& t : in->required_anti_affinity)
    MergeNamespaceSelector(t, handle_.listers(), namespaces);
  in->namespace_labels = NamespaceLabels(handle_.listers(), pod.metadata.namespace_);
  in->matches_own_affinity = MatchesAll(in->required_affinity, pod);

  auto s = std::make_shared<PreFilterState>();

  // Existing pods' required anti-affinity: each distinct term is matched once.
  ExistingTermIndex& existing = caches_->existing_anti_affinity;
  existing.Refresh(handle_.snapshot().have_pods_with_required_anti_affinity());
  std::vector<SharedCounter> matched;
  existing.ForEachGroup([&](const ExistingTermIndex::Group& g, const SharedCounter& counts) {
    if (g.term.Matches(pod, &in->namespace_labels)) matched.push_back(counts);
  });
  if (matched.empty()) {
    s->existing_anti_affinity_counts = EmptyCounter();
  } else if (matched.size() == 1) {
    s->existing_anti_affinity_counts = matched[0];
  } else {
    auto merged = std::make_shared<TopologyCounter>(*matched[0]);
    for (size_t i = 1; i < matched.size(); ++i) merged->Merge(*matched[i]);
    s->existing_anti_affinity_counts = std::move(merged);
  }

  if (in->required_affinity.empty() && in->required_anti_affinity.empty()) {
    if (s->existing_anti_affinity_counts->empty()) return Status::Skip();
    s->affinity_counts = EmptyCounter();
    s->anti_affinity_counts = EmptyCounter();
  } else {
    // Existing pods matching the pod's own terms, kept per set of terms across cycles.
    std::optional<std::string> sig = RequiredSignature(pod, *in);
    IncomingMemo* memo = sig ? caches_->required.Find(*sig) : nullptr;
    std::unique_ptr<IncomingMemo> uncached;
    if (!memo) {
      auto fresh = std::make_unique<IncomingMemo>(&NodeInfo::pods);
      fresh->terms = in->required_affinity;
      fresh->split = fresh->terms.size();
      fresh->terms.insert(fresh->terms.end(), in->required_anti_affinity.begin(),
                          in->required_anti_affinity.end());
      fresh->index.NewGroup();  // 0: affinity
      fresh->index.NewGroup();  // 1: anti-affinity
      if (sig) {
        memo = caches_->required.Insert(std::move(*sig), std::move(fresh));
      } else {
        uncached = std::move(fresh);
        memo = uncached.get();
      }
    }
    memo->index.Refresh(
        nodes,
        [memo](const Node& node, const std::vector<PodInfoPtr>& pods,
               std::vector<Contribution>& out) { CountRequiredMatches(*memo, node, pods, out); },
        &handle_.parallelizer(), &handle_.snapshot());
    s->affinity_counts = memo->index.counter(0);
    s->anti_affinity_counts = memo->index.counter(1);
    if (uncached) {
      // The memo dies with this call; the state keeps the counters.
      s->affinity_counts = std::make_shared<TopologyCounter>(*s->affinity_counts);
      s->anti_affinity_counts = std::make_shared<TopologyCounter>(*s->anti_affinity_counts);
    }
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

  if (!SatisfyPodAffinity(*s, *node)) return affinity_not_match_;
  if (!SatisfyPodAntiAffinity(*s, *node)) return anti_affinity_not_match_;
  if (!SatisfyExistingPodsAntiAffinity(*s, *node)) return existing_anti_affinity_not_match_;
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

  for (const auto& t : other.required_anti_affinity()) {
    const std::string* v = NodeLabel(*node, t.topology_key);
    if (v && t.Matches(*in.pod, &in.namespace_labels))
      MutableCounter(s->existing_anti_affinity_counts).Add(t.topology_key, *v, multiplier);
  }
  if (MatchesAll(in.required_affinity, p)) {
    for (const auto& t : in.required_affinity)
      if (const std::string* v = NodeLabel(*node, t.topology_key))
        MutableCounter(s->affinity_counts).Add(t.topology_key, *v, multiplier);
  }
  for (const auto& t : in.required_anti_affinity) {
    const std::string* v = NodeLabel(*node, t.topology_key);
    if (v && t.Matches(p, &kNoLabels))
      MutableCounter(s->anti_affinity_counts).Add(t.topology_key, *v, multiplier);
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
