#include "scheduler/cluster_events.h"

#include <array>

namespace berth {
namespace {

struct Registration {
  std::string_view plugin;
  uint32_t node_changes;                  // NodeChange bits that can help
  std::array<std::string_view, 6> kinds;  // other kinds whose changes can help
};

// In-tree plugins that reject pods at PreFilter/Filter, and what can undo their rejection.
constexpr Registration kRegistrations[] = {
    {"NodeResourcesFit", kNodeAllocatableChanged | kNodeLabelChanged | kNodeTaintChanged, {}},
    {"NodeAffinity", kNodeLabelChanged | kNodeTaintChanged, {}},
    {"NodeName", kNodeLabelChanged, {}},
    {"NodePorts", kNodeLabelChanged, {}},
    {"NodeUnschedulable", kNodeTaintChanged, {}},
    {"TaintToleration", kNodeTaintChanged, {}},
    {"PodTopologySpread", kNodeLabelChanged | kNodeTaintChanged, {}},
    {"InterPodAffinity", kNodeLabelChanged, {"Namespace"}},
    {"VolumeBinding",
     kNodeAllocatableChanged | kNodeLabelChanged,
     {"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver",
      "CSIStorageCapacity"}},
    {"VolumeZone",
     kNodeLabelChanged,
     {"PersistentVolume", "PersistentVolumeClaim", "StorageClass"}},
    {"VolumeRestrictions", 0, {"PersistentVolumeClaim"}},
    {"NodeVolumeLimits",
     kNodeAllocatableChanged,
     {"PersistentVolume", "PersistentVolumeClaim", "StorageClass", "CSINode", "CSIDriver"}},
    {"SchedulingGates", 0, {}},
};

const Registration* Find(std::string_view plugin) {
  for (const auto& r : kRegistrations) {
    if (r.plugin == plugin) return &r;
  }
  return nullptr;
}

bool SameTaints(const Node& a, const Node& b) {
  if (a.spec.unschedulable != b.spec.unschedulable) return false;
  if (a.spec.taints.size() != b.spec.taints.size()) return false;
  for (size_t i = 0; i < a.spec.taints.size(); ++i) {
    const Taint& x = a.spec.taints[i];
    const Taint& y = b.spec.taints[i];
    if (x.key != y.key || x.value != y.value || x.effect != y.effect) return false;
  }
  return true;
}

bool SameResources(const ResourceList& a, const ResourceList& b) {
  if (a.size() != b.size()) return false;
  for (auto ia = a.begin(), ib = b.begin(); ia != a.end(); ++ia, ++ib) {
    if (ia->first != ib->first || ia->second.MilliValue() != ib->second.MilliValue()) return false;
  }
  return true;
}

}  // namespace

uint32_t ClassifyNodeUpdate(const Node& old_node, const Node& new_node) {
  uint32_t changes = 0;
  if (!SameResources(old_node.status.allocatable, new_node.status.allocatable)) {
    changes |= kNodeAllocatableChanged;
  }
  if (old_node.metadata.labels != new_node.metadata.labels) changes |= kNodeLabelChanged;
  if (!SameTaints(old_node, new_node)) changes |= kNodeTaintChanged;
  if (changes == 0) changes = kNodeOtherChanged;
  return changes;
}

bool RejectedOutsideEventTable(const std::set<std::string>& plugins) {
  if (plugins.empty()) return true;
  for (const auto& p : plugins)
    if (!Find(p)) return true;
  return false;
}

bool MayHelpAfterNodeUpdate(const std::set<std::string>& plugins, uint32_t changes) {
  if (plugins.empty()) return true;
  for (const auto& p : plugins) {
    const Registration* r = Find(p);
    if (!r || (r->node_changes & changes)) return true;
  }
  return false;
}

bool MayHelpAfterObjectChange(const std::set<std::string>& plugins, std::string_view kind) {
  if (plugins.empty()) return true;
  for (const auto& p : plugins) {
    const Registration* r = Find(p);
    if (!r) return true;
    for (auto k : r->kinds) {
      if (k == kind) return true;
    }
  }
  return false;
}

}  // namespace berth
