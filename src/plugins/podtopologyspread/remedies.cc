// What would place a pod PodTopologySpread rejected (berth explain, FilterRemedySearch): for
// each of the pod's DoNotSchedule constraints, the maxSkew it would need for the pod to join
// the least crowded domain a rejected node is in.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "api/codec.h"
#include "berth/api/selectors.h"
#include "plugins/podtopologyspread/podtopologyspread.h"

namespace berth::podtopologyspread {
namespace {

// Matching pods per topology domain for one spread constraint, over nodes carrying the key.
std::map<std::string, int> DomainCounts(const TopologySpreadConstraint& tsc, const Pod& pod,
                                        const ClusterListers& cluster) {
  std::map<std::string, int> counts;
  std::map<std::string, std::string> domain_of;
  for (const Ptr<Node>& n : cluster.ListNodes())
    if (auto it = n->metadata.labels.find(tsc.topology_key); it != n->metadata.labels.end()) {
      counts.emplace(it->second, 0);
      domain_of[n->metadata.name] = it->second;
    }
  CompiledSelector sel = CompiledSelector::FromOptional(tsc.label_selector);
  for (const auto& key : tsc.match_label_keys)
    if (auto it = pod.metadata.labels.find(key); it != pod.metadata.labels.end())
      sel.AddIn(key, it->second);
  for (const Ptr<Pod>& p : cluster.ListPods())
    if (p->metadata.namespace_ == pod.metadata.namespace_ && !p->spec.node_name.empty())
      if (auto d = domain_of.find(p->spec.node_name);
          d != domain_of.end() && sel.Matches(p->metadata.labels))
        ++counts[d->second];
  return counts;
}

}  // namespace

RemedyProposal PodTopologySpread::ProposeRemedies(const Pod& pod,
                                                  std::span<const RejectedNode> rejected,
                                                  size_t) const {
  RemedyProposal proposal;
  if (rejected.empty()) return proposal;
  for (size_t i = 0; i < pod.spec.topology_spread_constraints.size(); ++i) {
    const TopologySpreadConstraint& tsc = pod.spec.topology_spread_constraints[i];
    if (tsc.when_unsatisfiable != "DoNotSchedule") continue;
    auto counts = DomainCounts(tsc, pod, handle_.listers());
    if (counts.empty()) continue;
    int lowest = counts.begin()->second, highest = lowest;
    for (const auto& [d, n] : counts) {
      lowest = std::min(lowest, n);
      highest = std::max(highest, n);
    }
    // The pod joining the emptiest domain that some node passes the other filters for would
    // have skew (count + 1 - lowest); the smallest such skew is the maxSkew needed.
    int needed = highest + 1 - lowest;
    for (const RejectedNode& r : rejected) {
      const Labels& labels = r.node->metadata.labels;
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
    ClusterRemedy remedy;
    remedy.kind = "spread-skew";
    remedy.description = fmt::format(
        "matching pods per {} are {} (maxSkew {}): raise maxSkew to {} or add room in the "
        "emptiest domain",
        tsc.topology_key, fmt::join(shown, ", "), tsc.max_skew, needed);
    remedy.pod_change = fmt::format("topologySpreadConstraints[{}].maxSkew: {}\n", i, needed);
    remedy.cost = needed - tsc.max_skew;
    remedy.pod = std::move(changed);
    proposal.remedies.push_back(std::move(remedy));
  }
  return proposal;
}

}  // namespace berth::podtopologyspread
