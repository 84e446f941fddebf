#include "plugins/nodedeclaredfeatures/nodedeclaredfeatures.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/declared_features.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"

namespace berth {
namespace {

struct DeclaredFeaturesState final : StateData,
                                     std::enable_shared_from_this<DeclaredFeaturesState> {
  std::vector<std::string> required;  // sorted, never empty

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<DeclaredFeaturesState>(shared_from_this());
  }
};

inline constexpr StateKey<DeclaredFeaturesState> kPreFilterKey{"PreFilterNodeDeclaredFeatures"};

// A node added, or its declared features changed (an update carries kUpdateOther for that).
Result<QueueingHint> AfterNodeChange(const Pod&, const EventObject& old_object,
                                     const EventObject& new_object) {
  const Node* node = ObjectAs<Node>(new_object);
  if (!node) return Error{"node event without the node"};
  const Node* old_node = ObjectAs<Node>(old_object);
  if (old_node && declared_features::SameDeclaredFeatures(*old_node, *node))
    return QueueingHint::kQueueSkip;
  return QueueingHint::kQueue;
}

// The pending pod's own update matters only when it changes the features it needs.
Result<QueueingHint> AfterPodUpdate(const Pod& pod, const EventObject& old_object,
                                    const EventObject& new_object) {
  const Pod* old_pod = ObjectAs<Pod>(old_object);
  const Pod* new_pod = ObjectAs<Pod>(new_object);
  if (!old_pod || !new_pod) return Error{"pod update without the pods"};
  if (new_pod->metadata.uid != pod.metadata.uid) return QueueingHint::kQueueSkip;
  return declared_features::InferForScheduling(*old_pod) ==
                 declared_features::InferForScheduling(*new_pod)
             ? QueueingHint::kQueueSkip
             : QueueingHint::kQueue;
}

class NodeDeclaredFeatures final : public PreFilterPlugin,
                                   public FilterPlugin,
                                   public EnqueueExtensions {
 public:
  explicit NodeDeclaredFeatures(bool enabled) : enabled_(enabled) {}

  std::string_view Name() const override { return kNodeDeclaredFeaturesName; }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    if (!enabled_) return Status::Skip();
    auto s = std::make_shared<DeclaredFeaturesState>();
    s->required = declared_features::InferForScheduling(*pod);
    if (s->required.empty()) return Status::Skip();
    state.Write(kPreFilterKey, std::move(s));
    return Status::Success();
  }

  Status Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const override {
    if (!enabled_) return Status::Success();
    const DeclaredFeaturesState* s = state.Read(kPreFilterKey);
    if (s == nullptr) {
      return Status::Error(
          "error reading \"PreFilterNodeDeclaredFeatures\" from cycle-state: not found");
    }
    if (node.node() == nullptr) return Status::Error("node not found");
    if (!declared_features::NodeDeclaresAll(*node.node(), s->required)) return unsatisfied_;
    return Status::Success();
  }

  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    if (!enabled_) return {};
    return {{{EventResource::kNode, kAdd | kUpdateOther}, &AfterNodeChange},
            {{EventResource::kPod, kUpdate}, &AfterPodUpdate}};
  }

 private:
  const bool enabled_;
  // Built once, copied per node that lacks a feature.
  const Status unsatisfied_ = Status::Unresolvable(std::string(kNodeDeclaredFeaturesReason))
                                  .WithPlugin(kNodeDeclaredFeaturesName);
};

}  // namespace

PluginRegistration NodeDeclaredFeaturesRegistration(const config::FeatureGates& gates) {
  const bool enabled = gates.Enabled(config::features::kNodeDeclaredFeatures);
  return MakeRegistration(
      kNodeDeclaredFeaturesName,
      [enabled](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
        return std::unique_ptr<Plugin>(std::make_unique<NodeDeclaredFeatures>(enabled));
      });
}

}  // namespace berth
