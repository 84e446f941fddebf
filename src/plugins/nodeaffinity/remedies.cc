#include "plugins/nodeaffinity/remedies.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/codec.h"
#include "framework/label_changes.h"

namespace berth::nodeaffinity {
namespace {

// The changes after which `labels` (already changed by `changes`) match one of the terms of
// `required`; false when no term can be met through labels (terms on the node's name).
bool AddTermChanges(const NodeSelector& required, const Labels& have, LabelChanges& changes) {
  Labels after = have;
  Apply(changes, after);
  auto term = NodeTermChanges(required, after);
  if (!term) return false;
  for (const auto& [k, v] : *term) changes[k] = v;
  return true;
}

}  // namespace

RemedyProposal ProposeNodeLabels(const Pod& pod, const NodeSelector* added_required,
                                 std::span<const RejectedNode> rejected) {
  const auto& a = pod.spec.affinity;
  const NodeSelector* required =
      a && a->node_affinity && a->node_affinity->required ? &*a->node_affinity->required : nullptr;
  RemedyProposal proposal;
  if (pod.spec.node_selector.empty() && !required && !added_required) return proposal;
  for (const RejectedNode& r : rejected) {
    const Node& n = *r.node;
    LabelChanges changes;
    for (const auto& [k, v] : pod.spec.node_selector)
      if (auto it = n.metadata.labels.find(k); it == n.metadata.labels.end() || it->second != v)
        changes[k] = v;
    if (required && !AddTermChanges(*required, n.metadata.labels, changes)) continue;
    if (added_required && !AddTermChanges(*added_required, n.metadata.labels, changes)) continue;
    if (changes.empty() || std::any_of(changes.begin(), changes.end(),
                                       [](const auto& ch) { return IsMachineLabel(ch.first); }))
      continue;
    auto labelled = std::make_shared<Node>(n);
    Apply(changes, labelled->metadata.labels);
    labelled->raw = DocumentOnlyFields(labelled->raw);
    bool overwrite = false;
    for (const auto& [k, v] : changes) overwrite |= v && n.metadata.labels.count(k);
    ClusterRemedy remedy;
    remedy.kind = "label";
    remedy.description = fmt::format("label node {} with {} (kubectl label node {} {}{})",
                                     n.metadata.name, DescribeLabels(changes), n.metadata.name,
                                     KubectlLabels(changes), overwrite ? " --overwrite" : "");
    remedy.node = n.metadata.name;
    remedy.cost = static_cast<int64_t>(changes.size());
    remedy.merge_key = "label " + KubectlLabels(changes);
    remedy.nodes.push_back(std::move(labelled));
    proposal.remedies.push_back(std::move(remedy));
  }
  return proposal;
}

}  // namespace berth::nodeaffinity
