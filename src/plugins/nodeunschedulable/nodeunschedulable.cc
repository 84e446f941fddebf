#include "plugins/nodeunschedulable/nodeunschedulable.h"

#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/api/selectors.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/plugin.h"
#include "berth/framework/remedy.h"

namespace berth {
namespace {

bool ToleratesUnschedulable(const Pod& pod) {
  static const Taint kUnschedulableTaint{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
  for (const Toleration& t : pod.spec.tolerations) {
    if (TolerationToleratesTaint(t, kUnschedulableTaint)) return true;
  }
  return false;
}

class NodeUnschedulable final : public FilterPlugin,
                                public EnqueueExtensions,
                                public FilterRemedies {
 public:
  std::string_view Name() const override { return kNodeUnschedulableName; }

  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::Error("node not found");
    if (node.node()->spec.unschedulable && !ToleratesUnschedulable(*pod)) {
      return unschedulable_;
    }
    return Status::Success();
  }

  // The node uncordoned.
  std::vector<FilterRemedy> Remedies(const Pod&, const Node& node, const Status&) const override {
    if (!node.spec.unschedulable) return {};
    auto uncordoned = std::make_shared<Node>(node);
    uncordoned->spec.unschedulable = false;
    uncordoned->raw.reset();
    FilterRemedy r;
    r.kind = "uncordon";
    r.description = fmt::format("uncordon node {} (kubectl uncordon {})", node.metadata.name,
                                node.metadata.name);
    r.node = std::move(uncordoned);
    return {std::move(r)};
  }

  // Helps when a node that takes the pod appears, or a node is uncordoned.
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kNode, kAdd | kUpdateNodeTaint},
             [](const Pod& pod, const EventObject& old_object,
                const EventObject& new_object) -> Result<QueueingHint> {
               const Node* node = ObjectAs<Node>(new_object);
               if (!node) return Error{"node event without the node"};
               const Node* old_node = ObjectAs<Node>(old_object);
               if (!old_node) {
                 return !node->spec.unschedulable || ToleratesUnschedulable(pod)
                            ? QueueingHint::kQueue
                            : QueueingHint::kQueueSkip;
               }
               return old_node->spec.unschedulable && !node->spec.unschedulable
                          ? QueueingHint::kQueue
                          : QueueingHint::kQueueSkip;
             }}};
  }

 private:
  // Built once, copied per cordoned node.
  const Status unschedulable_ =
      Status::Unresolvable("node(s) were unschedulable").WithPlugin(kNodeUnschedulableName);
};

Result<std::unique_ptr<Plugin>> NewNodeUnschedulable(const PluginArgs*, Handle&) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeUnschedulable>());
}

}  // namespace

PluginRegistration NodeUnschedulableRegistration() {
  return MakeRegistration(kNodeUnschedulableName, &NewNodeUnschedulable);
}

}  // namespace berth
