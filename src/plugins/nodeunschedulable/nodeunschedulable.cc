#include "plugins/nodeunschedulable/nodeunschedulable.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "api/tolerations.h"
#include "berth/api/selectors.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "berth/framework/remedy.h"
#include "framework/pod_signature.h"

namespace berth {
namespace {

// `comparison_operators`: the TaintTolerationComparisonOperators gate, passed as upstream does
// although the taint has no value for Lt or Gt to compare (so they never match it).
bool ToleratesUnschedulable(const Pod& pod, bool comparison_operators) {
  static const Taint kUnschedulableTaint{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
  for (const Toleration& t : pod.spec.tolerations) {
    if (TolerationToleratesTaint(t, kUnschedulableTaint, comparison_operators)) return true;
  }
  return false;
}

class NodeUnschedulable final : public FilterPlugin,
                                public EnqueueExtensions,
                                public FilterRemedySearch,
                                public PodSigner {
 public:
  explicit NodeUnschedulable(bool comparison_operators)
      : comparison_operators_(comparison_operators) {}

  std::string_view Name() const override { return kNodeUnschedulableName; }

  // Reads the pod's tolerations only.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return signature::SameTolerations(a, b);
  }

  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::Error("node not found");
    if (node.node()->spec.unschedulable && !ToleratesUnschedulable(*pod, comparison_operators_)) {
      return unschedulable_;
    }
    return Status::Success();
  }

  // Each rejected node cordoned, uncordoned.
  RemedyProposal ProposeRemedies(const Pod&, std::span<const RejectedNode> rejected,
                                 size_t) const override {
    RemedyProposal proposal;
    for (const RejectedNode& r : rejected) {
      const Node& node = *r.node;
      if (!node.spec.unschedulable) continue;
      auto uncordoned = std::make_shared<Node>(node);
      uncordoned->spec.unschedulable = false;
      uncordoned->raw.reset();
      ClusterRemedy remedy;
      remedy.kind = "uncordon";
      remedy.description = fmt::format("uncordon node {} (kubectl uncordon {})", node.metadata.name,
                                       node.metadata.name);
      remedy.node = node.metadata.name;
      remedy.merge_key = "uncordon";
      remedy.nodes.push_back(std::move(uncordoned));
      proposal.remedies.push_back(std::move(remedy));
    }
    return proposal;
  }

  // Helps when a node that takes the pod appears, or a node is uncordoned.
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    const bool ops = comparison_operators_;
    return {{{EventResource::kNode, kAdd | kUpdateNodeTaint},
             [ops](const Pod& pod, const EventObject& old_object,
                   const EventObject& new_object) -> Result<QueueingHint> {
               const Node* node = ObjectAs<Node>(new_object);
               if (!node) return Error{"node event without the node"};
               const Node* old_node = ObjectAs<Node>(old_object);
               if (!old_node) {
                 return !node->spec.unschedulable || ToleratesUnschedulable(pod, ops)
                            ? QueueingHint::kQueue
                            : QueueingHint::kQueueSkip;
               }
               return old_node->spec.unschedulable && !node->spec.unschedulable
                          ? QueueingHint::kQueue
                          : QueueingHint::kQueueSkip;
             }}};
  }

 private:
  const bool comparison_operators_;  // the TaintTolerationComparisonOperators gate
  // Built once, copied per cordoned node.
  const Status unschedulable_ =
      Status::Unresolvable("node(s) were unschedulable").WithPlugin(kNodeUnschedulableName);
};

}  // namespace

PluginRegistration NodeUnschedulableRegistration() {
  return NodeUnschedulableRegistration(config::FeatureGates());
}

PluginRegistration NodeUnschedulableRegistration(const config::FeatureGates& gates) {
  const bool ops = gates.Enabled(kTaintTolerationComparisonOperatorsGate);
  return MakeRegistration(
      kNodeUnschedulableName, [ops](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
        return std::unique_ptr<Plugin>(std::make_unique<NodeUnschedulable>(ops));
      });
}

}  // namespace berth
