// SnapshotEditor: the cache's write access to Snapshot and NodeInfo, kept out of the SDK so
// plugins see both read-only. Used by src/cache (and by tests that stand in for the cache);
// same threading as the objects edited (the scheduling thread, under the cache's lock).
#pragma once

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "berth/framework/node_info.h"

namespace berth {

class SnapshotEditor {
 public:
  static std::unordered_map<std::string, NodeInfoPtr>& Map(Snapshot& s) { return s.map_; }
  static void RebuildLists(Snapshot& s, const std::vector<std::string>& order) {
    s.RebuildLists(order);
  }
  // The same from the nodes in list order (see ZoneInterleavedNodes): no name is copied.
  static void RebuildLists(Snapshot& s, const std::vector<const Node*>& order);
  static void RefreshDerivedLists(Snapshot& s) { s.RefreshDerivedLists(); }
  // The derived lists themselves, for a cache that keeps them up to date incrementally (they
  // must stay equal to what RefreshDerivedLists computes: list order, no duplicates).
  static std::vector<const NodeInfo*>& WithAffinity(Snapshot& s) { return s.with_affinity_; }
  static std::vector<const NodeInfo*>& WithRequiredAntiAffinity(Snapshot& s) {
    return s.with_required_anti_affinity_;
  }
  static std::unordered_set<std::string>& UsedPVCs(Snapshot& s) { return s.used_pvcs_; }
  static void SetGeneration(NodeInfo& n, int64_t g) { n.generation_ = g; }
  static void SetListIndex(NodeInfo& n, int32_t i) { n.list_index_ = i; }
  // Replaces the node's image states with the images `node` reports, under the names the node
  // lists them by (pods' images are normalized at lookup).
  static void SetImageStates(NodeInfo& n, const Node& node);
};

// Upstream's node tree order (ZoneInterleavedOrder) as the nodes themselves, for rebuilds of a
// large cluster: a name list costs 32 bytes per node and a copy of every name.
std::vector<const Node*> ZoneInterleavedNodes(const std::vector<const Node*>& nodes);

}  // namespace berth
