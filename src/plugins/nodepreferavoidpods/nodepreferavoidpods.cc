#include "plugins/nodepreferavoidpods/nodepreferavoidpods.h"

#include <nlohmann/json.hpp>

#include "berth/framework/plugin.h"

namespace berth {
namespace {

constexpr std::string_view kAnnotation = "scheduler.alpha.kubernetes.io/preferAvoidPods";

class NodePreferAvoidPods final : public ScorePlugin {
 public:
  std::string_view Name() const override { return kNodePreferAvoidPodsName; }

  Status Score(const CycleState&, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override {
    *score = kMaxNodeScore;
    const OwnerReference* controller = nullptr;
    for (const auto& ref : pod->metadata.owner_references)
      if (ref.controller) controller = &ref;
    if (!controller ||
        (controller->kind != "ReplicationController" && controller->kind != "ReplicaSet"))
      return Status::Success();
    auto it = node.node()->metadata.annotations.find(kAnnotation);
    if (it == node.node()->metadata.annotations.end()) return Status::Success();
    const nlohmann::json avoids = nlohmann::json::parse(it->second, nullptr, false);
    if (!avoids.is_object() || !avoids.contains("preferAvoidPods") ||
        !avoids["preferAvoidPods"].is_array())
      return Status::Success();
    for (const auto& avoid : avoids["preferAvoidPods"]) {
      const nlohmann::json* c = nullptr;
      if (avoid.is_object() && avoid.contains("podSignature") &&
          avoid["podSignature"].is_object() && avoid["podSignature"].contains("podController"))
        c = &avoid["podSignature"]["podController"];
      if (c && c->is_object() && c->value("kind", "") == controller->kind &&
          c->value("uid", "") == controller->uid) {
        *score = 0;
        break;
      }
    }
    return Status::Success();
  }
};

}  // namespace

PluginRegistration NodePreferAvoidPodsRegistration() {
  return MakeRegistration(kNodePreferAvoidPodsName, FactoryOf<NodePreferAvoidPods>());
}

}  // namespace berth
