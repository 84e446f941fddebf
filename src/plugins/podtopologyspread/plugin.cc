#include <memory>
#include <string>
#include <utility>

#include "config/plugin_args_codec.h"
#include "plugins/podtopologyspread/podtopologyspread.h"

namespace berth {
namespace podtopologyspread {

std::vector<TopologySpreadConstraint> SystemDefaultConstraints() {
  std::vector<TopologySpreadConstraint> out(2);
  out[0].max_skew = 3;
  out[0].topology_key = std::string(kLabelHostname);
  out[0].when_unsatisfiable = std::string(kScheduleAnyway);
  out[1].max_skew = 5;
  out[1].topology_key = std::string(kLabelTopologyZone);
  out[1].when_unsatisfiable = std::string(kScheduleAnyway);
  return out;
}

PodTopologySpread::PodTopologySpread(const config::PodTopologySpreadArgs& args, Handle& handle)
    : default_constraints_(args.default_constraints), handle_(handle) {
  if (args.defaulting_type == "System") {
    default_constraints_ = SystemDefaultConstraints();
    system_defaulted_ = true;
  }
}

Result<std::vector<SpreadConstraint>> PodTopologySpread::Constraints(const Pod& pod,
                                                                     std::string_view action) {
  if (!pod.spec.topology_spread_constraints.empty()) return ConstraintsFromPod(pod, action);
  bool any = false;
  for (const auto& c : default_constraints_) any |= c.when_unsatisfiable == action;
  // Deriving the selector lists Services and controllers; skip it when nothing would use it.
  if (!any) return std::vector<SpreadConstraint>{};
  std::optional<LabelSelector> selector = DefaultSelector(pod, handle_.client());
  if (!selector) return std::vector<SpreadConstraint>{};
  return ConstraintsFromDefaults(default_constraints_, action, *selector, pod.metadata.namespace_);
}

const Snapshot* PodTopologySpread::IncrementalSnapshot(std::span<NodeInfo* const> nodes) const {
  const Snapshot& snapshot = handle_.snapshot();
  const auto& list = snapshot.nodes();
  if (snapshot.generation <= 0 || list.data() != nodes.data() || list.size() != nodes.size()) {
    return nullptr;
  }
  return &snapshot;
}

std::shared_ptr<const NodeTable> PodTopologySpread::RefreshTable(std::span<NodeInfo* const> nodes) {
  const Snapshot* snapshot = IncrementalSnapshot(nodes);
  if (snapshot == nullptr || snapshot->last_changed_from < 0)
    return cache_.Refresh(nodes, snapshot);
  // The cache reports which NodeInfos its last update touched: only those need a look.
  SpreadCache::Delta delta{snapshot->last_changed_from, snapshot->last_changed};
  return cache_.Refresh(nodes, snapshot, &delta);
}

}  // namespace podtopologyspread

PluginRegistration PodTopologySpreadRegistration() {
  PluginRegistration reg;
  reg.name = std::string(podtopologyspread::kName);
  reg.factory = [](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    static const config::PodTopologySpreadArgs kDefaults;
    const auto* typed =
        args ? dynamic_cast<const config::PodTopologySpreadArgs*>(args) : &kDefaults;
    if (!typed) {
      return Error{"want args to be of type PodTopologySpreadArgs, got " +
                   std::string(args->Kind())};
    }
    if (auto valid = config::ValidatePodTopologySpreadArgs(*typed, "args"); !valid.ok()) {
      return valid.error();
    }
    std::unique_ptr<Plugin> plugin =
        std::make_unique<podtopologyspread::PodTopologySpread>(*typed, handle);
    return plugin;
  };
  reg.decode_args = config::InTreeArgsDecoder(reg.name);
  return reg;
}

}  // namespace berth
