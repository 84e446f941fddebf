#include "plugins/nodename/nodename.h"

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"

namespace berth {
namespace {

class NodeName final : public FilterPlugin, public EnqueueExtensions, public PodSigner {
 public:
  std::string_view Name() const override { return kNodeNameName; }

  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return a.spec.node_name == b.spec.node_name;
  }

  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    const std::string& wanted = pod->spec.node_name;
    if (wanted.empty() || wanted == node.name()) return Status::Success();
    return not_match_;
  }

  // Only the node the pod names can take it.
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kNode, kAdd},
             [](const Pod& pod, const EventObject&,
                const EventObject& new_object) -> Result<QueueingHint> {
               const Node* node = ObjectAs<Node>(new_object);
               if (!node) return Error{"node event without the node"};
               return pod.spec.node_name.empty() || pod.spec.node_name == node->metadata.name
                          ? QueueingHint::kQueue
                          : QueueingHint::kQueueSkip;
             }}};
  }

 private:
  // Every node but one rejects a pod that names its node: built once, copied per node.
  const Status not_match_ = Status::Unresolvable("node(s) didn't match the requested node name")
                                .WithPlugin(kNodeNameName);
};

Result<std::unique_ptr<Plugin>> NewNodeName(const PluginArgs*, Handle&) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeName>());
}

}  // namespace

PluginRegistration NodeNameRegistration() { return MakeRegistration(kNodeNameName, &NewNodeName); }

}  // namespace berth
