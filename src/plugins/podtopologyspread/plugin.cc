#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/tolerations.h"
#include "berth/api/selectors.h"
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

PodTopologySpread::PodTopologySpread(const config::PodTopologySpreadArgs& args, Handle& handle,
                                     bool comparison_operators)
    : default_constraints_(args.default_constraints),
      handle_(handle),
      cache_(comparison_operators),
      comparison_operators_(comparison_operators) {
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
  std::optional<LabelSelector> selector = DefaultSelector(pod, handle_.listers());
  if (!selector) return std::vector<SpreadConstraint>{};
  return ConstraintsFromDefaults(default_constraints_, action, *selector, pod.metadata.namespace_);
}

namespace {

// The topology keys the pod's spreading uses (its own constraints, else the defaults).
std::vector<std::string> TopologyKeys(const Pod& pod,
                                      const std::vector<TopologySpreadConstraint>& defaults) {
  const auto& own = pod.spec.topology_spread_constraints;
  std::vector<std::string> keys;
  for (const auto& c : own.empty() ? defaults : own) keys.push_back(c.topology_key);
  return keys;
}

bool HasAllKeys(const Node& node, const std::vector<std::string>& keys) {
  for (const auto& k : keys) {
    if (!node.metadata.labels.count(k)) return false;
  }
  return true;
}

// True if a pod with `labels` may count for one of the pod's constraints. matchLabelKeys only
// narrow a selector, so leaving them out errs towards requeueing. Default constraints derive
// their selector from Services and controllers, which a hint must not look up: any pod counts.
bool MayCount(const Pod& pod, const Labels& labels) {
  const auto& own = pod.spec.topology_spread_constraints;
  if (own.empty()) return true;
  for (const auto& c : own) {
    if (CompiledSelector::FromOptional(c.label_selector).Matches(labels)) return true;
  }
  return false;
}

QueueingHint AfterPodEvent(const Pod& pod, const Pod* old_pod, const Pod* new_pod) {
  // Only assigned pods of the same namespace (or the pod itself) take part in its spreading.
  auto involved = [&](const Pod* other) {
    return other->metadata.uid == pod.metadata.uid ||
           (!other->spec.node_name.empty() &&
            other->metadata.namespace_ == pod.metadata.namespace_);
  };
  if ((new_pod && !involved(new_pod)) || (old_pod && !involved(old_pod)))
    return QueueingHint::kQueueSkip;
  if (old_pod && new_pod) {  // relabelled: helps only if some selector's verdict changed
    if (old_pod->metadata.labels == new_pod->metadata.labels) return QueueingHint::kQueueSkip;
    const auto& own = pod.spec.topology_spread_constraints;
    if (own.empty()) return QueueingHint::kQueue;
    for (const auto& c : own) {
      CompiledSelector sel = CompiledSelector::FromOptional(c.label_selector);
      if (sel.Matches(old_pod->metadata.labels) != sel.Matches(new_pod->metadata.labels))
        return QueueingHint::kQueue;
    }
    return QueueingHint::kQueueSkip;
  }
  const Pod* changed = new_pod ? new_pod : old_pod;
  if (!changed) return QueueingHint::kQueue;
  return MayCount(pod, changed->metadata.labels) ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
}

QueueingHint AfterNodeEvent(const Pod& pod, const std::vector<std::string>& keys,
                            const Node* old_node, const Node* new_node) {
  if (!new_node) {  // deleted: its domain may have held the minimum
    return old_node && !HasAllKeys(*old_node, keys) ? QueueingHint::kQueueSkip
                                                    : QueueingHint::kQueue;
  }
  if (!HasAllKeys(*new_node, keys)) return QueueingHint::kQueueSkip;
  if (!old_node) return QueueingHint::kQueue;
  if (!HasAllKeys(*old_node, keys)) return QueueingHint::kQueue;
  for (const auto& k : keys) {
    if (old_node->metadata.labels.at(k) != new_node->metadata.labels.at(k))
      return QueueingHint::kQueue;
  }
  // Same domains; taints change which nodes count under nodeTaintsPolicy: Honor.
  if (old_node->spec.taints.size() != new_node->spec.taints.size()) return QueueingHint::kQueue;
  for (size_t i = 0; i < old_node->spec.taints.size(); ++i) {
    const Taint& a = old_node->spec.taints[i];
    const Taint& b = new_node->spec.taints[i];
    if (a.key != b.key || a.value != b.value || a.effect != b.effect) return QueueingHint::kQueue;
  }
  (void)pod;
  return QueueingHint::kQueueSkip;
}

}  // namespace

std::vector<ClusterEventWithHint> PodTopologySpread::EventsToRegister() const {
  return {
      {{EventResource::kPod, kAdd | kUpdatePodLabel | kDelete},
       [](const Pod& pod, const EventObject& old_object,
          const EventObject& new_object) -> Result<QueueingHint> {
         return AfterPodEvent(pod, ObjectAs<Pod>(old_object), ObjectAs<Pod>(new_object));
       }},
      {{EventResource::kNode, kAdd | kDelete | kUpdateNodeLabel | kUpdateNodeTaint},
       [this](const Pod& pod, const EventObject& old_object,
              const EventObject& new_object) -> Result<QueueingHint> {
         return AfterNodeEvent(pod, TopologyKeys(pod, default_constraints_),
                               ObjectAs<Node>(old_object), ObjectAs<Node>(new_object));
       }},
  };
}

const Snapshot* PodTopologySpread::IncrementalSnapshot(
    std::span<const NodeInfo* const> nodes) const {
  const Snapshot& snapshot = handle_.snapshot();
  const auto& list = snapshot.nodes();
  if (snapshot.generation <= 0 || list.data() != nodes.data() || list.size() != nodes.size()) {
    return nullptr;
  }
  return &snapshot;
}

std::shared_ptr<const NodeTable> PodTopologySpread::RefreshTable(
    std::span<const NodeInfo* const> nodes) {
  const Snapshot* snapshot = IncrementalSnapshot(nodes);
  if (snapshot == nullptr || snapshot->last_changed_from < 0)
    return cache_.Refresh(nodes, snapshot);
  // The cache reports which NodeInfos its last update touched: only those need a look.
  SpreadCache::Delta delta{snapshot->last_changed_from, snapshot->last_changed};
  return cache_.Refresh(nodes, snapshot, &delta);
}

}  // namespace podtopologyspread

PluginRegistration PodTopologySpreadRegistration() {
  return PodTopologySpreadRegistration(config::FeatureGates());
}

PluginRegistration PodTopologySpreadRegistration(const config::FeatureGates& gates) {
  static const config::PodTopologySpreadArgs kDefaults;
  const bool ops = gates.Enabled(kTaintTolerationComparisonOperatorsGate);
  auto factory = [ops](const PluginArgs* args, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "PodTopologySpreadArgs");
    if (!typed.ok()) return typed.error();
    if (auto valid = config::ValidatePodTopologySpreadArgs(**typed, "args"); !valid.ok()) {
      return valid.error();
    }
    return std::unique_ptr<Plugin>(
        std::make_unique<podtopologyspread::PodTopologySpread>(**typed, handle, ops));
  };
  return MakeRegistration(podtopologyspread::kName, factory,
                          config::InTreeArgsDecoder(std::string(podtopologyspread::kName)));
}

}  // namespace berth
