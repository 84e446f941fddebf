#include "plugins/interpodaffinity/remedies.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "api/codec.h"
#include "berth/framework/node_info.h"
#include "framework/label_changes.h"
#include "plugins/interpodaffinity/state.h"

namespace berth::interpodaffinity {
namespace {

using PodPtr = Ptr<Pod>;

// The cluster as the remedies read it: nodes by name, bound pods, namespaces' labels.
struct View {
  explicit View(const ClusterListers& c) : listers(c) {
    for (Ptr<Node>& n : c.ListNodes())
      if (n) nodes.emplace(n->metadata.name, std::move(n));
    for (PodPtr& p : c.ListPods())
      if (p && !p->spec.node_name.empty() && nodes.count(p->spec.node_name))
        bound.push_back(std::move(p));
    std::sort(bound.begin(), bound.end(),
              [](const PodPtr& a, const PodPtr& b) { return a->Key() < b->Key(); });
  }
  const Labels* NamespaceLabelsOf(const std::string& ns) {
    auto [it, fresh] = ns_labels.try_emplace(ns);
    if (fresh) it->second = NamespaceLabels(listers, ns);
    return &it->second;
  }
  // The term as Filter matches it, its namespaceSelector resolved against the namespaces.
  AffinityTerm Compiled(const Pod& owner, const PodAffinityTerm& term) {
    AffinityTerm t = MakeAffinityTerm(owner, term);
    MergeNamespaceSelector(t, listers, namespaces);
    return t;
  }

  const ClusterListers& listers;
  std::map<std::string, Ptr<Node>> nodes;
  std::vector<PodPtr> bound;
  std::map<std::string, Labels> ns_labels;
  std::optional<std::vector<Ptr<Namespace>>> namespaces;
};

bool SameDomain(const Node& a, const Node& b, const std::string& key) {
  auto x = a.metadata.labels.find(key);
  auto y = b.metadata.labels.find(key);
  return x != a.metadata.labels.end() && y != b.metadata.labels.end() && x->second == y->second;
}

// The bound pods whose required anti-affinity, or the pod's own, keeps the pod off `node`:
// pods in the node's topology domain that a term matches either way.
std::vector<std::string> AntiAffinityConflicts(View& v, const Pod& pod, const Node& node) {
  std::vector<AffinityTerm> own;
  if (pod.spec.affinity && pod.spec.affinity->pod_anti_affinity)
    for (const auto& term : pod.spec.affinity->pod_anti_affinity->required)
      own.push_back(v.Compiled(pod, term));
  std::vector<std::string> out;
  for (const PodPtr& p : v.bound) {
    const Node& there = *v.nodes.at(p->spec.node_name);
    bool conflict = std::any_of(own.begin(), own.end(), [&](const AffinityTerm& t) {
      return SameDomain(node, there, t.topology_key) &&
             t.Matches(*p, v.NamespaceLabelsOf(p->metadata.namespace_));
    });
    if (!conflict && p->spec.affinity && p->spec.affinity->pod_anti_affinity)
      for (const auto& term : p->spec.affinity->pod_anti_affinity->required)
        if (SameDomain(node, there, term.topology_key) &&
            v.Compiled(*p, term).Matches(pod, v.NamespaceLabelsOf(pod.metadata.namespace_)))
          conflict = true;
    if (conflict) out.push_back(p->Key());
  }
  return out;
}

void AntiAffinityRemedies(View& v, const Pod& pod, const std::vector<const Node*>& rejected,
                          size_t max_per_group, std::vector<ClusterRemedy>& out) {
  std::set<std::vector<std::string>> moved_sets;
  // Finding a node's conflicts scans every bound pod; nodes of one domain repeat each other, so
  // a bounded number of them is examined.
  size_t examined = 0;
  for (const Node* node : rejected) {
    if (++examined > 16 * max_per_group || moved_sets.size() >= max_per_group) break;
    std::vector<std::string> pods = AntiAffinityConflicts(v, pod, *node);
    // The nodes of one topology domain share their conflicts: one remedy for them.
    if (pods.empty() || !moved_sets.insert(pods).second) continue;
    ClusterRemedy r;
    r.kind = "anti-affinity";
    r.description = fmt::format(
        "move {} off node {}'s topology domain (required anti-affinity keeps the pod and them "
        "apart)",
        fmt::join(pods, ", "), node->metadata.name);
    r.node = node->metadata.name;
    r.cost = static_cast<int64_t>(pods.size());
    r.removed_pods = pods;
    r.victims = std::move(pods);
    out.push_back(std::move(r));
  }
}

}  // namespace

// Pod affinity (remedies_affinity.cc).
void PodAffinityRemedies(const ClusterListers& cluster, const Pod& pod,
                         const std::vector<const Node*>& rejected, size_t max_per_group,
                         std::vector<ClusterRemedy>& out);

RemedyProposal ProposeRemedies(const ClusterListers& cluster, const Pod& pod,
                               std::span<const RejectedNode> rejected, size_t max_per_group) {
  std::vector<const Node*> anti, affinity;
  for (const RejectedNode& r : rejected)
    (r.rejection->code() == Code::kUnschedulableAndUnresolvable ? affinity : anti)
        .push_back(r.node);
  RemedyProposal proposal;
  if (!anti.empty()) {
    View v(cluster);
    AntiAffinityRemedies(v, pod, anti, max_per_group, proposal.remedies);
  }
  if (!affinity.empty())
    PodAffinityRemedies(cluster, pod, affinity, max_per_group, proposal.remedies);
  return proposal;
}

}  // namespace berth::interpodaffinity
