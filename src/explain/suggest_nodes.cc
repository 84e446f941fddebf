// Suggestions that change one node's labels, or the pod's spread: node labels for the pod's
// nodeSelector and required node affinity, the volume's zone, a topology spread constraint's
// maxSkew.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/codec.h"
#include "config/plugin_names.h"
#include "explain/labels.h"
#include "explain/suggest.h"

namespace berth::explain {

namespace names = config::names;

Search::Search(const Cluster& cluster, const SchedulingAttempt& attempt, const ExplainOptions& opts,
               Verifier& v)
    : c(cluster), a(attempt), options(opts), verifier(v) {
  for (const auto& n : c.nodes) by_name[n->metadata.name] = n;
}

std::vector<std::string> Search::RejectedBy(std::string_view plugin) const {
  std::vector<std::string> out;
  for (const auto& [node, st] : a.filter_statuses)
    if (st.plugin() == plugin && by_name.count(node)) out.push_back(node);
  std::sort(out.begin(), out.end());
  return out;
}

bool Search::TryMore(const std::string& kind) {
  return tried_[kind]++ < options.max_candidates_per_kind;
}

Suggestion MakeSuggestion(std::string kind, std::string description, std::string yaml,
                          std::string node, int64_t cost) {
  Suggestion s;
  s.kind = std::move(kind);
  s.description = std::move(description);
  s.yaml = std::move(yaml);
  s.node = std::move(node);
  s.cost = cost;
  return s;
}

namespace {

// The labels the pod's nodeSelector and required node affinity ask of a node (of the
// affinity's terms, the one needing the fewest changes). Never a label that describes the
// machine: a pod that names its node by hostname wants that node, not another relabelled.
void SuggestNodeLabels(Search& s) {
  const Pod& pod = *s.c.pod;
  const NodeSelector* required = pod.spec.affinity && pod.spec.affinity->node_affinity &&
                                         pod.spec.affinity->node_affinity->required
                                     ? &*pod.spec.affinity->node_affinity->required
                                     : nullptr;
  if (pod.spec.node_selector.empty() && !required) return;
  for (const std::string& node : s.RejectedBy(names::kNodeAffinity)) {
    const NodePtr& n = s.by_name[node];
    LabelChanges changes;
    for (const auto& [k, v] : pod.spec.node_selector)
      if (auto it = n->metadata.labels.find(k); it == n->metadata.labels.end() || it->second != v)
        changes[k] = v;
    if (required) {
      Labels after = n->metadata.labels;
      Apply(changes, after);
      auto term = NodeTermChanges(*required, after);
      if (!term) continue;
      for (const auto& [k, v] : *term) changes[k] = v;
    }
    if (changes.empty() || std::any_of(changes.begin(), changes.end(),
                                       [](const auto& ch) { return IsMachineLabel(ch.first); }))
      continue;
    if (!s.TryMore("label")) break;
    auto labelled = std::make_shared<Node>(*n);
    Apply(changes, labelled->metadata.labels);
    labelled->raw = DocumentOnlyFields(labelled->raw);
    bool overwrite = false;
    for (const auto& [k, v] : changes) overwrite |= v && n->metadata.labels.count(k);
    s.verifier.Check(
        MakeSuggestion("label",
                       fmt::format("label node {} with {} (kubectl label node {} {}{})", node,
                                   DescribeLabels(changes), node, KubectlLabels(changes),
                                   overwrite ? " --overwrite" : ""),
                       "", node, static_cast<int64_t>(changes.size())),
        s.c.WithNode(labelled));
  }
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

void SuggestVolumeZone(Search& s) {
  const std::map<std::string, std::string> zones = VolumeZones(*s.c.pod, s.c.others);
  if (zones.empty()) return;
  for (const std::string& node : s.RejectedBy(names::kVolumeZone)) {
    auto moved = std::make_shared<Node>(*s.by_name[node]);
    std::vector<std::string> labels;
    for (const auto& [k, v] : zones) {
      auto it = moved->metadata.labels.find(k);
      if (it != moved->metadata.labels.end() && it->second == v) continue;
      moved->metadata.labels[k] = v;
      labels.push_back(fmt::format("{}={}", k, v));
    }
    if (labels.empty()) continue;
    if (!s.TryMore("volume-zone")) break;
    moved->raw = DocumentOnlyFields(moved->raw);
    s.verifier.Check(
        MakeSuggestion("volume-zone",
                       fmt::format("the pod's volume is in {}: a node there would take it "
                                   "(node {} is not; its zone labels would have to be {})",
                                   fmt::join(labels, ","), node, fmt::join(labels, ",")),
                       "", node, static_cast<int64_t>(labels.size())),
        s.c.WithNode(moved));
  }
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

}  // namespace

void SuggestNodeChanges(Search& s) {
  SuggestNodeLabels(s);
  SuggestVolumeZone(s);
}

void SuggestSpreadSkew(Search& s) {
  if (s.RejectedBy(names::kPodTopologySpread).empty()) return;
  const Pod& pod = *s.c.pod;
  for (size_t i = 0; i < pod.spec.topology_spread_constraints.size(); ++i) {
    const TopologySpreadConstraint& tsc = pod.spec.topology_spread_constraints[i];
    if (tsc.when_unsatisfiable != "DoNotSchedule") continue;
    auto counts = DomainCounts(tsc, pod, s.c.nodes, s.c.others);
    if (counts.empty()) continue;
    int lowest = counts.begin()->second, highest = lowest;
    for (const auto& [d, n] : counts) {
      lowest = std::min(lowest, n);
      highest = std::max(highest, n);
    }
    // The pod joining the emptiest domain that some node passes the other filters for would
    // have skew (count + 1 - lowest); the smallest such skew is the maxSkew needed.
    int needed = highest + 1 - lowest;
    for (const std::string& node : s.RejectedBy(names::kPodTopologySpread)) {
      const Labels& labels = s.by_name[node]->metadata.labels;
      if (auto it = labels.find(tsc.topology_key); it != labels.end())
        needed = std::min(needed, counts[it->second] + 1 - lowest);
    }
    if (needed <= tsc.max_skew) continue;
    auto changed = std::make_shared<Pod>(pod);
    changed->spec.topology_spread_constraints[i].max_skew = needed;
    changed->raw = DocumentOnlyFields(changed->raw);
    std::vector<std::string> shown;
    for (const auto& [d, n] : counts) shown.push_back(fmt::format("{}={}", d, n));
    if (shown.size() > 6) {
      shown.resize(6);
      shown.push_back("...");
    }
    s.verifier.Check(
        MakeSuggestion("spread-skew",
                       fmt::format("matching pods per {} are {} (maxSkew {}): raise maxSkew to "
                                   "{} or add room in the emptiest domain",
                                   tsc.topology_key, fmt::join(shown, ", "), tsc.max_skew, needed),
                       fmt::format("topologySpreadConstraints[{}].maxSkew: {}\n", i, needed), "",
                       needed - tsc.max_skew),
        s.c.WithPod(changed));
  }
}

}  // namespace berth::explain
