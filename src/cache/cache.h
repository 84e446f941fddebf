// Cache: the scheduler's live view of nodes and the pods placed on them, including pods that
// are assumed (placed by a scheduling cycle, binding still in flight).
//
// Fed by cluster events (node/pod add, update, delete) and by the scheduling cycle (Assume,
// Forget, FinishBinding). UpdateSnapshot copies only the NodeInfos that changed since the last
// call into the cycle's Snapshot, so a cycle costs O(changes), not O(nodes). Thread-safe.
#pragma once

#include <list>
#include <memory>
#include <mutex>
#include <string>
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

  // Brings `snapshot` up to date. The snapshot's NodeInfo objects keep their addresses across
  // updates (they are overwritten in place), so lists built from them stay valid.
  void UpdateSnapshot(Snapshot* snapshot);

  size_t NodeCount() const;
  size_t PodCount() const;

 private:
  struct PodState {
    PodInfoPtr info;
    bool assumed = false;
    bool binding_finished = false;
  };
  NodeInfo& NodeLocked(const std::string& name);
  void MarkDirty(const std::string& name);
  void AddPodLocked(PodInfoPtr info);
  void RemovePodLocked(const Pod& pod, const std::string& node);
  void UpdateImagesLocked(const Node* old_node, const Node* new_node);
  void LeaveZoneLocked(const std::string& name);

  mutable std::mutex mu_;
  std::unordered_map<std::string, NodeInfoPtr> nodes_;
  // Node names grouped by zone, zones in the order they appeared (a zone keeps its place while
  // it has nodes), nodes of a zone in the order they joined it: the node tree's input. Lists
  // and positions make a join or leave O(1) (the zone list is short).
  std::vector<std::string> zone_order_;
  std::unordered_map<std::string, std::list<std::string>> zone_nodes_;
  std::unordered_map<std::string, std::list<std::string>::iterator> node_pos_;
  std::unordered_map<std::string, std::string> zone_of_;  // node -> zone key
  size_t node_count_ = 0;
  std::unordered_map<std::string, PodState> pods_;  // by UID
  std::unordered_set<std::string> dirty_;
  int64_t generation_ = 0;                              // last generation given to a NodeInfo
  std::unordered_map<std::string, int> image_holders_;  // image name -> nodes reporting it
  bool images_changed_ = true;
  bool nodes_changed_ = true;
};

}  // namespace berth
