#include "cache/cache.h"

#include <fmt/format.h>

#include <algorithm>

#include "framework/snapshot_editor.h"
#include "framework/zone_key.h"

namespace berth {
namespace {

std::string UidOf(const Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

bool SameKeys(const std::unordered_map<std::string, int>& a,
              const std::unordered_map<std::string, int>& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [k, v] : a)
    if (!b.count(k)) return false;
  return true;
}

}  // namespace

NodeInfo& Cache::NodeLocked(const std::string& name) {
  auto& slot = nodes_[name];
  if (!slot) slot = std::make_shared<NodeInfo>();
  return *slot;
}

void Cache::MarkDirty(const std::string& name) {
  dirty_.insert(name);
  // Generations are unique across all NodeInfos of the cache (not just per node), so a plugin
  // that remembers (NodeInfo, generation) pairs can never mistake a new NodeInfo for an old one.
  if (auto it = nodes_.find(name); it != nodes_.end())
    SnapshotEditor::SetGeneration(*it->second, ++generation_);
}

void Cache::UpdateImagesLocked(const Node* old_node, const Node* new_node) {
  // Only the holder counts change: they live in one table the snapshot copies, so other nodes
  // holding the same images are not touched (a node joining stays O(its images)).
  auto names_of = [](const Node* n) {
    std::unordered_set<std::string> names;  // a node counts once per image name
    if (n)
      for (const auto& img : n->status.images) names.insert(img.names.begin(), img.names.end());
    return names;
  };
  for (const auto& n : names_of(old_node)) {
    if (--image_holders_[n] <= 0) image_holders_.erase(n);
    images_changed_ = true;
  }
  for (const auto& n : names_of(new_node)) {
    ++image_holders_[n];
    images_changed_ = true;
  }
  if (new_node) {
    auto it = nodes_.find(new_node->metadata.name);
    if (it != nodes_.end()) {
      auto& states = SnapshotEditor::ImageStates(*it->second);
      for (const auto& img : new_node->status.images)
        for (const auto& n : img.names) states[n] = {img.size_bytes};
    }
  }
}

void Cache::AddNode(Ptr<Node> node) {
  std::lock_guard lock(mu_);
  const std::string name = node->metadata.name;
  NodeInfo& ni = NodeLocked(name);
  const Node* old = ni.node();
  auto keep = ni.node_ptr();
  ni.SetNode(node);
  SnapshotEditor::ImageStates(ni).clear();
  const std::string zone = NodeZoneKey(*node);
  auto known = zone_of_.find(name);
  if (known == zone_of_.end() || known->second != zone) {
    // A node that changes zone leaves its old zone and joins the end of the new one.
    if (known != zone_of_.end()) LeaveZoneLocked(name);
    auto& members = zone_nodes_[zone];
    if (members.empty()) zone_order_.push_back(zone);  // a new zone goes last
    members.push_back(name);
    node_pos_[name] = std::prev(members.end());
    zone_of_[name] = zone;
    ++node_count_;
  }
  UpdateImagesLocked(old, node.get());
  MarkDirty(name);
  nodes_changed_ = true;
}

void Cache::UpdateNode(Ptr<Node> node) { AddNode(std::move(node)); }

void Cache::RemoveNode(const Node& node) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node.metadata.name);
  if (it == nodes_.end()) return;
  UpdateImagesLocked(it->second->node(), nullptr);
  // A NodeInfo with pods stays (without its node) until the pods are gone.
  if (it->second->pods().empty()) {
    nodes_.erase(it);
  } else {
    it->second->SetNode(nullptr);
  }
  if (zone_of_.count(node.metadata.name)) LeaveZoneLocked(node.metadata.name);
  MarkDirty(node.metadata.name);
  nodes_changed_ = true;
}

void Cache::AddPodLocked(PodInfoPtr info) {
  const std::string node = info->pod->spec.node_name;
  const std::string uid = UidOf(*info->pod);
  NodeLocked(node).AddPod(info);
  MarkDirty(node);
  pods_[uid] = PodState{std::move(info), false, false};
}

void Cache::RemovePodLocked(const Pod& pod, const std::string& node) {
  auto it = nodes_.find(node);
  if (it != nodes_.end()) {
    it->second->RemovePod(pod);
    if (!it->second->node() && it->second->pods().empty()) nodes_.erase(it);
    MarkDirty(node);
  }
}

void Cache::AddPod(Ptr<Pod> pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(*pod));
  if (it != pods_.end()) {
    // Confirmation of an assumed pod; it may have landed on another node.
    const std::string old_node = it->second.info->pod->spec.node_name;
    RemovePodLocked(*it->second.info->pod, old_node);
    pods_.erase(it);
  }
  AddPodLocked(PodInfo::Create(std::move(pod)));
}

void Cache::UpdatePod(const Ptr<Pod>& old_pod, Ptr<Pod> new_pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(*old_pod));
  if (it != pods_.end()) {
    RemovePodLocked(*it->second.info->pod, it->second.info->pod->spec.node_name);
    pods_.erase(it);
  }
  AddPodLocked(PodInfo::Create(std::move(new_pod)));
}

void Cache::RemovePod(const Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(pod));
  if (it == pods_.end()) return;
  RemovePodLocked(*it->second.info->pod, it->second.info->pod->spec.node_name);
  pods_.erase(it);
}

VoidResult Cache::AssumePod(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  std::string uid = UidOf(*pod->pod);
  if (pods_.count(uid))
    return Error{fmt::format("pod {} is in the cache, so can't be assumed", pod->pod->Key())};
  AddPodLocked(std::move(pod));
  pods_[uid].assumed = true;
  return {};
}

VoidResult Cache::ForgetPod(const Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(pod));
  if (it == pods_.end()) return {};
  if (!it->second.assumed)
    return Error{fmt::format("pod {} wasn't assumed so cannot be forgotten", pod.Key())};
  RemovePodLocked(*it->second.info->pod, it->second.info->pod->spec.node_name);
  pods_.erase(it);
  return {};
}

void Cache::FinishBinding(const Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(pod));
  if (it != pods_.end()) it->second.binding_finished = true;
}

bool Cache::IsAssumedPod(const Pod& pod) const {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(pod));
  return it != pods_.end() && it->second.assumed;
}

void Cache::UpdateSnapshot(Snapshot* snapshot) {
  std::lock_guard lock(mu_);
  if (images_changed_) {
    snapshot->image_num_nodes = image_holders_;
    images_changed_ = false;
  }
  bool rebuild = nodes_changed_;
  bool refresh = false;
  const int64_t from = snapshot->generation;
  snapshot->last_changed.clear();
  auto& map = SnapshotEditor::Map(*snapshot);
  for (const auto& name : dirty_) {
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second->node()) {
      if (map.erase(name)) rebuild = true;
      continue;
    }
    auto& slot = map[name];
    if (!slot) {
      slot = std::make_shared<NodeInfo>(*it->second);
      rebuild = true;
      continue;
    }
    // The node list keeps pointing at `slot`; only the affinity and claim lists may change.
    const NodeInfo& fresh = *it->second;
    if (slot->pods_with_affinity().empty() != fresh.pods_with_affinity().empty() ||
        slot->pods_with_required_anti_affinity().empty() !=
            fresh.pods_with_required_anti_affinity().empty() ||
        !SameKeys(slot->pvc_ref_counts(), fresh.pvc_ref_counts()))
      refresh = true;
    *slot = fresh;
    snapshot->last_changed.push_back(slot.get());
  }
  // clear() keeps the bucket array, which the initial load sized to the whole cluster: clearing
  // it each cycle would cost O(cluster) (a memset of every bucket) for a handful of nodes.
  if (dirty_.bucket_count() > 4 * dirty_.size() + 64) {
    dirty_ = std::unordered_set<std::string>();  // not `= {}`: that is clear() + insert
  } else {
    dirty_.clear();
  }
  if (rebuild) {
    std::vector<const Node*> nodes;
    nodes.reserve(node_count_);
    for (const auto& zone : zone_order_) {
      for (const auto& name : zone_nodes_[zone]) {
        auto it = nodes_.find(name);
        if (it != nodes_.end() && it->second->node()) nodes.push_back(it->second->node());
      }
    }
    SnapshotEditor::RebuildLists(*snapshot, ZoneInterleavedOrder(nodes));
    nodes_changed_ = false;
  } else if (refresh) {
    SnapshotEditor::RefreshDerivedLists(*snapshot);
  }
  snapshot->last_changed_from = rebuild ? -1 : from;
  ++snapshot->generation;
}

size_t Cache::NodeCount() const {
  std::lock_guard lock(mu_);
  return node_count_;
}

void Cache::LeaveZoneLocked(const std::string& name) {
  auto z = zone_of_.find(name);
  auto& members = zone_nodes_[z->second];
  members.erase(node_pos_[name]);
  node_pos_.erase(name);
  if (members.empty()) {
    // An emptied zone loses its place; it goes last if it comes back.
    std::erase(zone_order_, z->second);
    zone_nodes_.erase(z->second);
  }
  zone_of_.erase(z);
  --node_count_;
}

size_t Cache::PodCount() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

}  // namespace berth
