#include "plugins/schedulinggates/schedulinggates.h"

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cluster_event.h"
#include "berth/framework/plugin.h"

namespace berth {
namespace {

class SchedulingGates final : public PreEnqueuePlugin, public EnqueueExtensions {
 public:
  std::string_view Name() const override { return kSchedulingGatesName; }

  Status PreEnqueue(const Pod& pod) const override {
    const auto& gates = pod.spec.scheduling_gates;
    if (gates.empty()) return Status::Success();
    // Same text as kube-scheduler, which prints the gate names as a Go list: "[a b]".
    std::string message = "waiting for scheduling gates: [";
    for (size_t i = 0; i < gates.size(); ++i) {
      if (i > 0) message += ' ';
      message += gates[i];
    }
    message += ']';
    return Status::Unresolvable(std::move(message));
  }

  // Only the pod's own gates going away helps (the queue re-runs PreEnqueue on its update).
  std::vector<ClusterEventWithHint> EventsToRegister() const override {
    return {{{EventResource::kPod, kUpdatePodSchedulingGatesEliminated},
             [](const Pod& pod, const EventObject&,
                const EventObject& new_object) -> Result<QueueingHint> {
               const Pod* updated = ObjectAs<Pod>(new_object);
               return updated && updated->metadata.uid == pod.metadata.uid
                          ? QueueingHint::kQueue
                          : QueueingHint::kQueueSkip;
             }}};
  }
};

Result<std::unique_ptr<Plugin>> NewSchedulingGates(const PluginArgs*, Handle&) {
  return std::unique_ptr<Plugin>(std::make_unique<SchedulingGates>());
}

}  // namespace

PluginRegistration SchedulingGatesRegistration() {
  return MakeRegistration(kSchedulingGatesName, &NewSchedulingGates);
}

}  // namespace berth
