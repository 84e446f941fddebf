// PodInfo, NodeInfo and Snapshot: the scheduler's precomputed view of pods and nodes.
//
// PodInfo is built once per pod object (requests, compiled affinity terms) and shared.
// NodeInfo aggregates one node with the pods placed on it. The cache owns the live NodeInfos;
// each scheduling cycle reads an immutable Snapshot of them, so Filter/Score may read NodeInfos
// from many threads without locks.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "berth/api/flat_map.h"
#include "berth/api/objects.h"
#include "berth/api/resources.h"
#include "berth/api/selectors.h"
#include "berth/export.h"

namespace berth {

// A pod affinity term ready for matching: selector compiled, namespaces resolved.
struct BERTH_EXPORT AffinityTerm {
  CompiledSelector selector;
  // Namespaces named by the term; when both this and namespace_selector are empty, the term
  // applies to the pod's own namespace (already inserted here in that case).
  std::unordered_set<std::string> namespaces;
  // namespaceSelector; MatchesNothing() when absent.
  CompiledSelector namespace_selector;
  std::string topology_key;

  // True if `pod` (in a namespace with labels `ns_labels`, may be null) matches this term.
  bool Matches(const Pod& pod, const Labels* ns_labels) const;
};

struct BERTH_EXPORT WeightedAffinityTerm {
  AffinityTerm term;
  int32_t weight = 0;
};

struct PodInfo;
using PodInfoPtr = std::shared_ptr<const PodInfo>;

// A pod's inter-pod affinity and anti-affinity terms, compiled.
struct BERTH_EXPORT PodAffinityTerms {
  std::vector<AffinityTerm> required_affinity;
  std::vector<AffinityTerm> required_anti_affinity;
  std::vector<WeightedAffinityTerm> preferred_affinity;
  std::vector<WeightedAffinityTerm> preferred_anti_affinity;
};

struct BERTH_EXPORT PodInfo {
  std::shared_ptr<const Pod> pod;
  PodRequests requests;
  // Out of line and unset for the pods without pod (anti-)affinity, which are most of them:
  // every pending and placed pod has a PodInfo. Read it through the accessors below.
  Boxed<PodAffinityTerms> affinity_terms;

  // The compiled terms; empty when the pod has none of that kind.
  const std::vector<AffinityTerm>& required_affinity() const;
  const std::vector<AffinityTerm>& required_anti_affinity() const;
  const std::vector<WeightedAffinityTerm>& preferred_affinity() const;
  const std::vector<WeightedAffinityTerm>& preferred_anti_affinity() const;

  static PodInfoPtr Create(std::shared_ptr<const Pod> pod);
  const Pod& operator*() const { return *pod; }
  const Pod* operator->() const { return pod.get(); }
};

// Builds an AffinityTerm as kube-scheduler's newAffinityTerm does (matchLabelKeys and mismatch-
// LabelKeys folded in from `pod`'s labels only where admission has not merged them already).
BERTH_EXPORT AffinityTerm MakeAffinityTerm(const Pod& pod, const PodAffinityTerm& term);

// Host ports in use on a node: ip -> set of (protocol, port).
class BERTH_EXPORT HostPortInfo {
 public:
  void Add(std::string_view ip, std::string_view protocol, int32_t port);
  void Remove(std::string_view ip, std::string_view protocol, int32_t port);
  // True if (ip, protocol, port) conflicts with a used port (0.0.0.0 conflicts with any ip).
  bool CheckConflict(std::string_view ip, std::string_view protocol, int32_t port) const;
  size_t size() const;

 private:
  struct Entry {
    std::string ip, protocol;
    int32_t port;
    int count;
  };
  std::vector<Entry> entries_;
};

// An image a node reports. How many nodes hold it is cluster-wide: Snapshot::ImageNumNodes.
struct BERTH_EXPORT ImageStateSummary {
  int64_t size = 0;
};

class BERTH_EXPORT NodeInfo {
 public:
  NodeInfo() = default;
  explicit NodeInfo(std::shared_ptr<const Node> node) { SetNode(std::move(node)); }

  const Node* node() const { return node_.get(); }
  const std::shared_ptr<const Node>& node_ptr() const { return node_; }
  const std::string& name() const;
  void SetNode(std::shared_ptr<const Node> node);

  const std::vector<PodInfoPtr>& pods() const { return pods_; }
  const std::vector<PodInfoPtr>& pods_with_affinity() const { return Extra().pods_with_affinity; }
  const std::vector<PodInfoPtr>& pods_with_required_anti_affinity() const {
    return Extra().pods_with_required_anti_affinity;
  }
  const Resource& requested() const { return requested_; }
  const Resource& non_zero_requested() const { return non_zero_requested_; }
  const Resource& allocatable() const { return allocatable_; }
  const HostPortInfo& used_ports() const { return Extra().used_ports; }
  // Image name as the node reports it -> state; look up with NormalizeImageName(pod image).
  const FlatMap<std::string, ImageStateSummary>& image_states() const { return image_states_; }
  // "namespace/claim" -> number of pods on this node using it.
  const FlatMap<std::string, int>& pvc_ref_counts() const { return Extra().pvc_ref_counts; }

  void AddPod(PodInfoPtr pod);
  // Removes the pod with the same UID (or namespace/name when UIDs are empty).
  // Returns false if it was not on this node.
  bool RemovePod(const Pod& pod);

  // Set by the cache on every change, unique across the cache's NodeInfos; plugins that keep
  // per-node data across cycles compare it to tell a changed node from an unchanged one.
  int64_t generation() const { return generation_; }

  // This NodeInfo's position in Snapshot::nodes() of the snapshot that holds it, set whenever
  // that list is rebuilt; -1 before. Plugins that keep per-node tables in list order read it
  // instead of looking the node up by name or address, and check that the entry at that
  // position is this node: a clone, a NodeInfo outside any snapshot or one whose node left the
  // list may carry a stale position.
  int32_t list_index() const { return list_index_; }

  std::shared_ptr<NodeInfo> Clone() const { return std::make_shared<NodeInfo>(*this); }

 private:
  // The cache's hooks (generation, image states) go through SnapshotEditor, which is not part
  // of the SDK: plugins read NodeInfos, the cache maintains them.
  friend class SnapshotEditor;
  void Update(const PodInfo& pod, int sign);

  // What only nodes with some pods have: pods with affinity, host ports, claims. Kept out of
  // line so a NodeInfo without them is 88 bytes smaller (a large cluster has many such nodes).
  struct Extras {
    std::vector<PodInfoPtr> pods_with_affinity;
    std::vector<PodInfoPtr> pods_with_required_anti_affinity;
    HostPortInfo used_ports;
    FlatMap<std::string, int> pvc_ref_counts;
  };
  static const Extras kNoExtras;
  const Extras& Extra() const { return extras_ ? *extras_ : kNoExtras; }
  Extras& MutableExtra() { return extras_ ? *extras_ : extras_.emplace(); }

  // What the filters and scores read for every node on every cycle comes first, so that a
  // node costs as few cache lines as possible; the rest follows.
  std::shared_ptr<const Node> node_;
  std::vector<PodInfoPtr> pods_;
  Resource requested_;
  Resource non_zero_requested_;
  Resource allocatable_;
  FlatMap<std::string, ImageStateSummary> image_states_;
  Boxed<Extras> extras_;
  int64_t generation_ = 0;
  int32_t list_index_ = -1;
};

using NodeInfoPtr = std::shared_ptr<NodeInfo>;

// The immutable per-cycle view of all nodes. Node order is the zone-interleaved order
// kube-scheduler's node tree produces; Filter iterates it from a rotating start index.
class BERTH_EXPORT Snapshot {
 public:
  Snapshot() = default;
  // Builds a snapshot from nodes and the pods bound to them (used by tests and simulation).
  static Snapshot Build(const std::vector<std::shared_ptr<const Node>>& nodes,
                        const std::vector<std::shared_ptr<const Pod>>& pods);

  // Read-only for plugins: the NodeInfos are the cache's (it writes them through
  // SnapshotEditor, which is not part of the SDK).
  const std::vector<const NodeInfo*>& nodes() const { return list_; }
  const std::vector<const NodeInfo*>& have_pods_with_affinity() const { return with_affinity_; }
  const std::vector<const NodeInfo*>& have_pods_with_required_anti_affinity() const {
    return with_required_anti_affinity_;
  }
  const NodeInfo* Get(std::string_view node_name) const;
  size_t size() const { return list_.size(); }
  // True if some pod on some node uses the claim ("namespace/name").
  bool IsPVCUsedByPods(const std::string& key) const { return used_pvcs_.count(key) > 0; }
  // How many nodes report the image (by the name a node lists it under).
  int ImageNumNodes(const std::string& image) const {
    auto it = image_num_nodes.find(image);
    return it == image_num_nodes.end() ? 0 : it->second;
  }

  // --- maintained by the cache (src/cache); plugins only read these ---
  int64_t generation = 0;
  // What the last update changed: the NodeInfos overwritten in place, and the generation the
  // snapshot had before it (-1 when that update also changed the node list). Lets plugins that
  // keep per-node data across cycles look at changed nodes only.
  std::vector<const NodeInfo*> last_changed;
  int64_t last_changed_from = -1;
  // Image name -> number of nodes that report it. Kept in one table, not in every NodeInfo, so
  // a node joining with common images does not touch every other node.
  std::unordered_map<std::string, int> image_num_nodes;

 private:
  // The cache updates the map and lists through SnapshotEditor (not part of the SDK).
  friend class SnapshotEditor;
  // Rebuilds the ordered lists from the map, in `order` (node names).
  void RebuildLists(const std::vector<std::string>& order);
  // Recomputes the affinity and claim lists from the current node list (node set unchanged).
  void RefreshDerivedLists();

  std::unordered_map<std::string, NodeInfoPtr> map_;
  std::vector<const NodeInfo*> list_;
  std::vector<const NodeInfo*> with_affinity_;
  std::vector<const NodeInfo*> with_required_anti_affinity_;
  std::unordered_set<std::string> used_pvcs_;
};

// Upstream's node tree order: nodes grouped by zone (region + zone labels, in first-seen
// order), then taken round-robin across zones.
BERTH_EXPORT std::vector<std::string> ZoneInterleavedOrder(const std::vector<const Node*>& nodes);

// Image name normalized as the scheduler compares it ("nginx" -> "nginx:latest").
BERTH_EXPORT std::string NormalizeImageName(std::string_view name);

}  // namespace berth
