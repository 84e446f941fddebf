#include <memory>
#include <string>
#include <utility>

#include "berth/api/selectors.h"
#include "config/plugin_args_codec.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/memo.h"
#include "plugins/interpodaffinity/state.h"

namespace berth {
namespace interpodaffinity {

InterPodAffinity::InterPodAffinity(const config::InterPodAffinityArgs& args, Handle& handle)
    : args_(args), handle_(handle), caches_(std::make_unique<PluginCaches>()) {}

InterPodAffinity::~InterPodAffinity() = default;

Labels NamespaceLabels(ClusterClient& client, std::string_view ns) {
  if (Ptr<Namespace> n = client.GetNamespace(ns)) return n->metadata.labels;
  return {};
}

void MergeNamespaceSelector(AffinityTerm& term, ClusterClient& client,
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
  PluginRegistration reg;
  reg.name = std::string(interpodaffinity::kName);
  reg.factory = [](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    static const config::InterPodAffinityArgs kDefaults;
    const auto* typed = args ? dynamic_cast<const config::InterPodAffinityArgs*>(args) : &kDefaults;
    if (!typed) {
      return Error{"want args to be of type InterPodAffinityArgs, got " +
                   std::string(args->Kind())};
    }
    std::unique_ptr<Plugin> plugin =
        std::make_unique<interpodaffinity::InterPodAffinity>(*typed, handle);
    return plugin;
  };
  reg.decode_args = config::InTreeArgsDecoder(reg.name);
  return reg;
}

}  // namespace berth
