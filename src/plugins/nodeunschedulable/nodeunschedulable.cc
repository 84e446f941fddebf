#include "plugins/nodeunschedulable/nodeunschedulable.h"

#include <memory>
#include <string>

#include "berth/api/selectors.h"
#include "berth/framework/plugin.h"

namespace berth {
namespace {

bool ToleratesUnschedulable(const Pod& pod) {
  static const Taint kUnschedulableTaint{"node.kubernetes.io/unschedulable", "", "NoSchedule"};
  for (const Toleration& t : pod.spec.tolerations) {
    if (TolerationToleratesTaint(t, kUnschedulableTaint)) return true;
  }
  return false;
}

class NodeUnschedulable final : public FilterPlugin {
 public:
  std::string_view Name() const override { return kNodeUnschedulableName; }

  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    if (node.node() == nullptr) return Status::Error("node not found");
    if (node.node()->spec.unschedulable && !ToleratesUnschedulable(*pod)) {
      return Status::Unresolvable("node(s) were unschedulable");
    }
    return Status::Success();
  }
};

Result<std::unique_ptr<Plugin>> NewNodeUnschedulable(const PluginArgs*, Handle&) {
  return std::unique_ptr<Plugin>(std::make_unique<NodeUnschedulable>());
}

}  // namespace

PluginRegistration NodeUnschedulableRegistration() {
  PluginRegistration reg;
  reg.name = std::string(kNodeUnschedulableName);
  reg.factory = &NewNodeUnschedulable;
  return reg;
}

}  // namespace berth
