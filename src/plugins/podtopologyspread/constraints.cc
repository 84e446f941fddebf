#include "plugins/podtopologyspread/constraints.h"

#include <utility>

#include "api/tolerations.h"

namespace berth::podtopologyspread {
namespace {

// Length-prefixed pieces keep the encoding injective whatever characters keys and values hold.
void Put(std::string& out, std::string_view s) {
  out.append(std::to_string(s.size()));
  out.push_back(':');
  out.append(s);
}

void EncodeSelector(std::string& out, const LabelSelector& s) {
  out.push_back('L');
  for (const auto& [k, v] : s.match_labels) {
    Put(out, k);
    Put(out, v);
  }
  out.push_back('E');
  for (const auto& e : s.match_expressions) {
    Put(out, e.key);
    Put(out, e.op);
    out.append(std::to_string(e.values.size()));
    out.push_back('#');
    for (const auto& v : e.values) Put(out, v);
  }
}

std::string CountKey(const CompiledSelector& compiled, std::string_view ns,
                     const LabelSelector& source,
                     const std::vector<std::pair<std::string, std::string>>& extra) {
  if (compiled.MatchesNothing() || compiled.Empty()) return {};
  std::string key;
  Put(key, ns);
  EncodeSelector(key, source);
  key.push_back('X');
  for (const auto& [k, v] : extra) {
    Put(key, k);
    Put(key, v);
  }
  return key;
}

void ApplyCommonFields(const TopologySpreadConstraint& in, SpreadConstraint& out) {
  out.max_skew = in.max_skew;
  out.topology_key = in.topology_key;
  out.is_hostname = in.topology_key == kLabelHostname;
  out.min_domains = in.min_domains.value_or(1);
  out.honor_node_affinity = in.node_affinity_policy.value_or("Honor") != "Ignore";
  out.honor_node_taints = in.node_taints_policy.value_or("Ignore") == "Honor";
}

const OwnerReference* ControllerOf(const Pod& pod) {
  for (const auto& ref : pod.metadata.owner_references)
    if (ref.controller) return &ref;
  return nullptr;
}

template <class T>
Ptr<T> FindByName(const std::vector<Ptr<T>>& objects, std::string_view name) {
  for (const auto& o : objects)
    if (o && o->metadata.name == name) return o;
  return nullptr;
}

// Appends the requirements of a workload's selector; an absent or invalid selector adds none,
// as does an empty one (it selects everything).
void AppendRequirements(const std::optional<LabelSelector>& selector,
                        std::vector<LabelSelectorRequirement>& out) {
  if (!selector || !CompiledSelector::Compile(*selector).ok()) return;
  for (const auto& [k, v] : selector->match_labels) out.push_back({k, "In", {v}});
  for (const auto& e : selector->match_expressions) out.push_back(e);
}

}  // namespace

Result<std::vector<SpreadConstraint>> ConstraintsFromPod(const Pod& pod, std::string_view action) {
  std::vector<SpreadConstraint> out;
  const Labels& pod_labels = pod.metadata.labels;
  for (const TopologySpreadConstraint& c : pod.spec.topology_spread_constraints) {
    if (c.when_unsatisfiable != action) continue;
    SpreadConstraint sc;
    ApplyCommonFields(c, sc);
    LabelSelector source;
    std::vector<std::pair<std::string, std::string>> extra;
    if (c.label_selector) {
      auto compiled = CompiledSelector::Compile(*c.label_selector);
      if (!compiled.ok()) return compiled.error();
      sc.selector = std::move(compiled).value();
      source = *c.label_selector;
      // matchLabelKeys narrows the selector to pods sharing the incoming pod's values; a
      // missing selector stays one that matches nothing.
      for (const std::string& key : c.match_label_keys) {
        auto it = pod_labels.find(key);
        if (it == pod_labels.end()) continue;
        sc.selector.AddIn(key, it->second);
        extra.emplace_back(key, it->second);
      }
    }
    sc.count_key = CountKey(sc.selector, pod.metadata.namespace_, source, extra);
    out.push_back(std::move(sc));
  }
  return out;
}

std::optional<LabelSelector> DefaultSelector(const Pod& pod, const ClusterListers& client) {
  const std::string& ns = pod.metadata.namespace_;
  LabelSelector result;
  // Services, controllers and the pod agree on these labels, so later entries never conflict.
  for (const auto& svc : client.ListServices(ns)) {
    if (!svc || svc->selector.empty()) continue;
    if (!CompiledSelector::FromSet(svc->selector).Matches(pod.metadata.labels)) continue;
    for (const auto& [k, v] : svc->selector) result.match_labels[k] = v;
  }
  if (const OwnerReference* owner = ControllerOf(pod)) {
    if (owner->api_version == "v1" && owner->kind == "ReplicationController") {
      if (auto rc = FindByName(client.ListReplicationControllers(ns), owner->name)) {
        for (const auto& [k, v] : rc->selector) result.match_labels[k] = v;
      }
    } else if (owner->api_version == "apps/v1" && owner->kind == "ReplicaSet") {
      if (auto rs = FindByName(client.ListReplicaSets(ns), owner->name)) {
        AppendRequirements(rs->selector, result.match_expressions);
      }
    } else if (owner->api_version == "apps/v1" && owner->kind == "StatefulSet") {
      if (auto ss = FindByName(client.ListStatefulSets(ns), owner->name)) {
        AppendRequirements(ss->selector, result.match_expressions);
      }
    }
  }
  if (result.match_labels.empty() && result.match_expressions.empty()) return std::nullopt;
  return result;
}

std::vector<SpreadConstraint> ConstraintsFromDefaults(
    const std::vector<TopologySpreadConstraint>& defaults, std::string_view action,
    const LabelSelector& selector, std::string_view pod_namespace) {
  std::vector<SpreadConstraint> out;
  CompiledSelector compiled;
  bool compiled_once = false;
  for (const TopologySpreadConstraint& c : defaults) {
    if (c.when_unsatisfiable != action) continue;
    if (!compiled_once) {
      auto s = CompiledSelector::Compile(selector);
      // Service selectors are label sets the API server validated; if one is malformed anyway,
      // fall back to the label set alone rather than dropping the constraints.
      compiled = s.ok() ? std::move(s).value() : CompiledSelector::FromSet(selector.match_labels);
      compiled_once = true;
    }
    SpreadConstraint sc;
    ApplyCommonFields(c, sc);
    sc.selector = compiled;
    sc.count_key = CountKey(sc.selector, pod_namespace, selector, {});
    out.push_back(std::move(sc));
  }
  return out;
}

bool NodeHasAllKeys(const Node& node, const std::vector<SpreadConstraint>& constraints) {
  const Labels& labels = node.metadata.labels;
  for (const auto& c : constraints)
    if (labels.find(c.topology_key) == labels.end()) return false;
  return true;
}

bool HasNodeAffinityInputs(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  return !pod.spec.node_selector.empty() ||
         (a && a->node_affinity && a->node_affinity->required.has_value());
}

bool NodeIncluded(const SpreadConstraint& c, const Pod& pod, const Node& node,
                  bool comparison_operators) {
  if (c.honor_node_affinity && !PodMatchesNodeSelectorAndAffinityTerms(pod, node)) return false;
  if (c.honor_node_taints && FindUntoleratedTaint(node.spec.taints, pod.spec.tolerations,
                                                  &IsScheduleBlockingTaint, comparison_operators)) {
    return false;
  }
  return true;
}

int32_t CountMatchingPods(const std::vector<PodInfoPtr>& pods, const CompiledSelector& selector,
                          std::string_view ns) {
  if (selector.Empty() || selector.MatchesNothing()) return 0;
  int32_t n = 0;
  for (const auto& pi : pods) {
    const Pod& p = *pi->pod;
    // Terminating pods are on their way out and no longer count (kubernetes#87621).
    if (p.metadata.deletion_timestamp || p.metadata.namespace_ != ns) continue;
    if (selector.Matches(p.metadata.labels)) ++n;
  }
  return n;
}

}  // namespace berth::podtopologyspread
