// Cache: the scheduler's live view of nodes and the pods placed on them, including pods that
// are assumed (placed by a scheduling cycle, binding still in flight).
//
// Fed by cluster events (node/pod add, update, delete) and by the scheduling cycle (Assume,
// Forget, FinishBinding). Thread-safe: events and binding threads call in while a cycle runs.
//
// There is one NodeInfo per node, shared with the Snapshot the cache feeds: a change is logged
// when it happens and applied to the NodeInfo by the next UpdateSnapshot, which the scheduling
// thread calls between cycles, so a cycle never sees a NodeInfo change under it and no node is
// kept twice (a second, live copy of every NodeInfo was the largest per-node cost at 100,000
// nodes). An update costs O(changes since the last one), not O(nodes).
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/cluster.h"
#include "berth/framework/node_info.h"

namespace berth {

class Cache {
 public:
  void AddNode(Ptr<Node> node);
  void UpdateNode(Ptr<Node> node);
  void RemoveNode(const Node& node);

  // A pod bound to a node (from the cluster). Confirms it if it was assumed.
  void AddPod(Ptr<Pod> pod);
  void UpdatePod(const Ptr<Pod>& old_pod, Ptr<Pod> new_pod);
  void RemovePod(const Pod& pod);

  // Places the pod (spec.nodeName set) on its node ahead of the bind.
  VoidResult AssumePod(PodInfoPtr pod);
  // Undoes AssumePod after a failed reserve, permit or bind.
  VoidResult ForgetPod(const Pod& pod);
  void FinishBinding(const Pod& pod);
  bool IsAssumedPod(const Pod& pod) const;

  // Brings `snapshot` up to date: applies the changes logged since the last update to the
  // NodeInfos. The cache feeds one snapshot at a time (the scheduler's); a different snapshot
  // than the last one is filled from scratch, sharing the same NodeInfos. NodeInfos keep their
  // addresses across updates (they are changed in place), so lists built from them stay valid.
  // Called by the scheduling thread between cycles: it writes the NodeInfos cycles read.
  // `changes`, when given, receives what this update did beyond the snapshot's own record.
  struct SnapshotChanges {
    // Positions in snapshot->nodes() of snapshot->last_changed, in the same order (valid when
    // the list was not rebuilt: last_changed_from >= 0).
    std::vector<uint32_t> positions;
    // image_num_nodes changed: an image's spread, and so a score that reads it, may differ on
    // nodes that did not change themselves.
    bool images = false;
  };
  void UpdateSnapshot(Snapshot* snapshot, SnapshotChanges* changes = nullptr);
  // A pod group's scheduling cycle places its members tentatively in the snapshot the last
  // UpdateSnapshot wrote, one after another, so that later members see earlier ones, and takes
  // them out again before the cycle ends: `pod` (spec.nodeName set) is added to (`add`) or
  // removed from its node's NodeInfo at once, not to the cache's pods. Each call is reported as
  // a snapshot update of that one node (generation, last_changed, the derived lists), and the
  // node is changed again at the next UpdateSnapshot, so what plugins keep per node is
  // refreshed. Scheduling thread. Fails when the snapshot is not the one last fed or the node is
  // not in it.
  VoidResult PlaceInSnapshot(Snapshot* snapshot, const PodInfoPtr& pod, bool add);

  size_t NodeCount() const;
  // Pods in the cache, assumed ones included.
  size_t PodCount() const;
  // Pods assumed and not yet confirmed by the pod's add event (scheduler_cache_size's
  // "assumed_pods").
  size_t AssumedPodCount() const;

 private:
  struct PodState {
    PodInfoPtr info;
    bool assumed = false;
    bool binding_finished = false;
    // namespace/name of a pod without a UID, which pods_'s key then views.
    Boxed<std::string> key_storage;
  };
  struct NodeState;
  using NodeEntry = std::pair<const std::string, NodeState>;
  // Nodes of one zone in the order they joined it: a list linked through the members' own
  // NodeStates (nodes_'s entries stay put), so a node costs no list node of its own.
  struct ZoneMembers {
    NodeEntry* first = nullptr;
    NodeEntry* last = nullptr;
    bool empty() const { return first == nullptr; }
  };
  using ZoneEntry = std::pair<const std::string, ZoneMembers>;
  static constexpr uint32_t kUnlisted = UINT32_MAX;
  struct NodeState {
    // Shared with the snapshot once published; from then on written only by UpdateSnapshot
    // (see the class comment). Before that no cycle can see it, and changes apply at once.
    NodeInfoPtr info;
    Ptr<Node> node;          // the current node; null while only pods keep the entry
    int64_t generation = 0;  // what `info` gets at the next update
    // The node's zone while it has a node (zone_nodes_'s entry) and its place there.
    ZoneEntry* zone = nullptr;
    NodeEntry* zone_prev = nullptr;
    NodeEntry* zone_next = nullptr;
    uint32_t pods = 0;              // pods placed on the node, bound or assumed
    uint32_t position = kUnlisted;  // index in the snapshot's node list (last rebuild)
    bool published = false;         // ever put in a snapshot
  };
  // A change to a NodeInfo, applied at the next UpdateSnapshot in the order it happened.
  struct Change {
    enum class Kind : uint8_t { kSetNode, kAddPod, kRemovePod };
    Kind kind;
    NodeInfoPtr target;
    Ptr<Node> node;  // kSetNode
    PodInfoPtr pod;  // kAddPod, kRemovePod
  };

  NodeState& NodeLocked(const std::string& name);
  void MarkDirty(const std::string& name);
  void AddPodLocked(PodInfoPtr info);
  void RemovePodLocked(const PodInfoPtr& pod);
  void UpdateImagesLocked(const Node* old_node, const Node* new_node);
  void LeaveZoneLocked(NodeState& state);
  // Keyed by UID; each key views its own entry's pod (or key_storage), so no copy of a
  // 36-character UID is kept per pod.
  using PodMap = std::unordered_map<std::string_view, PodState>;
  void ErasePodLocked(PodMap::iterator it);
  // Applies the change now if no snapshot has the NodeInfo yet, else logs it for the update.
  void RecordLocked(NodeState& state, Change change);
  // Applies one change; true if it may have changed the snapshot's affinity or claim lists.
  static bool Apply(const Change& change);
  // Applies `changes_`; true if one may have changed the snapshot's affinity or claim lists.
  bool ApplyChangesLocked();
  // After the snapshot's lists were rebuilt: list positions and what the derived lists hold.
  void IndexListsLocked(const Snapshot& snapshot);
  // Brings the snapshot's affinity and claim lists up to date for one changed, listed node
  // without a walk over every node.
  void RelistLocked(Snapshot& snapshot, const NodeInfo& ni, uint32_t position);

  mutable std::mutex mu_;
  std::unordered_map<std::string, NodeState> nodes_;
  // Zones in the order they appeared (a zone keeps its place while it has nodes) with their
  // nodes: the node tree's input. A join or leave is O(1) (the zone list is short).
  std::vector<std::string> zone_order_;
  std::unordered_map<std::string, ZoneMembers> zone_nodes_;
  size_t node_count_ = 0;
  PodMap pods_;
  size_t assumed_pods_ = 0;  // entries of pods_ with `assumed`
  std::vector<Change> changes_;
  std::unordered_set<std::string> dirty_;
  int64_t generation_ = 0;                              // last generation given to a NodeInfo
  std::unordered_map<std::string, int> image_holders_;  // image name -> nodes reporting it
  bool images_changed_ = true;
  bool nodes_changed_ = true;
  // The list positions of the snapshot's have_pods_with_affinity() and
  // have_pods_with_required_anti_affinity() entries (ascending, as the lists are in node order),
  // and per claim the number of listed nodes using it, with the claims counted per node.
  std::vector<uint32_t> affinity_at_, anti_affinity_at_;
  std::unordered_map<std::string, int> claim_users_;
  std::unordered_map<const NodeInfo*, std::vector<std::string>> claims_of_;
  // The snapshot the last update wrote and the generation it left: another one starts over.
  const Snapshot* fed_ = nullptr;
  int64_t fed_generation_ = -1;
};

}  // namespace berth
