// Inter-pod (anti-)affinity: the running pods required anti-affinity keeps the pod apart from,
// and for required pod affinity the matching pod a domain lacks. Which kind of rejection a
// node got is read from InterPodAffinity's status code: its pod affinity rejections are
// UnschedulableAndUnresolvable, its anti-affinity ones (the pod's or existing pods')
// Unschedulable.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/codec.h"
#include "config/plugin_names.h"
#include "explain/labels.h"
#include "explain/suggest.h"

namespace berth::explain {

namespace names = config::names;

namespace {

bool IsAffinityRejection(const Status& st) {
  return st.plugin() == names::kInterPodAffinity &&
         st.code() == Code::kUnschedulableAndUnresolvable;
}
bool IsAntiAffinityRejection(const Status& st) {
  return st.plugin() == names::kInterPodAffinity && st.code() == Code::kUnschedulable;
}

// Whether `term` (of a pod in namespace `owner_ns`) covers pods in namespace `ns`.
bool TermCoversNamespace(const PodAffinityTerm& term, const std::string& owner_ns,
                         const std::string& ns, const std::vector<Object>& others) {
  if (std::find(term.namespaces.begin(), term.namespaces.end(), ns) != term.namespaces.end())
    return true;
  if (term.namespace_selector) {
    auto sel = CompiledSelector::FromOptional(term.namespace_selector);
    for (const Object& o : others)
      if (auto* n = std::get_if<std::shared_ptr<const Namespace>>(&o);
          n && (*n)->metadata.name == ns)
        return sel.Matches((*n)->metadata.labels);
    return false;
  }
  return term.namespaces.empty() && ns == owner_ns;
}

// The bound pods whose required anti-affinity, or the pod's own, keeps the pod off `node`:
// pods in the node's topology domain that a term matches either way.
std::vector<PodPtr> AntiAffinityConflicts(const Pod& pod, const Node& node,
                                          const std::map<std::string, const Node*>& node_of,
                                          const std::vector<Object>& others) {
  auto same_domain = [&](const PodPtr& p, const std::string& key) {
    auto here = node.metadata.labels.find(key);
    auto it = node_of.find(p->spec.node_name);
    if (here == node.metadata.labels.end() || it == node_of.end()) return false;
    auto there = it->second->metadata.labels.find(key);
    return there != it->second->metadata.labels.end() && there->second == here->second;
  };
  std::vector<PodPtr> out;
  for (const Object& o : others) {
    auto* pp = std::get_if<PodPtr>(&o);
    if (!pp || (*pp)->spec.node_name.empty()) continue;
    const PodPtr& p = *pp;
    bool conflict = false;
    if (pod.spec.affinity && pod.spec.affinity->pod_anti_affinity)
      for (const auto& term : pod.spec.affinity->pod_anti_affinity->required)
        if (same_domain(p, term.topology_key) &&
            TermCoversNamespace(term, pod.metadata.namespace_, p->metadata.namespace_, others) &&
            CompiledSelector::FromOptional(term.label_selector).Matches(p->metadata.labels))
          conflict = true;
    if (!conflict && p->spec.affinity && p->spec.affinity->pod_anti_affinity)
      for (const auto& term : p->spec.affinity->pod_anti_affinity->required)
        if (same_domain(p, term.topology_key) &&
            TermCoversNamespace(term, p->metadata.namespace_, pod.metadata.namespace_, others) &&
            CompiledSelector::FromOptional(term.label_selector).Matches(pod.metadata.labels))
          conflict = true;
    if (conflict) out.push_back(p);
  }
  return out;
}

}  // namespace

void SuggestAntiAffinity(Search& s) {
  std::map<std::string, const Node*> node_ptrs;
  for (const auto& n : s.c.nodes) node_ptrs[n->metadata.name] = n.get();
  std::set<std::vector<std::string>> moved_sets;
  // Finding a node's conflicts scans every bound pod; nodes of one domain repeat each other, so
  // a bounded number of them is examined.
  size_t examined = 0;
  std::vector<std::string> rejected;
  for (const auto& [node, st] : s.a.filter_statuses)
    if (IsAntiAffinityRejection(st) && s.by_name.count(node)) rejected.push_back(node);
  std::sort(rejected.begin(), rejected.end());
  for (const std::string& node : rejected) {
    if (++examined > 16 * s.options.max_candidates_per_kind) break;
    auto conflicts = AntiAffinityConflicts(*s.c.pod, *s.by_name[node], node_ptrs, s.c.others);
    if (conflicts.empty()) continue;
    std::set<std::string> keys;
    for (const auto& p : conflicts) keys.insert(p->Key());
    std::vector<std::string> pods(keys.begin(), keys.end());
    // The nodes of one topology domain share their conflicts: one check, one suggestion.
    if (!moved_sets.insert(pods).second) continue;
    if (!s.TryMore("anti-affinity")) break;
    Suggestion sug = MakeSuggestion("anti-affinity",
                                    fmt::format("move {} off node {}'s topology domain (required "
                                                "anti-affinity keeps the pod and them apart)",
                                                fmt::join(pods, ", "), node),
                                    "", node, static_cast<int64_t>(pods.size()));
    sug.victims = pods;
    s.verifier.Check(std::move(sug), s.c.WithoutPods(keys));
  }
}

namespace {

// Required inter-pod affinity: the nodes it rejected lack a pod matching the pod's terms in
// their topology domain. What is known of the cluster for the terms, computed once (a large
// cluster has thousands of rejected nodes and of bound pods).
class AffinitySearch {
 public:
  AffinitySearch(Search& s, const std::vector<PodAffinityTerm>& terms);

  // Candidate changes, each verified: label a running pod in the node's domain so that it
  // matches; run a new matching pod there; label the node into a domain where matching pods
  // run.
  void ForRejectedNode(const std::string& name);
  // When no pod anywhere matches: label the pod itself so that it matches its own terms and
  // may start the group (kube-scheduler lets the first pod of such a group go to any node
  // with the topology keys).
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

  Search& s_;
  const std::vector<PodAffinityTerm>& terms_;
  std::vector<LabelSelector> selectors_;
  std::vector<std::string> keys_;  // the terms' topology keys, once each
  std::map<std::string, const Node*> node_of_;
  std::map<Domain, Peer> closest_;  // per domain, the running pod needing the fewest changes
  std::set<Domain> matching_domains_;
  std::set<Domain> relabelled_in_, peopled_;  // domains already tried
  bool any_match_ = false;
  std::string peer_ns_;  // the namespace of a new matching pod

 public:
  bool any_match() const { return any_match_; }
};

AffinitySearch::AffinitySearch(Search& s, const std::vector<PodAffinityTerm>& terms)
    : s_(s), terms_(terms) {
  for (const auto& term : terms) selectors_.push_back(EffectiveSelector(term, *s.c.pod));
  for (const auto& term : terms)
    if (std::find(keys_.begin(), keys_.end(), term.topology_key) == keys_.end())
      keys_.push_back(term.topology_key);
  for (const auto& n : s.c.nodes) node_of_[n->metadata.name] = n.get();
  IndexPods();
  ChoosePeerNamespace();
}

bool AffinitySearch::Covered(const std::string& ns) const {
  for (const auto& term : terms_)
    if (!TermCoversNamespace(term, s_.c.pod->metadata.namespace_, ns, s_.c.others)) return false;
  return true;
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
  for (const Object& o : s_.c.others) {
    auto* p = std::get_if<PodPtr>(&o);
    if (!p || (*p)->spec.node_name.empty() || (*p)->metadata.deletion_timestamp) continue;
    auto n = node_of_.find((*p)->spec.node_name);
    if (n == node_of_.end() || !Covered((*p)->metadata.namespace_)) continue;
    LabelChanges changes = ChangesToMatch(selectors_, (*p)->metadata.labels);
    Domain domain = DomainOf(*n->second);
    if (changes.empty()) {
      any_match_ = true;
      if (Complete(domain)) matching_domains_.insert(std::move(domain));
      continue;
    }
    if (!Complete(domain)) continue;
    auto it = closest_.find(domain);
    if (it == closest_.end() || changes.size() < it->second.changes.size())
      closest_[std::move(domain)] = Peer{*p, std::move(changes)};
  }
}

// One every term covers, the pod's own if it is.
void AffinitySearch::ChoosePeerNamespace() {
  peer_ns_ = s_.c.pod->metadata.namespace_;
  if (Covered(peer_ns_)) return;
  peer_ns_.clear();
  for (const auto& term : terms_)
    for (const auto& candidate : term.namespaces)
      if (peer_ns_.empty() && Covered(candidate)) peer_ns_ = candidate;
  for (const Object& o : s_.c.others)
    if (auto* n = std::get_if<std::shared_ptr<const Namespace>>(&o);
        n && peer_ns_.empty() && Covered((*n)->metadata.name))
      peer_ns_ = (*n)->metadata.name;
}

void AffinitySearch::LabelPod(const Domain& here) {
  auto found = closest_.find(here);
  if (found == closest_.end() || !relabelled_in_.insert(here).second ||
      !s_.TryMore("pod-affinity/label-pod"))
    return;
  const Peer& best = found->second;
  auto relabelled = std::make_shared<Pod>(*best.pod);
  Apply(best.changes, relabelled->metadata.labels);
  relabelled->raw = DocumentOnlyFields(relabelled->raw);
  const bool overwrite = std::any_of(best.changes.begin(), best.changes.end(), [&](const auto& ch) {
    return ch.second && best.pod->metadata.labels.count(ch.first);
  });
  Suggestion sug = MakeSuggestion(
      "pod-affinity",
      fmt::format("label pod {} (on node {}) with {} (kubectl label pod -n {} {} {}{}): the "
                  "pod's required affinity then finds a matching pod in the domain {}",
                  best.pod->Key(), best.pod->spec.node_name, DescribeLabels(best.changes),
                  best.pod->metadata.namespace_, best.pod->metadata.name,
                  KubectlLabels(best.changes), overwrite ? " --overwrite" : "", Describe(here)),
      "", "", static_cast<int64_t>(best.changes.size()));
  sug.change = "label-pod";
  sug.domain = Describe(here);
  sug.running_pod = best.pod->Key();
  s_.verifier.Check(std::move(sug), s_.c.WithReplacedPod(relabelled));
}

// A new pod there: in a namespace every term covers, labelled to match every term.
void AffinitySearch::NewPod(const std::string& name, const Domain& here) {
  if (peer_ns_.empty() || !peopled_.insert(here).second || !s_.TryMore("pod-affinity/new-pod"))
    return;
  const Pod& pod = *s_.c.pod;
  auto peer = std::make_shared<Pod>();
  peer->metadata.namespace_ = peer_ns_;
  peer->metadata.name = pod.metadata.name + "-affinity-peer";
  peer->metadata.uid = "explain-affinity-peer";
  Apply(ChangesToMatch(selectors_, {}), peer->metadata.labels);
  peer->spec.node_name = name;
  peer->status.phase = "Running";
  Labels selector;
  for (size_t i = 0; i < keys_.size(); ++i) selector[keys_[i]] = here[i];
  Suggestion sug = MakeSuggestion(
      "pod-affinity",
      fmt::format("run a pod labelled {} in namespace {} in the domain {} (where node {} is), so "
                  "that the pod's required affinity finds a matching pod there",
                  DescribeLabels(ChangesToMatch(selectors_, {})), peer_ns_, Describe(here), name),
      "", "", static_cast<int64_t>(peer->metadata.labels.size()) + 1);
  sug.change = "new-pod";
  sug.domain = Describe(here);
  sug.new_pod =
      fmt::format("metadata:\n  namespace: {}\n  labels:\n{}spec:\n  nodeSelector:\n{}", peer_ns_,
                  LabelsYaml(peer->metadata.labels, "    "), LabelsYaml(selector, "    "));
  s_.verifier.Check(std::move(sug), s_.c.WithAdded(Object(PodPtr(peer))));
}

// The node joins a domain where a matching pod runs (never through a label that describes the
// machine, such as its hostname: that names a node rather than a group of them).
void AffinitySearch::LabelNode(const Node& x, const Domain& here) {
  const std::string& name = x.metadata.name;
  for (const auto& there : matching_domains_) {
    if (there == here) continue;
    LabelChanges changes;
    for (size_t i = 0; i < keys_.size(); ++i)
      if (here[i] != there[i]) changes[keys_[i]] = there[i];
    if (std::any_of(changes.begin(), changes.end(),
                    [](const auto& ch) { return IsMachineLabel(ch.first); }))
      continue;
    if (!s_.TryMore("pod-affinity/label-node")) return;
    auto moved = std::make_shared<Node>(x);
    Apply(changes, moved->metadata.labels);
    moved->raw = DocumentOnlyFields(moved->raw);
    Suggestion sug = MakeSuggestion(
        "pod-affinity",
        fmt::format("label node {} with {} (kubectl label node {} {} --overwrite): it joins the "
                    "domain {}, where pods matching the pod's required affinity run",
                    name, DescribeLabels(changes), name, KubectlLabels(changes), Describe(there)),
        "", name, static_cast<int64_t>(changes.size()));
    sug.change = "label-node";
    sug.domain = Describe(there);
    if (s_.verifier.Check(std::move(sug), s_.c.WithNode(moved)))
      return;  // one domain per node is enough to show
  }
}

void AffinitySearch::ForRejectedNode(const std::string& name) {
  auto it = node_of_.find(name);
  if (it == node_of_.end()) return;
  const Domain here = DomainOf(*it->second);
  if (Complete(here)) {
    LabelPod(here);
    NewPod(name, here);
  }
  LabelNode(*it->second, here);
}

void AffinitySearch::LabelSelf() {
  const Pod& pod = *s_.c.pod;
  if (any_match_ || !Covered(pod.metadata.namespace_)) return;
  LabelChanges changes = ChangesToMatch(selectors_, pod.metadata.labels);
  if (changes.empty()) return;
  auto self = std::make_shared<Pod>(pod);
  Apply(changes, self->metadata.labels);
  self->raw = DocumentOnlyFields(self->raw);
  LabelChanges set;
  for (const auto& [k, v] : changes)
    if (v) set[k] = v;
  Labels shown;
  Apply(set, shown);
  Suggestion sug = MakeSuggestion(
      "pod-affinity",
      fmt::format("no running pod matches the pod's required affinity: label the pod itself "
                  "with {} so that it matches its own terms and may start the group",
                  DescribeLabels(changes)),
      shown.empty() ? "" : "metadata:\n  labels:\n" + LabelsYaml(shown, "    "), "",
      static_cast<int64_t>(changes.size()));
  sug.change = "label-self";
  s_.verifier.Check(std::move(sug), s_.c.WithPod(self));
}

}  // namespace

void SuggestPodAffinity(Search& s) {
  const Pod& pod = *s.c.pod;
  if (!pod.spec.affinity || !pod.spec.affinity->pod_affinity ||
      pod.spec.affinity->pod_affinity->required.empty())
    return;
  const std::vector<PodAffinityTerm>& terms = pod.spec.affinity->pod_affinity->required;
  for (const auto& term : terms)
    if (!term.label_selector) return;  // a null selector matches no pod, whatever changes
  std::vector<std::string> rejected;
  for (const auto& [node, st] : s.a.filter_statuses)
    if (IsAffinityRejection(st)) rejected.push_back(node);
  if (rejected.empty()) return;
  std::sort(rejected.begin(), rejected.end());
  AffinitySearch search(s, terms);
  for (const std::string& name : rejected) search.ForRejectedNode(name);
  search.LabelSelf();
}

}  // namespace berth::explain
