#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "berth/api/selectors.h"
#include "config/plugin_args_codec.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/memo.h"
#include "plugins/interpodaffinity/remedies.h"
#include "plugins/interpodaffinity/state.h"

namespace berth {
namespace interpodaffinity {

InterPodAffinity::InterPodAffinity(const config::InterPodAffinityArgs& args, Handle& handle)
    : args_(args), handle_(handle), caches_(std::make_unique<PluginCaches>()) {}

InterPodAffinity::~InterPodAffinity() = default;

RemedyProposal InterPodAffinity::ProposeRemedies(const Pod& pod,
                                                 std::span<const RejectedNode> rejected,
                                                 size_t max_per_group) const {
  return interpodaffinity::ProposeRemedies(handle_.listers(), pod, rejected, max_per_group);
}

namespace {

std::vector<AffinityTerm> TermsOf(const Pod& pod, const std::optional<PodAffinity>& affinity) {
  std::vector<AffinityTerm> terms;
  if (affinity) {
    for (const auto& t : affinity->required) terms.push_back(MakeAffinityTerm(pod, t));
  }
  return terms;
}

// Whether `other` may match `term`. A namespace selector needs the namespace's labels, which a
// hint must not look up: it may match.
bool MayMatch(const AffinityTerm& term, const Pod& other) {
  if (!term.selector.Matches(other.metadata.labels)) return false;
  return term.namespaces.count(other.metadata.namespace_) > 0 ||
         !term.namespace_selector.MatchesNothing();
}

bool MatchesAll(const std::vector<AffinityTerm>& terms, const Pod& other) {
  if (terms.empty()) return false;
  for (const auto& t : terms) {
    if (!MayMatch(t, other)) return false;
  }
  return true;
}

bool MatchesAny(const std::vector<AffinityTerm>& terms, const Pod& other) {
  for (const auto& t : terms) {
    if (MayMatch(t, other)) return true;
  }
  return false;
}

bool HasRequiredAntiAffinity(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a && a->pod_anti_affinity && !a->pod_anti_affinity->required.empty();
}

QueueingHint AfterPodEvent(const Pod& pod, const Pod* old_pod, const Pod* new_pod) {
  if ((new_pod && new_pod->spec.node_name.empty()) || (old_pod && old_pod->spec.node_name.empty()))
    return QueueingHint::kQueueSkip;  // only assigned pods take part
  const auto& affinity = pod.spec.affinity;
  const std::vector<AffinityTerm> terms =
      TermsOf(pod, affinity ? affinity->pod_affinity : std::nullopt);
  const std::vector<AffinityTerm> anti_terms =
      TermsOf(pod, affinity ? affinity->pod_anti_affinity : std::nullopt);
  if (old_pod && new_pod) {
    if (!MatchesAll(terms, *old_pod) && MatchesAll(terms, *new_pod)) return QueueingHint::kQueue;
    if (MatchesAny(anti_terms, *old_pod) && !MatchesAny(anti_terms, *new_pod))
      return QueueingHint::kQueue;
    // The other pod's own anti-affinity may stop rejecting this one after relabelling.
    return HasRequiredAntiAffinity(*new_pod) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  }
  if (new_pod) return MatchesAll(terms, *new_pod) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  if (!old_pod) return QueueingHint::kQueue;
  // Gone: it helps if this pod's anti-affinity matched it, or its own anti-affinity kept
  // this pod away.
  return MatchesAny(anti_terms, *old_pod) || HasRequiredAntiAffinity(*old_pod)
             ? QueueingHint::kQueue
             : QueueingHint::kQueueSkip;
}

QueueingHint AfterNodeEvent(const Pod& pod, const Node* old_node, const Node& new_node) {
  const auto& affinity = pod.spec.affinity;
  const bool has_affinity =
      affinity && affinity->pod_affinity && !affinity->pod_affinity->required.empty();
  // Rejected for a running pod's anti-affinity only: any new node may be clear of it.
  if (!old_node && !has_affinity) return QueueingHint::kQueue;
  auto value = [](const Node& n, const std::string& key) -> const std::string* {
    auto it = n.metadata.labels.find(key);
    return it == n.metadata.labels.end() ? nullptr : &it->second;
  };
  if (has_affinity) {
    for (const auto& t : affinity->pod_affinity->required) {
      const std::string* now = value(new_node, t.topology_key);
      if (!now) continue;
      const std::string* before = old_node ? value(*old_node, t.topology_key) : nullptr;
      if (!before || *before != *now) return QueueingHint::kQueue;
    }
  }
  if (old_node && affinity && affinity->pod_anti_affinity) {
    for (const auto& t : affinity->pod_anti_affinity->required) {
      const std::string* before = value(*old_node, t.topology_key);
      const std::string* now = value(new_node, t.topology_key);
      if (before && (!now || *before != *now)) return QueueingHint::kQueue;
    }
  }
  return QueueingHint::kQueueSkip;
}

bool UsesNamespaceSelector(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a) return false;
  for (const auto* pa : {&a->pod_affinity, &a->pod_anti_affinity}) {
    if (!*pa) continue;
    for (const auto& t : (*pa)->required) {
      if (t.namespace_selector) return true;
    }
  }
  return false;
}

}  // namespace

std::vector<ClusterEventWithHint> InterPodAffinity::EventsToRegister() const {
  return {
      {{EventResource::kPod, kAdd | kUpdatePodLabel | kDelete},
       [](const Pod& pod, const EventObject& old_object,
          const EventObject& new_object) -> Result<QueueingHint> {
         return AfterPodEvent(pod, ObjectAs<Pod>(old_object), ObjectAs<Pod>(new_object));
       }},
      {{EventResource::kNode, kAdd | kUpdateNodeLabel},
       [](const Pod& pod, const EventObject& old_object,
          const EventObject& new_object) -> Result<QueueingHint> {
         const Node* node = ObjectAs<Node>(new_object);
         if (!node) return Error{"node event without the node"};
         return AfterNodeEvent(pod, ObjectAs<Node>(old_object), *node);
       }},
      {{EventResource::kNamespace, kAdd | kUpdateOther},
       [](const Pod& pod, const EventObject&, const EventObject&) -> Result<QueueingHint> {
         return UsesNamespaceSelector(pod) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
       }},
  };
}

Labels NamespaceLabels(const ClusterListers& client, std::string_view ns) {
  if (Ptr<Namespace> n = client.GetNamespace(ns)) return n->metadata.labels;
  return {};
}

void MergeNamespaceSelector(AffinityTerm& term, const ClusterListers& client,
                            std::optional<std::vector<Ptr<Namespace>>>& namespaces) {
  // An empty selector selects every namespace and is kept as is; once a selector is unrolled
  // (or was absent) it selects nothing, so matching never needs the other pod's namespace.
  if (term.namespace_selector.Empty()) return;
  if (!term.namespace_selector.MatchesNothing()) {
    if (!namespaces) namespaces = client.ListNamespaces();
    for (const auto& ns : *namespaces)
      if (ns && term.namespace_selector.Matches(ns->metadata.labels))
        term.namespaces.insert(ns->metadata.name);
  }
  term.namespace_selector = CompiledSelector::Nothing();
}

namespace {

// The first selector error among `terms`, as one list of the pod's terms reports it.
template <class Terms, class GetTerm>
std::optional<std::string> FirstTermError(const Terms& terms, GetTerm get) {
  for (const auto& t : terms) {
    const PodAffinityTerm& term = get(t);
    if (term.label_selector) {
      auto s = CompiledSelector::Compile(*term.label_selector);
      if (!s.ok()) return s.error().message;
    }
    if (term.namespace_selector) {
      auto s = CompiledSelector::Compile(*term.namespace_selector);
      if (!s.ok()) return s.error().message;
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> AffinityParseError(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  if (!a || (!a->pod_affinity && !a->pod_anti_affinity)) return std::nullopt;
  static const std::vector<PodAffinityTerm> kNoTerms;
  static const std::vector<WeightedPodAffinityTerm> kNoWeighted;
  const auto& aff = a->pod_affinity;
  const auto& anti = a->pod_anti_affinity;
  auto plain = [](const PodAffinityTerm& t) -> const PodAffinityTerm& { return t; };
  auto weighted = [](const WeightedPodAffinityTerm& t) -> const PodAffinityTerm& { return t.term; };

  std::vector<std::string> errors;
  if (auto e = FirstTermError(aff ? aff->required : kNoTerms, plain))
    errors.push_back("requiredAffinityTerms: " + *e);
  if (auto e = FirstTermError(anti ? anti->required : kNoTerms, plain))
    errors.push_back("requiredAntiAffinityTerms: " + *e);
  if (auto e = FirstTermError(aff ? aff->preferred : kNoWeighted, weighted))
    errors.push_back("preferredAffinityTerms: " + *e);
  if (auto e = FirstTermError(anti ? anti->preferred : kNoWeighted, weighted))
    errors.push_back("preferredAntiAffinityTerms: " + *e);

  if (errors.empty()) return std::nullopt;
  if (errors.size() == 1) return errors[0];
  // Several failing lists read like an aggregated Go error: "[e1, e2]".
  std::string joined = "[";
  for (size_t i = 0; i < errors.size(); ++i) {
    if (i) joined += ", ";
    joined += errors[i];
  }
  return joined + "]";
}

}  // namespace interpodaffinity

PluginRegistration InterPodAffinityRegistration() {
  static const config::InterPodAffinityArgs kDefaults;
  auto factory = [](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "InterPodAffinityArgs");
    if (!typed.ok()) return typed.error();
    return std::unique_ptr<Plugin>(
        std::make_unique<interpodaffinity::InterPodAffinity>(**typed, handle));
  };
  return MakeRegistration(interpodaffinity::kName, factory,
                          config::InTreeArgsDecoder(std::string(interpodaffinity::kName)));
}

}  // namespace berth
