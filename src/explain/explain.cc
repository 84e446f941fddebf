#include "explain/explain.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "berth/api/resources.h"
#include "config/plugin_names.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "sim/simulator.h"

namespace berth::explain {
namespace {

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;
namespace names = config::names;

struct Cluster {
  std::vector<Object> others;  // everything but nodes and the pod
  std::vector<NodePtr> nodes;
  PodPtr pod;
};

// One attempt for the pod over the cluster; nullopt when the simulation fails.
std::optional<sim::PodResult> Attempt(const config::SchedulerConfiguration& config,
                                      const Registry& registry, const Cluster& c,
                                      const ExplainOptions& options) {
  std::vector<Object> objects = c.others;
  for (const auto& n : c.nodes) objects.push_back(Object(n));
  objects.push_back(Object(c.pod));
  sim::SimulationOptions so;
  so.seed = options.seed;
  so.max_attempts = 1;
  so.config_source = options.config_source;
  auto r = sim::Simulate(config, registry, objects, so);
  if (!r.ok()) return std::nullopt;
  for (auto& pr : r->results)
    if (pr.pod == c.pod->Key()) return pr;
  return std::nullopt;
}

// How many nodes the pod fits on after a change: every node is filtered (no sampling by
// percentageOfNodesToScore), so that on a large cluster the count ranks the changes.
int FeasibleAfter(const config::SchedulerConfiguration& config, const Registry& registry,
                  const Cluster& c, const ExplainOptions& options) {
  config::SchedulerConfiguration all = config;
  all.percentage_of_nodes_to_score = 100;
  for (auto& profile : all.profiles) profile.percentage_of_nodes_to_score = 100;
  auto r = Attempt(all, registry, c, options);
  if (!r || r->result != "Scheduled" || !r->last) return 0;
  return std::max(1, r->last->feasible_nodes);
}

bool Tolerates(const Pod& pod, const Taint& t) {
  for (const Toleration& tol : pod.spec.tolerations) {
    if (!tol.effect.empty() && tol.effect != t.effect) continue;
    if (tol.op == "Exists" && (tol.key.empty() || tol.key == t.key)) return true;
    if ((tol.op.empty() || tol.op == "Equal") && tol.key == t.key && tol.value == t.value)
      return true;
  }
  return false;
}

std::string FormatAmount(std::string_view resource, int64_t v) {
  if (resource == "cpu") return v % 1000 == 0 ? fmt::format("{}", v / 1000) : fmt::format("{}m", v);
  if (resource == "memory" || resource == "ephemeral-storage") {
    constexpr int64_t kMi = 1024 * 1024;
    return fmt::format("{}Mi", (v + kMi - 1) / kMi);
  }
  return std::to_string(v);
}

// Pods on `node` of lower priority than `pod`, in the order preemption would pick victims
// (lowest priority first, then the largest request of `resource`), until `lack` is covered.
std::vector<std::string> EvictionCandidates(const std::vector<Object>& others, const Pod& pod,
                                            const std::string& node, std::string_view resource,
                                            int64_t lack) {
  std::vector<PodPtr> lower;
  for (const Object& o : others)
    if (auto* p = std::get_if<PodPtr>(&o);
        p && (*p)->spec.node_name == node && (*p)->Priority() < pod.Priority())
      lower.push_back(*p);
  std::stable_sort(lower.begin(), lower.end(), [&](const PodPtr& a, const PodPtr& b) {
    if (a->Priority() != b->Priority()) return a->Priority() < b->Priority();
    return ComputePodRequests(*a).requests.Get(resource) >
           ComputePodRequests(*b).requests.Get(resource);
  });
  std::vector<std::string> names;
  int64_t freed = 0;
  for (const auto& p : lower) {
    if (freed >= lack) break;
    const int64_t r = ComputePodRequests(*p).requests.Get(resource);
    if (r <= 0) continue;
    freed += r;
    names.push_back(p->Key());
  }
  if (freed < lack) return {};
  return names;
}

// The resources a node can lack for a pod: cpu, memory, ephemeral storage, and the extended
// resources (such as nvidia.com/gpu) the pod asks for.
std::vector<std::string> ResourceNames(const Resource& want) {
  std::vector<std::string> names = {"cpu", "memory", "ephemeral-storage"};
  for (const auto& [name, v] : want.scalar)
    if (v > 0) names.push_back(name);
  return names;
}

// How much a shortfall weighs when ranking: millicores, MiB, or units of an extended resource.
int64_t CostOf(std::string_view resource, int64_t lack) {
  if (resource == "memory" || resource == "ephemeral-storage") return lack / (1024 * 1024);
  return lack;
}

// Zone and region labels a volume can pin its pods to.
constexpr std::string_view kZoneLabels[] = {
    "topology.kubernetes.io/zone", "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/region"};

// The zone labels of the bound volumes the pod's claims use: what a node must carry.
std::map<std::string, std::string> VolumeZones(const Pod& pod, const std::vector<Object>& others) {
  std::map<std::string, std::string> want;
  for (const Volume& v : pod.spec.volumes) {
    if (!v.persistent_volume_claim) continue;
    std::string pv_name;
    for (const Object& o : others)
      if (auto* c = std::get_if<std::shared_ptr<const PersistentVolumeClaim>>(&o);
          c && (*c)->metadata.namespace_ == pod.metadata.namespace_ &&
          (*c)->metadata.name == v.persistent_volume_claim->claim_name)
        pv_name = (*c)->spec.volume_name;
    if (pv_name.empty()) continue;
    for (const Object& o : others)
      if (auto* pv = std::get_if<std::shared_ptr<const PersistentVolume>>(&o);
          pv && (*pv)->metadata.name == pv_name)
        for (std::string_view key : kZoneLabels)
          if (auto it = (*pv)->metadata.labels.find(key); it != (*pv)->metadata.labels.end())
            want[std::string(key)] = it->second;  // a list "a__b" keeps its first zone below
  }
  for (auto& [k, v] : want)
    if (auto cut = v.find("__"); cut != std::string::npos) v.resize(cut);
  return want;
}

// Matching pods per topology domain for one spread constraint, over nodes carrying the key.
std::map<std::string, int> DomainCounts(const TopologySpreadConstraint& tsc, const Pod& pod,
                                        const std::vector<NodePtr>& nodes,
                                        const std::vector<Object>& others) {
  std::map<std::string, int> counts;
  std::map<std::string, std::string> domain_of;
  for (const auto& n : nodes)
    if (auto it = n->metadata.labels.find(tsc.topology_key); it != n->metadata.labels.end()) {
      counts.emplace(it->second, 0);
      domain_of[n->metadata.name] = it->second;
    }
  CompiledSelector sel = CompiledSelector::FromOptional(tsc.label_selector);
  for (const auto& key : tsc.match_label_keys)
    if (auto it = pod.metadata.labels.find(key); it != pod.metadata.labels.end())
      sel.AddIn(key, it->second);
  for (const Object& o : others)
    if (auto* p = std::get_if<PodPtr>(&o);
        p && (*p)->metadata.namespace_ == pod.metadata.namespace_)
      if (auto d = domain_of.find((*p)->spec.node_name);
          d != domain_of.end() && sel.Matches((*p)->metadata.labels))
        ++counts[d->second];
  return counts;
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

Suggestion MakeSuggestion(std::string kind, std::string description, std::string yaml,
                          std::string node, int opens, int64_t cost,
                          std::vector<std::string> victims) {
  Suggestion s;
  s.kind = std::move(kind);
  s.description = std::move(description);
  s.yaml = std::move(yaml);
  s.node = std::move(node);
  s.opens_nodes = opens;
  s.cost = cost;
  s.victims = std::move(victims);
  return s;
}

// Label changes: a value to set, or nullopt to remove the label.
using LabelChanges = std::map<std::string, std::optional<std::string>>;

// The changes that turn `have` into `want`.
LabelChanges Diff(const Labels& have, const Labels& want) {
  LabelChanges changes;
  for (const auto& [k, v] : have)
    if (!want.count(k)) changes[k] = std::nullopt;
  for (const auto& [k, v] : want)
    if (auto it = have.find(k); it == have.end() || it->second != v) changes[k] = v;
  return changes;
}

// Changes `want` so that it satisfies `key op values` for the set-based operators (In picks the
// first value; Gt and Lt are left to the caller).
void Satisfy(const std::string& key, const std::string& op, const std::vector<std::string>& values,
             Labels& want) {
  auto it = want.find(key);
  const bool listed =
      it != want.end() && std::find(values.begin(), values.end(), it->second) != values.end();
  if (op == "In" && !listed && !values.empty()) want[key] = values.front();
  if (op == "NotIn" && listed) want.erase(it);
  if (op == "Exists" && it == want.end()) want[key] = "true";
  if (op == "DoesNotExist" && it != want.end()) want.erase(it);
}

// The fewest label changes (roughly: one per requirement not met) after which `have` matches
// every selector. An Exists requirement takes "true"; a selector that contradicts itself gives
// changes that still do not match, which the verification then throws away.
LabelChanges ChangesToMatch(const std::vector<LabelSelector>& selectors, const Labels& have) {
  Labels want = have;
  for (const LabelSelector& sel : selectors) {
    for (const auto& [k, v] : sel.match_labels) want[k] = v;
    for (const LabelSelectorRequirement& r : sel.match_expressions)
      Satisfy(r.key, r.op, r.values, want);
  }
  return Diff(have, want);
}

// The label changes after which a node's labels match one required node affinity term (the
// term needing the fewest); nullopt when every term selects on fields (the node's name).
std::optional<LabelChanges> NodeTermChanges(const NodeSelector& required, const Labels& have) {
  std::optional<LabelChanges> best;
  for (const NodeSelectorTerm& term : required.terms) {
    if (!term.match_fields.empty() || term.match_expressions.empty()) continue;
    Labels want = have;
    for (const NodeSelectorRequirement& r : term.match_expressions) {
      Satisfy(r.key, r.op, r.values, want);
      auto it = want.find(r.key);
      if ((r.op == "Gt" || r.op == "Lt") && r.values.size() == 1) {
        char* end = nullptr;
        const long long bound = std::strtoll(r.values[0].c_str(), &end, 10);
        if (end == r.values[0].c_str() || *end) continue;
        long long now = 0;
        char* now_end = nullptr;
        const bool number = it != want.end() && !it->second.empty() &&
                            (now = std::strtoll(it->second.c_str(), &now_end, 10), !*now_end);
        const bool ok = number && (r.op == "Gt" ? now > bound : now < bound);
        if (!ok) want[r.key] = std::to_string(r.op == "Gt" ? bound + 1 : bound - 1);
      }
    }
    LabelChanges changes = Diff(have, want);
    if (!best || changes.size() < best->size()) best = std::move(changes);
  }
  return best;
}

void Apply(const LabelChanges& changes, Labels& labels) {
  for (const auto& [k, v] : changes) {
    if (v) {
      labels[k] = *v;
    } else {
      labels.erase(k);
    }
  }
}

// "a=1 b-" as kubectl label takes them.
std::string KubectlLabels(const LabelChanges& changes) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : changes) parts.push_back(v ? fmt::format("{}={}", k, *v) : k + "-");
  return fmt::format("{}", fmt::join(parts, " "));
}

// "a=1,b removed" for prose.
std::string DescribeLabels(const LabelChanges& changes) {
  std::vector<std::string> parts;
  for (const auto& [k, v] : changes)
    parts.push_back(v ? fmt::format("{}={}", k, *v) : fmt::format("{} removed", k));
  return fmt::format("{}", fmt::join(parts, ","));
}

// The selector an existing pod must match to count for the incoming pod's required affinity
// term: the term's own, with matchLabelKeys / mismatchLabelKeys resolved against the incoming
// pod's labels.
LabelSelector EffectiveSelector(const PodAffinityTerm& term, const Pod& pod) {
  LabelSelector s = term.label_selector.value_or(LabelSelector{});
  for (const auto& key : term.match_label_keys)
    if (auto it = pod.metadata.labels.find(key); it != pod.metadata.labels.end())
      s.match_expressions.push_back({key, "In", {it->second}});
  for (const auto& key : term.mismatch_label_keys)
    if (auto it = pod.metadata.labels.find(key); it != pod.metadata.labels.end())
      s.match_expressions.push_back({key, "NotIn", {it->second}});
  return s;
}

// YAML of a label map under `indent`.
std::string LabelsYaml(const Labels& labels, std::string_view indent) {
  std::string out;
  for (const auto& [k, v] : labels) out += fmt::format("{}{}: \"{}\"\n", indent, k, v);
  return out;
}

// Required inter-pod affinity: the nodes it rejected lack a pod matching the pod's terms in
// their topology domain. Candidate changes, each verified by scheduling again: label a running
// pod in a rejected node's domain so that it matches; run a new matching pod there; label a
// rejected node into a domain where matching pods run; or, when no pod anywhere matches, label
// the pod itself so that it matches its own terms and may start the group (as kube-scheduler
// lets the first pod of such a group go to any node with the topology keys).
std::vector<Suggestion> PodAffinitySuggestions(const config::SchedulerConfiguration& config,
                                               const Registry& registry, const Cluster& c,
                                               const ExplainOptions& options,
                                               const SchedulingAttempt& a) {
  const Pod& pod = *c.pod;
  if (!pod.spec.affinity || !pod.spec.affinity->pod_affinity ||
      pod.spec.affinity->pod_affinity->required.empty())
    return {};
  const std::vector<PodAffinityTerm>& terms = pod.spec.affinity->pod_affinity->required;
  std::vector<std::string> rejected;
  for (const auto& [node, st] : a.filter_statuses)
    if (st.plugin() == names::kInterPodAffinity &&
        st.Message() == interpodaffinity::kErrReasonAffinityRulesNotMatch)
      rejected.push_back(node);
  if (rejected.empty()) return {};
  std::sort(rejected.begin(), rejected.end());

  std::vector<LabelSelector> selectors;
  for (const auto& term : terms) {
    if (!term.label_selector) return {};  // a null selector matches no pod, whatever changes
    selectors.push_back(EffectiveSelector(term, pod));
  }
  std::vector<CompiledSelector> compiled;
  for (const auto& sel : selectors) compiled.push_back(CompiledSelector::FromOptional(sel));
  std::vector<std::string> keys;  // the terms' topology keys, once each
  for (const auto& term : terms)
    if (std::find(keys.begin(), keys.end(), term.topology_key) == keys.end())
      keys.push_back(term.topology_key);
  auto covered = [&](const std::string& ns) {
    for (const auto& term : terms)
      if (!TermCoversNamespace(term, pod.metadata.namespace_, ns, c.others)) return false;
    return true;
  };
  std::map<std::string, const Node*> node_of;
  for (const auto& n : c.nodes) node_of[n->metadata.name] = n.get();
  // The node's values of the topology keys, "" for a missing key.
  auto domain_of = [&](const Node& n) {
    std::vector<std::string> values;
    for (const auto& key : keys) {
      auto it = n.metadata.labels.find(key);
      values.push_back(it == n.metadata.labels.end() ? "" : it->second);
    }
    return values;
  };
  auto describe_domain = [&](const std::vector<std::string>& values) {
    std::vector<std::string> parts;
    for (size_t i = 0; i < keys.size(); ++i) parts.push_back(keys[i] + "=" + values[i]);
    return fmt::format("{}", fmt::join(parts, ","));
  };
  // Bound pods in namespaces every term covers, with what each would need to match them all.
  // Computed once, not per rejected node: a large cluster has thousands of both.
  struct Peer {
    PodPtr pod;
    LabelChanges changes;
  };
  auto complete = [](const std::vector<std::string>& domain) {
    return std::none_of(domain.begin(), domain.end(),
                        [](const std::string& v) { return v.empty(); });
  };
  std::map<std::vector<std::string>, Peer> closest;  // per domain, the fewest changes
  std::set<std::vector<std::string>> matching_domains;
  bool any_match = false;
  for (const Object& o : c.others) {
    auto* p = std::get_if<PodPtr>(&o);
    if (!p || (*p)->spec.node_name.empty() || (*p)->metadata.deletion_timestamp) continue;
    auto n = node_of.find((*p)->spec.node_name);
    if (n == node_of.end() || !covered((*p)->metadata.namespace_)) continue;
    LabelChanges changes = ChangesToMatch(selectors, (*p)->metadata.labels);
    std::vector<std::string> domain = domain_of(*n->second);
    if (changes.empty()) {
      any_match = true;
      if (complete(domain)) matching_domains.insert(std::move(domain));
      continue;
    }
    if (!complete(domain)) continue;
    auto it = closest.find(domain);
    if (it == closest.end() || changes.size() < it->second.changes.size())
      closest[std::move(domain)] = Peer{*p, std::move(changes)};
  }
  // The namespace of a new matching pod: one every term covers, the pod's own if it is.
  std::string peer_ns = pod.metadata.namespace_;
  if (!covered(peer_ns)) {
    peer_ns.clear();
    for (const auto& term : terms)
      for (const auto& candidate : term.namespaces)
        if (peer_ns.empty() && covered(candidate)) peer_ns = candidate;
    for (const Object& o : c.others)
      if (auto* n = std::get_if<std::shared_ptr<const Namespace>>(&o);
          n && peer_ns.empty() && covered((*n)->metadata.name))
        peer_ns = (*n)->metadata.name;
  }

  std::vector<Suggestion> out;
  std::map<std::string, size_t> tried;
  auto try_more = [&](const std::string& change) {
    return tried[change]++ < options.max_candidates_per_kind;
  };
  std::set<std::vector<std::string>> relabelled_in, peopled;  // domains already tried
  for (const std::string& name : rejected) {
    const Node* x = node_of.count(name) ? node_of[name] : nullptr;
    if (!x) continue;
    const std::vector<std::string> here = domain_of(*x);
    if (complete(here)) {
      // A running pod in the node's domain, relabelled: the one needing the fewest changes.
      auto found_peer = closest.find(here);
      const Peer* best = found_peer == closest.end() ? nullptr : &found_peer->second;
      if (best && relabelled_in.insert(here).second && try_more("label-pod")) {
        Cluster changed = c;
        auto relabelled = std::make_shared<Pod>(*best->pod);
        Apply(best->changes, relabelled->metadata.labels);
        relabelled->raw.reset();
        for (Object& o : changed.others)
          if (auto* p = std::get_if<PodPtr>(&o); p && p->get() == best->pod.get())
            o = Object(PodPtr(relabelled));
        if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0) {
          Suggestion sug = MakeSuggestion(
              "pod-affinity",
              fmt::format("label pod {} (on node {}) with {} (kubectl label pod -n {} "
                          "{} {}{}): the pod's required affinity then finds a matching pod in "
                          "the domain {}",
                          best->pod->Key(), best->pod->spec.node_name,
                          DescribeLabels(best->changes), best->pod->metadata.namespace_,
                          best->pod->metadata.name, KubectlLabels(best->changes),
                          std::any_of(best->changes.begin(), best->changes.end(),
                                      [&](const auto& ch) {
                                        return ch.second &&
                                               best->pod->metadata.labels.count(ch.first);
                                      })
                              ? " --overwrite"
                              : "",
                          describe_domain(here)),
              "", "", opens, static_cast<int64_t>(best->changes.size()), {});
          sug.change = "label-pod";
          sug.domain = describe_domain(here);
          sug.running_pod = best->pod->Key();
          out.push_back(std::move(sug));
        }
      }
      // A new pod there: in a namespace every term covers, labelled to match every term.
      const std::string& ns = peer_ns;
      if (!ns.empty() && peopled.insert(here).second && try_more("new-pod")) {
        auto peer = std::make_shared<Pod>();
        peer->metadata.namespace_ = ns;
        peer->metadata.name = pod.metadata.name + "-affinity-peer";
        peer->metadata.uid = "explain-affinity-peer";
        Apply(ChangesToMatch(selectors, {}), peer->metadata.labels);
        peer->spec.node_name = name;
        peer->status.phase = "Running";
        Cluster changed = c;
        changed.others.push_back(Object(PodPtr(peer)));
        if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0) {
          Labels selector;
          for (size_t i = 0; i < keys.size(); ++i) selector[keys[i]] = here[i];
          Suggestion sug = MakeSuggestion(
              "pod-affinity",
              fmt::format("run a pod labelled {} in namespace {} in the domain {} (where node {} "
                          "is), so that the pod's required affinity finds a matching pod there",
                          DescribeLabels(ChangesToMatch(selectors, {})), ns, describe_domain(here),
                          name),
              "", "", opens, static_cast<int64_t>(peer->metadata.labels.size()) + 1, {});
          sug.change = "new-pod";
          sug.domain = describe_domain(here);
          sug.new_pod =
              fmt::format("metadata:\n  namespace: {}\n  labels:\n{}spec:\n  nodeSelector:\n{}", ns,
                          LabelsYaml(peer->metadata.labels, "    "), LabelsYaml(selector, "    "));
          out.push_back(std::move(sug));
        }
      }
    }
    // The node joins a domain where a matching pod runs (not for the hostname label, which
    // names a node rather than a group of them).
    for (const auto& there : matching_domains) {
      if (there == here) continue;
      LabelChanges changes;
      for (size_t i = 0; i < keys.size(); ++i)
        if (here[i] != there[i]) changes[keys[i]] = there[i];
      if (changes.count("kubernetes.io/hostname")) continue;
      if (!try_more("label-node")) break;
      auto moved = std::make_shared<Node>(*x);
      Apply(changes, moved->metadata.labels);
      moved->raw.reset();
      Cluster changed = c;
      for (auto& n : changed.nodes)
        if (n->metadata.name == name) n = moved;
      if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0) {
        Suggestion sug = MakeSuggestion(
            "pod-affinity",
            fmt::format("label node {} with {} (kubectl label node {} {} --overwrite): "
                        "it joins the domain {}, where pods matching the pod's "
                        "required affinity run",
                        name, DescribeLabels(changes), name, KubectlLabels(changes),
                        describe_domain(there)),
            "", name, opens, static_cast<int64_t>(changes.size()), {});
        sug.change = "label-node";
        sug.domain = describe_domain(there);
        out.push_back(std::move(sug));
        break;  // one domain per node is enough to show
      }
    }
  }
  // No pod anywhere matches: the pod may start the group if it matches its own terms.
  if (!any_match && covered(pod.metadata.namespace_)) {
    LabelChanges changes = ChangesToMatch(selectors, pod.metadata.labels);
    if (!changes.empty()) {
      auto self = std::make_shared<Pod>(pod);
      Apply(changes, self->metadata.labels);
      self->raw.reset();
      Cluster changed = c;
      changed.pod = self;
      if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0) {
        LabelChanges set;
        for (const auto& [k, v] : changes)
          if (v) set[k] = v;
        Labels shown;
        Apply(set, shown);
        Suggestion sug = MakeSuggestion(
            "pod-affinity",
            fmt::format("no running pod matches the pod's required affinity: label "
                        "the pod itself with {} so that it matches its own terms and "
                        "may start the group",
                        DescribeLabels(changes)),
            shown.empty() ? "" : "metadata:\n  labels:\n" + LabelsYaml(shown, "    "), "", opens,
            static_cast<int64_t>(changes.size()), {});
        sug.change = "label-self";
        out.push_back(std::move(sug));
      }
    }
  }
  return out;
}

// " (Plugin=score×weight ...)" of scored node i: each plugin's normalized score and weight.
std::string Scores(const SchedulingAttempt& a, size_t i) {
  std::vector<std::string> parts;
  for (size_t p = 0; p < a.score_plugins.size() && p < a.scores.plugin_scores.size(); ++p)
    if ((p >= a.scores.plugin_ran.size() || a.scores.plugin_ran[p]) &&
        i < a.scores.plugin_scores[p].size() && p < a.score_weights.size())
      parts.push_back(fmt::format("{}={}x{}", a.score_plugins[p], a.scores.plugin_scores[p][i],
                                  a.score_weights[p]));
  if (parts.empty()) return "";
  return fmt::format(" ({})", fmt::join(parts, " "));
}

// Text output: nodes listed one per line up to this many; beyond, grouped.
constexpr size_t kMaxTextRows = 30;
constexpr size_t kBestShown = 5;

}  // namespace

Result<Explanation> Explain(const config::SchedulerConfiguration& config, const Registry& registry,
                            const std::vector<Object>& objects, const std::string& pod_key,
                            const ExplainOptions& options) {
  Cluster c;
  for (const Object& o : objects) {
    if (auto* p = std::get_if<PodPtr>(&o)) {
      if ((*p)->Key() == pod_key) {
        c.pod = *p;
        continue;
      }
      if ((*p)->spec.node_name.empty()) continue;  // other pending pods do not take part
    } else if (auto* n = std::get_if<NodePtr>(&o)) {
      c.nodes.push_back(*n);
      continue;
    }
    c.others.push_back(o);
  }
  if (!c.pod) return Error{fmt::format("pod {} not found", pod_key)};

  Explanation e;
  e.pod = pod_key;
  if (!c.pod->spec.node_name.empty()) {
    e.result = "Bound";
    e.node = c.pod->spec.node_name;
    e.message = fmt::format("already bound to {}", e.node);
    return e;
  }
  auto first = Attempt(config, registry, c, options);
  if (!first) return Error{fmt::format("{}: the scheduling attempt could not run", pod_key)};
  e.result = first->result;
  e.node = first->node;
  e.message = first->message;
  e.attempt = first->last;
  if (e.result == "Scheduled" || !e.attempt) return e;

  // Candidate changes from the rejections, each checked by scheduling again.
  const SchedulingAttempt& a = *e.attempt;
  std::vector<Suggestion> found;
  std::map<std::string, NodePtr> by_name;
  for (const auto& n : c.nodes) by_name[n->metadata.name] = n;

  // Tolerations for the taints that kept the pod off nodes.
  std::set<std::tuple<std::string, std::string, std::string>> taints;
  for (const auto& [node, st] : a.filter_statuses) {
    if (st.plugin() != names::kTaintToleration || !by_name.count(node)) continue;
    for (const Taint& t : by_name[node]->spec.taints)
      if ((t.effect == "NoSchedule" || t.effect == "NoExecute") && !Tolerates(*c.pod, t))
        taints.insert({t.key, t.value, t.effect});
  }
  for (const auto& [key, value, effect] : taints) {
    Cluster changed = c;
    auto pod = std::make_shared<Pod>(*c.pod);
    pod->spec.tolerations.push_back({key, value.empty() ? "Exists" : "Equal", value, effect, {}});
    changed.pod = pod;
    if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0) {
      Suggestion s = MakeSuggestion(
          "toleration",
          fmt::format("add a toleration for the taint {}{}{}:{}", key, value.empty() ? "" : "=",
                      value, effect),
          value.empty() ? fmt::format("tolerations:\n- key: {}\n  operator: Exists\n  effect: {}\n",
                                      key, effect)
                        : fmt::format("tolerations:\n- key: {}\n  operator: Equal\n  value: {}\n  "
                                      "effect: {}\n",
                                      key, value, effect),
          "", opens, 0, {});
      found.push_back(std::move(s));
    }
  }

  // Each candidate costs a scheduling attempt over the whole cluster, so only the cheapest few
  // per kind are tried: on a large cluster the rejected nodes of one kind look alike.
  std::map<std::string, size_t> tried;
  auto try_more = [&](const std::string& kind) {
    return tried[kind]++ < options.max_candidates_per_kind;
  };
  const std::map<std::string, std::string> volume_zones = VolumeZones(*c.pod, c.others);
  std::vector<std::pair<int64_t, std::string>> short_nodes;  // (shortfall, node), cheapest first
  for (const auto& [node, st] : a.filter_statuses) {
    if (st.plugin() != names::kNodeResourcesFit || !by_name.count(node)) continue;
    const Resource want = ComputePodRequests(*c.pod).requests;
    Resource used;
    for (const Object& o : c.others)
      if (auto* p = std::get_if<PodPtr>(&o); p && (*p)->spec.node_name == node)
        used.Add(ComputePodRequests(**p).requests);
    const Resource alloc = Resource::FromList(by_name[node]->status.allocatable);
    int64_t cost = 0;
    for (const std::string& r : ResourceNames(want))
      if (int64_t lack = used.Get(r) + want.Get(r) - alloc.Get(r); lack > 0)
        cost += CostOf(r, lack);
    short_nodes.emplace_back(cost, node);
  }
  std::stable_sort(short_nodes.begin(), short_nodes.end());
  std::set<std::string> resource_candidates;
  for (size_t i = 0; i < short_nodes.size() && i < options.max_candidates_per_kind; ++i)
    resource_candidates.insert(short_nodes[i].second);
  const NodeSelector* required_node_affinity = c.pod->spec.affinity &&
                                                       c.pod->spec.affinity->node_affinity &&
                                                       c.pod->spec.affinity->node_affinity->required
                                                   ? &*c.pod->spec.affinity->node_affinity->required
                                                   : nullptr;
  const bool wants_node_labels = !c.pod->spec.node_selector.empty() || required_node_affinity;

  for (const auto& [node, st] : a.filter_statuses) {
    if (!by_name.count(node)) continue;
    const NodePtr& n = by_name[node];
    auto with_node = [&, name = node](NodePtr replacement) {
      Cluster changed = c;
      for (auto& x : changed.nodes)
        if (x->metadata.name == name) x = replacement;
      return FeasibleAfter(config, registry, changed, options);
    };
    if (st.plugin() == names::kNodeUnschedulable && try_more("uncordon")) {
      auto uncordoned = std::make_shared<Node>(*n);
      uncordoned->spec.unschedulable = false;
      if (int opens = with_node(uncordoned); opens > 0)
        found.push_back(MakeSuggestion(
            "uncordon", fmt::format("uncordon node {} (kubectl uncordon {})", node, node), "", node,
            opens, 0, {}));
    } else if (st.plugin() == names::kNodeAffinity && wants_node_labels && try_more("label")) {
      // The nodeSelector's labels, then the required node affinity term needing fewest changes.
      LabelChanges changes;
      for (const auto& [k, v] : c.pod->spec.node_selector)
        if (auto it = n->metadata.labels.find(k); it == n->metadata.labels.end() || it->second != v)
          changes[k] = v;
      if (required_node_affinity) {
        Labels after = n->metadata.labels;
        Apply(changes, after);
        auto term = NodeTermChanges(*required_node_affinity, after);
        if (!term) continue;
        for (const auto& [k, v] : *term) changes[k] = v;
      }
      if (changes.empty()) continue;
      auto labelled = std::make_shared<Node>(*n);
      Apply(changes, labelled->metadata.labels);
      bool overwrite = false;
      for (const auto& [k, v] : changes) overwrite |= v && n->metadata.labels.count(k);
      if (int opens = with_node(labelled); opens > 0)
        found.push_back(
            MakeSuggestion("label",
                           fmt::format("label node {} with {} (kubectl label node {} {}{})", node,
                                       DescribeLabels(changes), node, KubectlLabels(changes),
                                       overwrite ? " --overwrite" : ""),
                           "", node, opens, static_cast<int64_t>(changes.size()), {}));
    } else if (st.plugin() == names::kVolumeZone && !volume_zones.empty() &&
               try_more("volume-zone")) {
      auto moved = std::make_shared<Node>(*n);
      std::vector<std::string> labels;
      for (const auto& [k, v] : volume_zones) {
        auto it = moved->metadata.labels.find(k);
        if (it != moved->metadata.labels.end() && it->second == v) continue;
        moved->metadata.labels[k] = v;
        labels.push_back(fmt::format("{}={}", k, v));
      }
      if (labels.empty()) continue;
      if (int opens = with_node(moved); opens > 0)
        found.push_back(
            MakeSuggestion("volume-zone",
                           fmt::format("the pod's volume is in {}: a node there would take it "
                                       "(node {} is not; its zone labels would have to be {})",
                                       fmt::join(labels, ","), node, fmt::join(labels, ",")),
                           "", node, opens, static_cast<int64_t>(labels.size()), {}));
    } else if (st.plugin() == names::kNodeResourcesFit && resource_candidates.count(node)) {
      // What the node lacks for this pod: its requests plus the pod's, beyond allocatable.
      const Resource want = ComputePodRequests(*c.pod).requests;
      Resource used;
      for (const Object& o : c.others)
        if (auto* p = std::get_if<PodPtr>(&o); p && (*p)->spec.node_name == node)
          used.Add(ComputePodRequests(**p).requests);
      const Resource alloc = Resource::FromList(n->status.allocatable);
      auto grown = std::make_shared<Node>(*n);
      std::vector<std::string> freeing;
      std::set<std::string> victims;
      bool preemptible = true;
      int64_t cost = 0;
      for (const std::string& r : ResourceNames(want)) {
        const int64_t lack = used.Get(r) + want.Get(r) - alloc.Get(r);
        if (lack <= 0) continue;
        freeing.push_back(fmt::format("{} {}", FormatAmount(r, lack), r));
        auto evict = EvictionCandidates(c.others, *c.pod, node, r, lack);
        if (evict.empty()) preemptible = false;
        victims.insert(evict.begin(), evict.end());
        cost += CostOf(r, lack);
        Quantity q = Quantity::Parse(r == "cpu" ? fmt::format("{}m", alloc.Get(r) + lack)
                                                : std::to_string(alloc.Get(r) + lack))
                         .value();
        grown->status.allocatable[r] = q;
      }
      if (freeing.empty()) continue;
      if (int opens = with_node(grown); opens > 0) {
        Suggestion sug =
            MakeSuggestion("resources",
                           fmt::format("free {} on node {} (evict or shrink pods there)",
                                       fmt::join(freeing, " and "), node),
                           "", node, opens, cost, {});
        if (preemptible && !victims.empty()) {
          sug.victims.assign(victims.begin(), victims.end());
          sug.description += fmt::format("; lower-priority pods preemption would evict: {}",
                                         fmt::join(sug.victims, ", "));
        }
        found.push_back(std::move(sug));
      }
    }
  }

  // Inter-pod anti-affinity: the pods whose presence keeps it off a node, if moving them
  // would let it in.
  std::map<std::string, const Node*> node_ptrs;
  for (const auto& n : c.nodes) node_ptrs[n->metadata.name] = n.get();
  std::set<std::vector<std::string>> moved_sets;
  // Finding a node's conflicts scans every bound pod; nodes of one domain repeat each other, so
  // a bounded number of them is examined.
  size_t examined = 0;
  for (const auto& [node, st] : a.filter_statuses) {
    // Rejections for the pod's required affinity have no pods to move; on a large cluster
    // they are thousands of nodes.
    if (st.plugin() != names::kInterPodAffinity ||
        st.Message() == interpodaffinity::kErrReasonAffinityRulesNotMatch || !by_name.count(node))
      continue;
    if (tried["anti-affinity"] >= options.max_candidates_per_kind ||
        ++examined > 16 * options.max_candidates_per_kind)
      break;
    auto conflicts = AntiAffinityConflicts(*c.pod, *by_name[node], node_ptrs, c.others);
    if (conflicts.empty()) continue;
    std::vector<std::string> names;
    for (const auto& p : conflicts) names.push_back(p->Key());
    std::sort(names.begin(), names.end());
    // The nodes of one topology domain share their conflicts: one check, one suggestion.
    if (!moved_sets.insert(names).second) continue;
    ++tried["anti-affinity"];
    std::set<const Pod*> gone;
    for (const auto& p : conflicts) gone.insert(p.get());
    Cluster changed = c;
    std::erase_if(changed.others, [&](const Object& o) {
      auto* p = std::get_if<PodPtr>(&o);
      return p && gone.count(p->get());
    });
    if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0)
      found.push_back(MakeSuggestion("anti-affinity",
                                     fmt::format("move {} off node {}'s topology domain (required "
                                                 "anti-affinity keeps the pod and them apart)",
                                                 fmt::join(names, ", "), node),
                                     "", node, opens, static_cast<int64_t>(names.size()), names));
  }

  for (auto& sug : PodAffinitySuggestions(config, registry, c, options, a))
    found.push_back(std::move(sug));

  // Topology spread: the skew that blocks the pod, and the maxSkew that would admit it.
  for (size_t i = 0; i < c.pod->spec.topology_spread_constraints.size(); ++i) {
    const TopologySpreadConstraint& tsc = c.pod->spec.topology_spread_constraints[i];
    if (tsc.when_unsatisfiable != "DoNotSchedule") continue;
    bool blocked = false;
    for (const auto& [node, st] : a.filter_statuses)
      if (st.plugin() == names::kPodTopologySpread) blocked = true;
    if (!blocked) break;
    auto counts = DomainCounts(tsc, *c.pod, c.nodes, c.others);
    if (counts.empty()) continue;
    int lowest = counts.begin()->second, highest = lowest;
    for (const auto& [d, n] : counts) {
      lowest = std::min(lowest, n);
      highest = std::max(highest, n);
    }
    // The pod joining the emptiest domain that some node passes the other filters for would
    // have skew (count + 1 - lowest); the smallest such skew is the maxSkew needed.
    int needed = highest + 1 - lowest;
    for (const auto& [node, st] : a.filter_statuses) {
      if (st.plugin() != names::kPodTopologySpread || !by_name.count(node)) continue;
      auto it = by_name[node]->metadata.labels.find(tsc.topology_key);
      if (it != by_name[node]->metadata.labels.end())
        needed = std::min(needed, counts[it->second] + 1 - lowest);
    }
    if (needed <= tsc.max_skew) continue;
    Cluster changed = c;
    auto pod = std::make_shared<Pod>(*c.pod);
    pod->spec.topology_spread_constraints[i].max_skew = needed;
    changed.pod = pod;
    std::vector<std::string> shown;
    for (const auto& [d, n] : counts) shown.push_back(fmt::format("{}={}", d, n));
    if (shown.size() > 6) {
      shown.resize(6);
      shown.push_back("...");
    }
    if (int opens = FeasibleAfter(config, registry, changed, options); opens > 0)
      found.push_back(MakeSuggestion(
          "spread-skew",
          fmt::format("matching pods per {} are {} (maxSkew {}): raise maxSkew to {} or add "
                      "room in the emptiest domain",
                      tsc.topology_key, fmt::join(shown, ", "), tsc.max_skew, needed),
          fmt::format("topologySpreadConstraints[{}].maxSkew: {}\n", i, needed), "", opens,
          needed - tsc.max_skew, {}));
  }
  std::stable_sort(found.begin(), found.end(), [](const Suggestion& x, const Suggestion& y) {
    if (x.opens_nodes != y.opens_nodes) return x.opens_nodes > y.opens_nodes;
    return x.cost < y.cost;
  });
  // The same node change verified on several nodes is one suggestion ("label node a ..."),
  // saying how many others it works on, so the list shows different kinds of change.
  std::vector<Suggestion> distinct;
  std::map<std::string, size_t> first_of_kind;
  std::map<std::string, int> more_of_kind;
  for (auto& sug : found) {
    bool per_node = sug.kind == "label" || sug.kind == "uncordon" || sug.kind == "volume-zone" ||
                    sug.kind == "pod-affinity";
    std::string group = sug.change.empty() ? sug.kind : sug.kind + "/" + sug.change;
    if (sug.kind == "resources" && sug.victims.empty()) {
      // The same amount to free on alike nodes, with no pods to name, is one change.
      std::string what = sug.description;
      if (auto at = what.find(" on node " + sug.node); at != std::string::npos)
        what.erase(at, 9 + sug.node.size());
      per_node = true;
      group += "/" + what;
    }
    if (per_node && first_of_kind.count(group)) {
      ++more_of_kind[group];
      continue;
    }
    first_of_kind[group] = distinct.size();
    distinct.push_back(std::move(sug));
  }
  for (const auto& [group, more] : more_of_kind)
    distinct[first_of_kind[group]].description +=
        group.starts_with("pod-affinity")
            ? fmt::format("; {} other change(s) like it checked work too", more)
            : fmt::format("; the same change on {} other node(s) checked works too", more);
  found = std::move(distinct);
  if (found.size() > options.max_suggestions) found.resize(options.max_suggestions);
  e.suggestions = std::move(found);
  return e;
}

nlohmann::json ToJson(const Explanation& e) {
  nlohmann::json j = {{"pod", e.pod}, {"result", e.result}, {"message", e.message}};
  if (!e.node.empty()) j["node"] = e.node;
  if (e.attempt) {
    nlohmann::json nodes = nlohmann::json::object();
    for (const auto& [node, st] : e.attempt->filter_statuses)
      nodes[node] = {{"rejectedBy", st.plugin()}, {"reason", st.Message()}};
    const SchedulingAttempt& a = *e.attempt;
    for (size_t i = 0; i < a.scored_nodes.size(); ++i) {
      nlohmann::json scores = nlohmann::json::object();
      for (size_t p = 0; p < a.score_plugins.size() && p < a.scores.plugin_scores.size(); ++p)
        if (p >= a.scores.plugin_ran.size() || a.scores.plugin_ran[p])
          scores[a.score_plugins[p]] = a.scores.plugin_scores[p][i] * a.score_weights[p];
      nodes[a.scored_nodes[i]] = {{"scores", scores}, {"total", a.scores.totals[i]}};
    }
    j["nodes"] = std::move(nodes);
    // Each node's "scores" are weighted; the weights let a reader recover the plugin's own.
    nlohmann::json weights = nlohmann::json::object();
    for (size_t p = 0; p < a.score_plugins.size() && p < a.score_weights.size(); ++p)
      weights[a.score_plugins[p]] = a.score_weights[p];
    j["scoreWeights"] = std::move(weights);
  }
  nlohmann::json s = nlohmann::json::array();
  for (const auto& x : e.suggestions) {
    nlohmann::json o = {
        {"kind", x.kind}, {"description", x.description}, {"opensNodes", x.opens_nodes}};
    if (!x.yaml.empty()) o["podChange"] = x.yaml;
    if (!x.node.empty()) o["node"] = x.node;
    if (!x.victims.empty()) o["victims"] = x.victims;
    if (!x.change.empty()) o["change"] = x.change;
    if (!x.domain.empty()) o["domain"] = x.domain;
    if (!x.running_pod.empty()) o["runningPod"] = x.running_pod;
    if (!x.new_pod.empty()) o["newPod"] = x.new_pod;
    s.push_back(std::move(o));
  }
  j["suggestions"] = std::move(s);
  return j;
}

std::string ToText(const Explanation& e) {
  std::string out = fmt::format("{}: {}{}\n", e.pod, e.result,
                                e.node.empty() ? "" : fmt::format(" -> {}", e.node));
  if (!e.message.empty() && e.result != "Scheduled") out += fmt::format("  {}\n", e.message);
  if (e.attempt) {
    // Per node on a small cluster; on a large one the best scored nodes and the rejections
    // grouped by plugin and reason, so the answer fits on a screen.
    const SchedulingAttempt& a = *e.attempt;
    const size_t total = a.filter_statuses.size() + a.scored_nodes.size();
    if (total <= kMaxTextRows) {
      std::map<std::string, std::string> rows;
      for (const auto& [node, st] : a.filter_statuses)
        rows[node] = fmt::format("rejected by {}: {}", st.plugin(), st.Message());
      for (size_t i = 0; i < a.scored_nodes.size(); ++i)
        rows[a.scored_nodes[i]] = fmt::format("fits, score {}{}", a.scores.totals[i], Scores(a, i));
      if (!rows.empty()) out += "\n";
      for (const auto& [node, text] : rows)
        out += fmt::format("  {} {:<20} {}\n", node == e.node ? "*" : " ", node, text);
    } else {
      std::vector<size_t> order(a.scored_nodes.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::stable_sort(order.begin(), order.end(),
                       [&](size_t x, size_t y) { return a.scores.totals[x] > a.scores.totals[y]; });
      if (!order.empty())
        out += fmt::format("\n  {} node(s) fit; the best scored:\n", order.size());
      for (size_t k = 0; k < order.size() && k < kBestShown; ++k) {
        const std::string& node = a.scored_nodes[order[k]];
        out += fmt::format("  {} {:<20} fits, score {}{}\n", node == e.node ? "*" : " ", node,
                           a.scores.totals[order[k]], Scores(a, order[k]));
      }
      struct Group {
        int count = 0;
        std::vector<std::string> examples;
      };
      std::map<std::pair<std::string, std::string>, Group> groups;
      std::vector<std::string> names;
      for (const auto& [node, st] : a.filter_statuses) names.push_back(node);
      std::sort(names.begin(), names.end());
      for (const auto& node : names) {
        const Status& st = a.filter_statuses.at(node);
        Group& g = groups[{st.plugin(), st.Message()}];
        ++g.count;
        if (g.examples.size() < 3) g.examples.push_back(node);
      }
      std::vector<std::pair<std::pair<std::string, std::string>, Group>> sorted(groups.begin(),
                                                                                groups.end());
      std::stable_sort(sorted.begin(), sorted.end(), [](const auto& x, const auto& y) {
        return x.second.count > y.second.count;
      });
      if (!sorted.empty())
        out += fmt::format("\n  {} node(s) rejected:\n", a.filter_statuses.size());
      for (const auto& [key, g] : sorted)
        out += fmt::format("    {:>6} by {}: {} (e.g. {})\n", g.count, key.first, key.second,
                           fmt::join(g.examples, ", "));
    }
  }
  if (!e.suggestions.empty()) {
    out += "\nSmallest changes that would place it (each checked by scheduling again):\n";
    for (size_t i = 0; i < e.suggestions.size(); ++i) {
      const Suggestion& s = e.suggestions[i];
      out += fmt::format("  {}. {} — fits {} node(s)\n", i + 1, s.description, s.opens_nodes);
      for (const std::string* yaml : {&s.yaml, &s.new_pod}) {
        for (size_t pos = 0; pos < yaml->size();) {
          size_t nl = yaml->find('\n', pos);
          out += "       " + yaml->substr(pos, nl - pos) + "\n";
          pos = nl == std::string::npos ? yaml->size() : nl + 1;
        }
      }
    }
  } else if (e.result == "Unschedulable") {
    out +=
        "\nNo single change among tolerations, uncordoning, node labels, volume zones, spread "
        "skew, pod affinity, anti-affinity or freeing resources places it.\n";
  }
  return out;
}

}  // namespace berth::explain
