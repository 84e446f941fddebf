// Required pod affinity's remedies (remedies.h): the nodes it rejected lack a pod matching the
// pod's terms in their topology domain. What is known of the cluster for the terms is computed
// once (a large cluster has thousands of rejected nodes and of bound pods).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "api/codec.h"
#include "berth/framework/node_info.h"
#include "framework/label_changes.h"
#include "plugins/interpodaffinity/remedies.h"
#include "plugins/interpodaffinity/state.h"

namespace berth::interpodaffinity {
namespace {

using PodPtr = Ptr<Pod>;

class AffinitySearch {
 public:
  AffinitySearch(const ClusterListers& cluster, const Pod& pod,
                 const std::vector<PodAffinityTerm>& terms, size_t max_per_group,
                 std::vector<ClusterRemedy>& out);

  // Candidate changes for one rejected node: label a bound pod in the node's domain so that it
  // matches; run a new matching pod there; label the node into a domain where matching pods
  // run.
  void ForRejectedNode(const Node& node);
  // When no pod anywhere matches: label the pod itself so that it matches its own terms and may
  // start the group (a pod whose terms no pod matches may go to any node with the topology keys
  // when it matches them itself).
  void LabelSelf();

 private:
  struct Peer {
    PodPtr pod;
    LabelChanges changes;
  };
  using Domain = std::vector<std::string>;  // the node's values of the keys, "" when missing

  bool Covered(const std::string& ns) const;
  Domain DomainOf(const Node& n) const;
  std::string Describe(const Domain& d) const;
  static bool Complete(const Domain& d);
  void IndexPods();
  void ChoosePeerNamespace();
  void LabelPod(const Domain& here);
  void NewPod(const std::string& name, const Domain& here);
  void LabelNode(const Node& x, const Domain& here);

  const ClusterListers& cluster_;
  const Pod& pod_;
  std::vector<AffinityTerm> compiled_;
  std::vector<LabelSelector> selectors_;
  std::vector<std::string> keys_;  // the terms' topology keys, once each
  std::map<std::string, Ptr<Node>> node_of_;
  std::map<Domain, Peer> closest_;  // per domain, the bound pod needing the fewest changes
  std::set<Domain> matching_domains_;
  std::set<Domain> relabelled_in_, peopled_;  // domains already proposed
  bool any_match_ = false;
  std::string peer_ns_;  // the namespace of a new matching pod
  // Node relabellings proposed so far, and how many are enough: each is a copy of a node, and
  // explain checks only the first few that do not repeat a node already placed.
  size_t label_nodes_ = 0, max_label_nodes_;
  std::vector<ClusterRemedy>& out_;
};

AffinitySearch::AffinitySearch(const ClusterListers& cluster, const Pod& pod,
                               const std::vector<PodAffinityTerm>& terms, size_t max_per_group,
                               std::vector<ClusterRemedy>& out)
    : cluster_(cluster), pod_(pod), max_label_nodes_(4 * max_per_group), out_(out) {
  std::optional<std::vector<Ptr<Namespace>>> namespaces;
  for (const auto& term : terms) {
    compiled_.push_back(MakeAffinityTerm(pod, term));
    MergeNamespaceSelector(compiled_.back(), cluster, namespaces);
    selectors_.push_back(EffectiveSelector(term, pod));
    if (std::find(keys_.begin(), keys_.end(), term.topology_key) == keys_.end())
      keys_.push_back(term.topology_key);
  }
  for (Ptr<Node>& n : cluster.ListNodes())
    if (n) node_of_.emplace(n->metadata.name, std::move(n));
  IndexPods();
  ChoosePeerNamespace();
}

// Whether every term counts pods of namespace `ns`.
bool AffinitySearch::Covered(const std::string& ns) const {
  return std::all_of(compiled_.begin(), compiled_.end(), [&](const AffinityTerm& t) {
    return t.namespaces.count(ns) > 0 || t.namespace_selector.Empty();
  });
}

AffinitySearch::Domain AffinitySearch::DomainOf(const Node& n) const {
  Domain values;
  for (const auto& key : keys_) {
    auto it = n.metadata.labels.find(key);
    values.push_back(it == n.metadata.labels.end() ? "" : it->second);
  }
  return values;
}

std::string AffinitySearch::Describe(const Domain& d) const {
  std::vector<std::string> parts;
  for (size_t i = 0; i < keys_.size(); ++i) parts.push_back(keys_[i] + "=" + d[i]);
  return fmt::format("{}", fmt::join(parts, ","));
}

bool AffinitySearch::Complete(const Domain& d) {
  return std::none_of(d.begin(), d.end(), [](const std::string& v) { return v.empty(); });
}

// Bound pods in namespaces every term covers, with what each would need to match them all.
void AffinitySearch::IndexPods() {
  std::vector<PodPtr> pods = cluster_.ListPods();
  std::sort(pods.begin(), pods.end(),
            [](const PodPtr& a, const PodPtr& b) { return a && b && a->Key() < b->Key(); });
  for (const PodPtr& p : pods) {
    if (!p || p->spec.node_name.empty() || p->metadata.deletion_timestamp) continue;
    auto n = node_of_.find(p->spec.node_name);
    if (n == node_of_.end() || !Covered(p->metadata.namespace_)) continue;
    LabelChanges changes = ChangesToMatch(selectors_, p->metadata.labels);
    Domain domain = DomainOf(*n->second);
    if (changes.empty()) {
      any_match_ = true;
      if (Complete(domain)) matching_domains_.insert(std::move(domain));
      continue;
    }
    if (!Complete(domain)) continue;
    auto it = closest_.find(domain);
    if (it == closest_.end() || changes.size() < it->second.changes.size())
      closest_[std::move(domain)] = Peer{p, std::move(changes)};
  }
}

// One every term covers, the pod's own if it is.
void AffinitySearch::ChoosePeerNamespace() {
  peer_ns_ = pod_.metadata.namespace_;
  if (Covered(peer_ns_)) return;
  peer_ns_.clear();
  for (const auto& term : compiled_) {
    std::vector<std::string> named(term.namespaces.begin(), term.namespaces.end());
    std::sort(named.begin(), named.end());
    for (const auto& candidate : named)
      if (peer_ns_.empty() && Covered(candidate)) peer_ns_ = candidate;
  }
  if (!peer_ns_.empty()) return;
  std::vector<Ptr<Namespace>> all = cluster_.ListNamespaces();
  std::sort(all.begin(), all.end(), [](const Ptr<Namespace>& a, const Ptr<Namespace>& b) {
    return a && b && a->metadata.name < b->metadata.name;
  });
  for (const Ptr<Namespace>& n : all)
    if (n && peer_ns_.empty() && Covered(n->metadata.name)) peer_ns_ = n->metadata.name;
}

ClusterRemedy Remedy(std::string variant, std::string description, int64_t cost) {
  ClusterRemedy r;
  r.kind = "pod-affinity";
  r.merge_key = "pod-affinity/" + variant;
  r.same_change = false;
  r.variant = std::move(variant);
  r.description = std::move(description);
  r.cost = cost;
  return r;
}

void AffinitySearch::LabelPod(const Domain& here) {
  auto found = closest_.find(here);
  if (found == closest_.end() || !relabelled_in_.insert(here).second) return;
  const Peer& best = found->second;
  auto relabelled = std::make_shared<Pod>(*best.pod);
  Apply(best.changes, relabelled->metadata.labels);
  relabelled->raw = DocumentOnlyFields(relabelled->raw);
  const bool overwrite = std::any_of(best.changes.begin(), best.changes.end(), [&](const auto& ch) {
    return ch.second && best.pod->metadata.labels.count(ch.first);
  });
  ClusterRemedy r = Remedy(
      "label-pod",
      fmt::format("label pod {} (on node {}) with {} (kubectl label pod -n {} {} {}{}): the "
                  "pod's required affinity then finds a matching pod in the domain {}",
                  best.pod->Key(), best.pod->spec.node_name, DescribeLabels(best.changes),
                  best.pod->metadata.namespace_, best.pod->metadata.name,
                  KubectlLabels(best.changes), overwrite ? " --overwrite" : "", Describe(here)),
      static_cast<int64_t>(best.changes.size()));
  r.domain = Describe(here);
  r.running_pod = best.pod->Key();
  r.bound_pods.push_back(std::move(relabelled));
  out_.push_back(std::move(r));
}

// A new pod there: in a namespace every term covers, labelled to match every term.
void AffinitySearch::NewPod(const std::string& name, const Domain& here) {
  if (peer_ns_.empty() || !peopled_.insert(here).second) return;
  auto peer = std::make_shared<Pod>();
  peer->metadata.namespace_ = peer_ns_;
  peer->metadata.name = pod_.metadata.name + "-affinity-peer";
  peer->metadata.uid = "explain-affinity-peer";
  Apply(ChangesToMatch(selectors_, {}), peer->metadata.labels);
  peer->spec.node_name = name;
  peer->status.phase = "Running";
  Labels selector;
  for (size_t i = 0; i < keys_.size(); ++i) selector[keys_[i]] = here[i];
  ClusterRemedy r = Remedy(
      "new-pod",
      fmt::format("run a pod labelled {} in namespace {} in the domain {} (where node {} is), so "
                  "that the pod's required affinity finds a matching pod there",
                  DescribeLabels(ChangesToMatch(selectors_, {})), peer_ns_, Describe(here), name),
      static_cast<int64_t>(peer->metadata.labels.size()) + 1);
  r.domain = Describe(here);
  r.new_pod =
      fmt::format("metadata:\n  namespace: {}\n  labels:\n{}spec:\n  nodeSelector:\n{}", peer_ns_,
                  LabelsYaml(peer->metadata.labels, "    "), LabelsYaml(selector, "    "));
  r.bound_pods.push_back(std::move(peer));
  out_.push_back(std::move(r));
}

// The node joins a domain where a matching pod runs (never through a label that describes the
// machine, such as its hostname: that names a node rather than a group of them). One domain per
// node is enough to show: the others are its alternatives.
void AffinitySearch::LabelNode(const Node& x, const Domain& here) {
  const std::string& name = x.metadata.name;
  for (const auto& there : matching_domains_) {
    if (there == here) continue;
    if (label_nodes_ >= max_label_nodes_) return;
    LabelChanges changes;
    for (size_t i = 0; i < keys_.size(); ++i)
      if (here[i] != there[i]) changes[keys_[i]] = there[i];
    if (std::any_of(changes.begin(), changes.end(),
                    [](const auto& ch) { return IsMachineLabel(ch.first); }))
      continue;
    auto moved = std::make_shared<Node>(x);
    Apply(changes, moved->metadata.labels);
    moved->raw = DocumentOnlyFields(moved->raw);
    ClusterRemedy r = Remedy(
        "label-node",
        fmt::format("label node {} with {} (kubectl label node {} {} --overwrite): it joins the "
                    "domain {}, where pods matching the pod's required affinity run",
                    name, DescribeLabels(changes), name, KubectlLabels(changes), Describe(there)),
        static_cast<int64_t>(changes.size()));
    r.node = name;
    r.domain = Describe(there);
    r.alternatives = "label-node/" + name;
    r.nodes.push_back(std::move(moved));
    out_.push_back(std::move(r));
    ++label_nodes_;
  }
}

void AffinitySearch::ForRejectedNode(const Node& node) {
  const Domain here = DomainOf(node);
  if (Complete(here)) {
    LabelPod(here);
    NewPod(node.metadata.name, here);
  }
  LabelNode(node, here);
}

void AffinitySearch::LabelSelf() {
  if (any_match_ || !Covered(pod_.metadata.namespace_)) return;
  LabelChanges changes = ChangesToMatch(selectors_, pod_.metadata.labels);
  if (changes.empty()) return;
  auto self = std::make_shared<Pod>(pod_);
  Apply(changes, self->metadata.labels);
  self->raw = DocumentOnlyFields(self->raw);
  LabelChanges set;
  for (const auto& [k, v] : changes)
    if (v) set[k] = v;
  Labels shown;
  Apply(set, shown);
  ClusterRemedy r =
      Remedy("label-self",
             fmt::format("no running pod matches the pod's required affinity: label the pod itself "
                         "with {} so that it matches its own terms and may start the group",
                         DescribeLabels(changes)),
             static_cast<int64_t>(changes.size()));
  r.pod_change = shown.empty() ? "" : "metadata:\n  labels:\n" + LabelsYaml(shown, "    ");
  r.pod = std::move(self);
  out_.push_back(std::move(r));
}

}  // namespace

void PodAffinityRemedies(const ClusterListers& cluster, const Pod& pod,
                         const std::vector<const Node*>& rejected, size_t max_per_group,
                         std::vector<ClusterRemedy>& out) {
  if (!pod.spec.affinity || !pod.spec.affinity->pod_affinity ||
      pod.spec.affinity->pod_affinity->required.empty())
    return;
  const std::vector<PodAffinityTerm>& terms = pod.spec.affinity->pod_affinity->required;
  for (const auto& term : terms)
    if (!term.label_selector) return;  // a null selector matches no pod, whatever changes
  AffinitySearch search(cluster, pod, terms, max_per_group, out);
  for (const Node* node : rejected) search.ForRejectedNode(*node);
  search.LabelSelf();
}

}  // namespace berth::interpodaffinity
