#include "plugins/nodedeclaredfeatures/nodedeclaredfeatures.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/declared_features.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"

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

// What a pod needs from its node under the plugin's features and scheduler version.
struct Inference {
  std::span<const declared_features::Feature> features;
  KubeVersion scheduler_version;

  std::vector<std::string> Required(const Pod& pod) const {
    return declared_features::InferForScheduling(pod, features, scheduler_version);
  }
};

// The pending pod's own update matters only when it changes the features it needs.
QueueingHintFn AfterPodUpdate(Inference inference) {
  return [inference = std::move(inference)](const Pod& pod, const EventObject& old_object,
                                            const EventObject& new_object) -> Result<QueueingHint> {
    const Pod* old_pod = ObjectAs<Pod>(old_object);
    const Pod* new_pod = ObjectAs<Pod>(new_object);
    if (!old_pod || !new_pod) return Error{"pod update without the pods"};
    if (new_pod->metadata.uid != pod.metadata.uid) return QueueingHint::kQueueSkip;
    return inference.Required(*old_pod) == inference.Required(*new_pod) ? QueueingHint::kQueueSkip
                                                                        : QueueingHint::kQueue;
  };
}

class NodeDeclaredFeatures final : public PreFilterPlugin,
                                   public FilterPlugin,
                                   public EnqueueExtensions,
                                   public PodSigner {
 public:
  NodeDeclaredFeatures(bool enabled, Inference inference)
      : enabled_(enabled), inference_(std::move(inference)) {}

  std::string_view Name() const override { return kNodeDeclaredFeaturesName; }

  // Filter reads the features the pod needs.
  bool Signable(const Pod&) const override { return true; }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return !enabled_ || inference_.Required(a) == inference_.Required(b);
  }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    if (!enabled_) return Status::Skip();
    auto s = std::make_shared<DeclaredFeaturesState>();
    s->required = inference_.Required(*pod);
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
            {{EventResource::kPod, kUpdate}, AfterPodUpdate(inference_)}};
  }

 private:
  const bool enabled_;
  const Inference inference_;
  // Built once, copied per node that lacks a feature.
  const Status unsatisfied_ = Status::Unresolvable(std::string(kNodeDeclaredFeaturesReason))
                                  .WithPlugin(kNodeDeclaredFeaturesName);
};

}  // namespace

PluginRegistration NodeDeclaredFeaturesRegistration(const config::FeatureGates& gates,
                                                    NodeDeclaredFeaturesOptions options) {
  const bool enabled = gates.Enabled(config::features::kNodeDeclaredFeatures);
  return MakeRegistration(
      kNodeDeclaredFeaturesName,
      [enabled, options](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
        std::optional<KubeVersion> version = ParseKubeVersion(options.scheduler_version);
        if (!version) {
          return Error{"failed to parse version: could not parse \"" +
                       std::string(options.scheduler_version) + "\" as version"};
        }
        return std::unique_ptr<Plugin>(std::make_unique<NodeDeclaredFeatures>(
            enabled, Inference{options.features, *std::move(version)}));
      });
}

}  // namespace berth
