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

}  // namespace

Cache::NodeState& Cache::NodeLocked(const std::string& name) {
  auto& state = nodes_[name];
  if (!state.info) state.info = std::make_shared<NodeInfo>();
  return state;
}

void Cache::MarkDirty(const std::string& name) {
  dirty_.insert(name);
  // Generations are unique across all NodeInfos of the cache (not just per node), so a plugin
  // that remembers (NodeInfo, generation) pairs can never mistake a new NodeInfo for an old one.
  if (auto it = nodes_.find(name); it != nodes_.end()) it->second.generation = ++generation_;
}

void Cache::UpdateImagesLocked(const Node* old_node, const Node* new_node) {
  // Only the holder counts change: they live in one table the snapshot copies, so other nodes
  // holding the same images are not touched (a node joining stays O(its images)). The node's
  // own image states are set when its new node is applied (ApplyChangesLocked).
  auto names_of = [](const Node* n) {
    std::unordered_set<std::string> names;  // a node counts once per image name
    if (n)
      for (const auto& img : n->status.images) names.insert(img.names.begin(), img.names.end());
    return names;
  };
  const auto old_names = names_of(old_node);
  const auto new_names = names_of(new_node);
  // A status update that reports the same images (most of them) changes no count.
  if (old_names == new_names) return;
  for (const auto& n : old_names) {
    if (--image_holders_[n] <= 0) image_holders_.erase(n);
  }
  for (const auto& n : new_names) ++image_holders_[n];
  images_changed_ = true;
}

void Cache::AddNode(Ptr<Node> node) {
  std::lock_guard lock(mu_);
  const std::string name = node->metadata.name;
  NodeState& state = NodeLocked(name);
  const Ptr<Node> old = std::move(state.node);
  state.node = node;
  RecordLocked(state, {Change::Kind::kSetNode, state.info, node, nullptr});
  const std::string zone = NodeZoneKey(*node);
  // The node list changes only for a new node or one that moved zone: an update in place keeps
  // its position (the snapshot reports it among last_changed, an O(1) change).
  if (!old || !state.zone || state.zone->first != zone) nodes_changed_ = true;
  if (!state.zone || state.zone->first != zone) {
    // A node that changes zone leaves its old zone and joins the end of the new one.
    if (state.zone) LeaveZoneLocked(state);
    auto [zit, inserted] = zone_nodes_.try_emplace(zone);
    if (zit->second.empty()) zone_order_.push_back(zone);  // a new zone goes last
    NodeEntry* entry = &*nodes_.find(name);
    ZoneMembers& members = zit->second;
    state.zone_prev = members.last;
    state.zone_next = nullptr;
    if (members.last) {
      members.last->second.zone_next = entry;
    } else {
      members.first = entry;
    }
    members.last = entry;
    state.zone = &*zit;
    ++node_count_;
  }
  UpdateImagesLocked(old.get(), node.get());
  MarkDirty(name);
}

void Cache::UpdateNode(Ptr<Node> node) { AddNode(std::move(node)); }

void Cache::RemoveNode(const Node& node) {
  std::lock_guard lock(mu_);
  auto it = nodes_.find(node.metadata.name);
  if (it == nodes_.end()) return;
  NodeState& state = it->second;
  UpdateImagesLocked(state.node.get(), nullptr);
  if (state.zone) LeaveZoneLocked(state);
  // A NodeInfo with pods stays (without its node) until the pods are gone.
  if (state.pods == 0) {
    nodes_.erase(it);
  } else {
    state.node = nullptr;
    RecordLocked(state, {Change::Kind::kSetNode, state.info, nullptr, nullptr});
  }
  MarkDirty(node.metadata.name);
  nodes_changed_ = true;
}

void Cache::AddPodLocked(PodInfoPtr info) {
  const std::string node = info->pod->spec.node_name;
  NodeState& state = NodeLocked(node);
  ++state.pods;
  RecordLocked(state, {Change::Kind::kAddPod, state.info, nullptr, info});
  MarkDirty(node);
  PodState entry{std::move(info), false, false, {}};
  std::string_view key = entry.info->pod->metadata.uid;
  if (key.empty()) key = *(entry.key_storage = UidOf(*entry.info->pod));
  if (auto it = pods_.find(key); it != pods_.end()) ErasePodLocked(it);
  pods_.emplace(key, std::move(entry));
}

void Cache::RemovePodLocked(const PodInfoPtr& pod) {
  const std::string& node = pod->pod->spec.node_name;
  auto it = nodes_.find(node);
  if (it != nodes_.end()) {
    NodeState& state = it->second;
    --state.pods;
    RecordLocked(state, {Change::Kind::kRemovePod, state.info, nullptr, pod});
    if (!state.node && state.pods == 0) nodes_.erase(it);
    MarkDirty(node);
  }
}

void Cache::AddPod(Ptr<Pod> pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(*pod));
  if (it != pods_.end()) {
    // Confirmation of an assumed pod; it may have landed on another node.
    RemovePodLocked(it->second.info);
    ErasePodLocked(it);
  }
  AddPodLocked(PodInfo::Create(std::move(pod)));
}

void Cache::UpdatePod(const Ptr<Pod>& old_pod, Ptr<Pod> new_pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(*old_pod));
  if (it != pods_.end()) {
    RemovePodLocked(it->second.info);
    ErasePodLocked(it);
  }
  AddPodLocked(PodInfo::Create(std::move(new_pod)));
}

void Cache::RemovePod(const Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(pod));
  if (it == pods_.end()) return;
  RemovePodLocked(it->second.info);
  ErasePodLocked(it);
}

VoidResult Cache::AssumePod(PodInfoPtr pod) {
  std::lock_guard lock(mu_);
  std::string uid = UidOf(*pod->pod);
  if (pods_.count(uid))
    return Error{fmt::format("pod {} is in the cache, so can't be assumed", pod->pod->Key())};
  AddPodLocked(std::move(pod));
  pods_.find(uid)->second.assumed = true;
  ++assumed_pods_;
  return {};
}

VoidResult Cache::ForgetPod(const Pod& pod) {
  std::lock_guard lock(mu_);
  auto it = pods_.find(UidOf(pod));
  if (it == pods_.end()) return {};
  if (!it->second.assumed)
    return Error{fmt::format("pod {} wasn't assumed so cannot be forgotten", pod.Key())};
  RemovePodLocked(it->second.info);
  ErasePodLocked(it);
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

void Cache::RecordLocked(NodeState& state, Change change) {
  if (state.published) {
    changes_.push_back(std::move(change));
  } else {
    // The initial load: no log of every node and pod to keep until the first update.
    Apply(change);
  }
}

bool Cache::Apply(const Change& c) {
  NodeInfo& ni = *c.target;
  const bool affinity = ni.pods_with_affinity().empty();
  const bool anti_affinity = ni.pods_with_required_anti_affinity().empty();
  const size_t claims = ni.pvc_ref_counts().size();
  switch (c.kind) {
    case Change::Kind::kSetNode:
      ni.SetNode(c.node);
      // A node that leaves keeps its image states until it comes back with new ones.
      if (c.node) SnapshotEditor::SetImageStates(ni, *c.node);
      break;
    case Change::Kind::kAddPod:
      ni.AddPod(c.pod);
      break;
    case Change::Kind::kRemovePod:
      ni.RemovePod(*c.pod->pod);
      break;
  }
  // A pod adds or removes claim keys, never both: a changed count is a changed key set.
  return affinity != ni.pods_with_affinity().empty() ||
         anti_affinity != ni.pods_with_required_anti_affinity().empty() ||
         claims != ni.pvc_ref_counts().size();
}

bool Cache::ApplyChangesLocked() {
  bool lists_changed = false;
  for (const Change& c : changes_) lists_changed |= Apply(c);
  // Like dirty_ below: a burst of events leaves a large buffer that later updates do not need.
  if (changes_.capacity() > 4 * changes_.size() + 1024) {
    changes_ = std::vector<Change>();
  } else {
    changes_.clear();
  }
  return lists_changed;
}

void Cache::IndexListsLocked(const Snapshot& snapshot) {
  affinity_at_.clear();
  anti_affinity_at_.clear();
  claim_users_.clear();
  claims_of_.clear();
  const auto& list = snapshot.nodes();
  for (uint32_t i = 0; i < list.size(); ++i) {
    const NodeInfo* ni = list[i];
    if (auto it = nodes_.find(ni->name()); it != nodes_.end()) it->second.position = i;
    if (!ni->pods_with_affinity().empty()) affinity_at_.push_back(i);
    if (!ni->pods_with_required_anti_affinity().empty()) anti_affinity_at_.push_back(i);
    if (!ni->pvc_ref_counts().empty()) {
      auto& keys = claims_of_[ni];
      for (const auto& [key, count] : ni->pvc_ref_counts()) {
        keys.push_back(key);
        ++claim_users_[key];
      }
    }
  }
}

namespace {

// Puts `ni` into or out of a derived list kept in node order; `at` holds the list positions of
// its entries.
void Relist(std::vector<const NodeInfo*>& list, std::vector<uint32_t>& at, uint32_t position,
            const NodeInfo* ni, bool want) {
  auto it = std::lower_bound(at.begin(), at.end(), position);
  const bool has = it != at.end() && *it == position;
  if (want == has) return;
  const auto offset = it - at.begin();
  if (want) {
    at.insert(it, position);
    list.insert(list.begin() + offset, ni);
  } else {
    at.erase(it);
    list.erase(list.begin() + offset);
  }
}

}  // namespace

void Cache::RelistLocked(Snapshot& snapshot, const NodeInfo& ni, uint32_t position) {
  Relist(SnapshotEditor::WithAffinity(snapshot), affinity_at_, position, &ni,
         !ni.pods_with_affinity().empty());
  Relist(SnapshotEditor::WithRequiredAntiAffinity(snapshot), anti_affinity_at_, position, &ni,
         !ni.pods_with_required_anti_affinity().empty());
  auto counted = claims_of_.find(&ni);
  if (counted == claims_of_.end() && ni.pvc_ref_counts().empty()) return;
  auto& used = SnapshotEditor::UsedPVCs(snapshot);
  if (counted != claims_of_.end()) {
    for (const auto& key : counted->second) {
      if (--claim_users_[key] == 0) {
        claim_users_.erase(key);
        used.erase(key);
      }
    }
    claims_of_.erase(counted);
  }
  if (ni.pvc_ref_counts().empty()) return;
  auto& keys = claims_of_[&ni];
  for (const auto& [key, count] : ni.pvc_ref_counts()) {
    keys.push_back(key);
    if (claim_users_[key]++ == 0) used.insert(key);
  }
}

void Cache::UpdateSnapshot(Snapshot* snapshot, SnapshotChanges* changes) {
  std::lock_guard lock(mu_);
  if (changes) {
    changes->positions.clear();
    changes->images = false;
  }
  const bool refresh = ApplyChangesLocked();
  auto& map = SnapshotEditor::Map(*snapshot);
  bool rebuild = nodes_changed_;
  if (snapshot != fed_ || snapshot->generation != fed_generation_) {
    // Not the snapshot the last update wrote: fill it with every node.
    map.clear();
    for (auto& [name, state] : nodes_) {
      SnapshotEditor::SetGeneration(*state.info, state.generation);
      if (state.node) {
        map.emplace(name, state.info);
        state.published = true;
      }
    }
    dirty_.clear();
    images_changed_ = true;
    rebuild = true;
  }
  if (images_changed_) {
    snapshot->image_num_nodes = image_holders_;
    images_changed_ = false;
    if (changes) changes->images = true;
  }
  const int64_t from = snapshot->generation;
  snapshot->last_changed.clear();
  std::vector<std::pair<const NodeInfo*, uint32_t>> relist;
  for (const auto& name : dirty_) {
    auto it = nodes_.find(name);
    if (it == nodes_.end() || !it->second.node) {
      if (map.erase(name)) rebuild = true;
      continue;
    }
    NodeState& state = it->second;
    SnapshotEditor::SetGeneration(*state.info, state.generation);
    auto& slot = map[name];
    if (slot != state.info) {
      slot = state.info;
      state.published = true;
      rebuild = true;
      continue;
    }
    // The node list keeps pointing at `slot`; only the affinity and claim lists may change.
    snapshot->last_changed.push_back(slot.get());
    if (changes) changes->positions.push_back(state.position);
    if (refresh) relist.emplace_back(slot.get(), state.position);
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
      for (const NodeEntry* entry = zone_nodes_[zone].first; entry; entry = entry->second.zone_next)
        nodes.push_back(entry->second.node.get());
    }
    SnapshotEditor::RebuildLists(*snapshot, ZoneInterleavedNodes(nodes));
    IndexListsLocked(*snapshot);
    nodes_changed_ = false;
  } else {
    // Only the changed nodes can enter or leave the derived lists: no walk over the cluster.
    for (const auto& [ni, position] : relist) RelistLocked(*snapshot, *ni, position);
  }
  snapshot->last_changed_from = rebuild ? -1 : from;
  ++snapshot->generation;
  fed_ = snapshot;
  fed_generation_ = snapshot->generation;
}

VoidResult Cache::PlaceInSnapshot(Snapshot* snapshot, const PodInfoPtr& pod, bool add) {
  std::lock_guard lock(mu_);
  if (snapshot != fed_ || snapshot->generation != fed_generation_)
    return Error{"the snapshot is not the one the cache fed last", ErrorCode::kConflict};
  const std::string& name = pod->pod->spec.node_name;
  auto it = nodes_.find(name);
  if (it == nodes_.end() || !it->second.node || !it->second.published ||
      it->second.position == kUnlisted)
    return Error{fmt::format("node {} is not in the snapshot", name), ErrorCode::kNotFound};
  NodeState& state = it->second;
  Apply(Change{add ? Change::Kind::kAddPod : Change::Kind::kRemovePod, state.info, nullptr, pod});
  RelistLocked(*snapshot, *state.info, state.position);
  // A new generation for the NodeInfo and the snapshot, this node the update's only change; the
  // node is marked dirty too, so the next UpdateSnapshot gives it another generation and lists
  // it as changed (it may also have changes logged meanwhile).
  MarkDirty(name);
  SnapshotEditor::SetGeneration(*state.info, ++generation_);
  snapshot->last_changed.assign(1, state.info.get());
  snapshot->last_changed_from = snapshot->generation;
  ++snapshot->generation;
  fed_generation_ = snapshot->generation;
  return {};
}

size_t Cache::NodeCount() const {
  std::lock_guard lock(mu_);
  return node_count_;
}

void Cache::LeaveZoneLocked(NodeState& state) {
  ZoneEntry* zone = state.zone;
  ZoneMembers& members = zone->second;
  (state.zone_prev ? state.zone_prev->second.zone_next : members.first) = state.zone_next;
  (state.zone_next ? state.zone_next->second.zone_prev : members.last) = state.zone_prev;
  state.zone_prev = state.zone_next = nullptr;
  state.zone = nullptr;
  if (zone->second.empty()) {
    // An emptied zone loses its place; it goes last if it comes back.
    const std::string key = zone->first;  // erase() must not see the key it frees
    std::erase(zone_order_, key);
    zone_nodes_.erase(key);
  }
  --node_count_;
}

void Cache::ErasePodLocked(PodMap::iterator it) {
  if (it->second.assumed) --assumed_pods_;
  pods_.erase(it);
}

size_t Cache::AssumedPodCount() const {
  std::lock_guard lock(mu_);
  return assumed_pods_;
}

size_t Cache::PodCount() const {
  std::lock_guard lock(mu_);
  return pods_.size();
}

}  // namespace berth
