#include "plugins/noderesources/fit_remedies.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "api/codec.h"
#include "api/pod_owner.h"
#include "api/resource_amount.h"

namespace berth::noderesources {

namespace {

using PodPtr = Ptr<Pod>;
using RequestsOf = std::function<Resource(const Pod&)>;

// The resources a node can lack for a pod: cpu, memory, ephemeral storage, and the extended
// resources (such as nvidia.com/gpu) the pod asks for.
std::vector<std::string> ResourceNames(const Resource& want) {
  std::vector<std::string> names = {"cpu", "memory", "ephemeral-storage"};
  for (const auto& [name, v] : want.scalar)
    if (v > 0) names.push_back(name);
  return names;
}

// How much a shortfall weighs when ranking: millicores, MiB, or units of an extended resource.
int64_t CostOf(std::string_view resource, int64_t lack) {
  if (resource == "memory" || resource == "ephemeral-storage") return lack / (1024 * 1024);
  return lack;
}

// What a node lacks for the pod: per resource, its pods' requests plus the pod's beyond its
// allocatable. `too_small` when the pod does not fit even with every evictable pod gone.
struct Shortfall {
  const Node* node = nullptr;
  std::vector<PodPtr> evictable;
  std::map<std::string, int64_t> lack;
  Resource used;  // what the evictable pods request: more than that cannot be freed
  int64_t cost = 0;
  bool too_small = false;
};

Shortfall ShortfallOn(const Node& node, const std::vector<PodPtr>& pods, const Resource& want,
                      const RequestsOf& requests_of) {
  Shortfall s;
  s.node = &node;
  Resource all;
  for (const PodPtr& p : pods) {
    const Resource r = requests_of(*p);
    all.Add(r);
    if (!ReturnsToItsNode(*p)) {
      s.used.Add(r);
      s.evictable.push_back(p);
    }
  }
  const Resource alloc = Resource::FromList(node.status.allocatable);
  for (const std::string& r : ResourceNames(want)) {
    // What the pods that stay request counts like the node's own reservation.
    if (want.Get(r) + all.Get(r) - s.used.Get(r) > alloc.Get(r)) s.too_small = true;
    if (int64_t lack = all.Get(r) + want.Get(r) - alloc.Get(r); lack > 0) {
      s.lack[r] = lack;
      s.cost += CostOf(r, lack);
    }
  }
  return s;
}

// The pods on the node whose eviction covers every shortfall: those preemption could evict
// (lower priority than the pod) first, lowest priority first, then the largest requests of
// what is lacking; a pod is taken only if it frees something still lacking. Empty when even
// all of them are not enough.
std::vector<PodPtr> PodsToEvict(const Shortfall& s, const RequestsOf& requests_of) {
  std::vector<PodPtr> pods = s.evictable;
  auto frees = [&](const PodPtr& p) {
    const Resource r = requests_of(*p);
    int64_t cost = 0;
    for (const auto& [name, lack] : s.lack) cost += CostOf(name, std::min(lack, r.Get(name)));
    return cost;
  };
  std::stable_sort(pods.begin(), pods.end(), [&](const PodPtr& a, const PodPtr& b) {
    if (a->Priority() != b->Priority()) return a->Priority() < b->Priority();
    return frees(a) > frees(b);
  });
  std::map<std::string, int64_t> left = s.lack;
  std::vector<PodPtr> out;
  for (const PodPtr& p : pods) {
    const Resource r = requests_of(*p);
    bool helps = false;
    for (auto& [name, lack] : left)
      if (lack > 0 && r.Get(name) > 0) {
        helps = true;
        lack -= r.Get(name);
      }
    if (helps) out.push_back(p);
    if (std::all_of(left.begin(), left.end(), [](const auto& l) { return l.second <= 0; }))
      return out;
  }
  return {};
}

std::optional<ClusterRemedy> Freeing(const Pod& pod, const Shortfall& shortfall,
                                     const RequestsOf& requests_of) {
  const std::vector<PodPtr> evict = PodsToEvict(shortfall, requests_of);
  if (evict.empty()) return std::nullopt;
  std::vector<std::string> freeing, requested;
  for (const auto& [r, lack] : shortfall.lack) {
    freeing.push_back(fmt::format("{} {}", FormatAmount(r, lack), r));
    requested.push_back(fmt::format("{} {}", FormatAmount(r, shortfall.used.Get(r)), r));
  }
  std::set<std::string> keys;
  bool preemptible = true;
  for (const PodPtr& p : evict) {
    keys.insert(p->Key());
    preemptible &= p->Priority() < pod.Priority();
  }
  const std::string& name = shortfall.node->metadata.name;
  const std::string what = fmt::format("free {}", fmt::join(freeing, " and "));
  const std::string why =
      fmt::format("(evict or shrink pods there; they request {})", fmt::join(requested, " and "));
  ClusterRemedy r;
  r.kind = "resources";
  r.description = fmt::format("{} on node {} {}", what, name, why);
  r.node = name;
  r.cost = shortfall.cost;
  r.removed_pods.assign(keys.begin(), keys.end());
  if (preemptible) {
    r.victims = r.removed_pods;
    r.description +=
        fmt::format("; lower-priority pods preemption would evict: {}", fmt::join(r.victims, ", "));
  } else {
    // The same amount to free on alike nodes, with no pods to name, is one change.
    r.merge_key = "resources " + what + " " + why;
  }
  return r;
}

// The node with the most allocatable of `resource`.
const Node* Largest(const std::vector<Ptr<Node>>& nodes, const std::string& resource) {
  const Node* best = nullptr;
  int64_t most = -1;
  for (const Ptr<Node>& n : nodes)
    if (int64_t v = Resource::FromList(n->status.allocatable).Get(resource); v > most) {
      most = v;
      best = n.get();
    }
  return best;
}

// The resources the pod requests beyond every node's allocatable.
std::vector<std::string> Beyond(const std::vector<Ptr<Node>>& nodes, const Resource& want) {
  std::vector<std::string> beyond;
  for (const std::string& r : ResourceNames(want)) {
    const Node* largest = Largest(nodes, r);
    if (want.Get(r) > 0 &&
        (!largest || want.Get(r) > Resource::FromList(largest->status.allocatable).Get(r)))
      beyond.push_back(r);
  }
  return beyond;
}

std::string SizeNote(const std::vector<Ptr<Node>>& nodes, const Resource& want,
                     const std::string& r) {
  const Node* largest = Largest(nodes, r);
  const int64_t most = largest ? Resource::FromList(largest->status.allocatable).Get(r) : 0;
  if (most <= 0)
    return fmt::format(
        "no node is large enough: the pod requests {} {}, and no node has any allocatable",
        FormatAmount(r, want.Get(r)), r);
  return fmt::format(
      "no node is large enough: the pod requests {} {}, and the most any node has allocatable "
      "is {} (node {})",
      FormatAmount(r, want.Get(r)), r, FormatAmount(r, most), largest->metadata.name);
}

// A node like the largest, with the room the pod asks for, added without pods.
std::optional<ClusterRemedy> LargerNode(const std::vector<Ptr<Node>>& nodes, const Resource& want,
                                        const std::vector<std::string>& beyond) {
  const Node* model = Largest(nodes, beyond.front());
  if (!model) return std::nullopt;
  auto added = std::make_shared<Node>(*model);
  added->metadata.name = model->metadata.name + "-larger";
  added->metadata.uid.clear();
  if (added->metadata.labels.count("kubernetes.io/hostname"))
    added->metadata.labels["kubernetes.io/hostname"] = added->metadata.name;
  std::vector<std::string> sizes;
  for (const std::string& r : beyond) {
    const std::string amount =
        r == "cpu" ? fmt::format("{}m", want.Get(r)) : std::to_string(want.Get(r));
    added->status.allocatable[r] = Quantity::Parse(amount).value();
    added->status.capacity[r] = Quantity::Parse(amount).value();
    sizes.push_back(fmt::format("{} {}", FormatAmount(r, want.Get(r)), r));
  }
  added->raw = DocumentOnlyFields(added->raw);
  ClusterRemedy r;
  r.kind = "larger-node";
  r.description = fmt::format(
      "add a node like {} with at least {} allocatable (no node is large enough), or lower the "
      "pod's requests",
      model->metadata.name, fmt::join(sizes, " and "));
  r.node = model->metadata.name;
  r.nodes.push_back(std::move(added));
  return r;
}

}  // namespace

RemedyProposal ProposeFitRemedies(const ClusterListers& cluster, const Pod& pod,
                                  std::span<const RejectedNode> rejected, size_t max_per_group,
                                  const RequestsOf& requests_of) {
  RemedyProposal proposal;
  const Resource want = requests_of(pod);
  const std::vector<Ptr<Node>> nodes = cluster.ListNodes();
  const std::vector<std::string> beyond = Beyond(nodes, want);
  for (const std::string& r : beyond) proposal.notes.push_back(SizeNote(nodes, want, r));
  if (rejected.empty()) return proposal;

  std::map<std::string, std::vector<PodPtr>> pods_on;
  for (const RejectedNode& r : rejected) pods_on[r.node->metadata.name];
  for (PodPtr& p : cluster.ListPods())
    if (auto it = pods_on.find(p->spec.node_name); it != pods_on.end())
      it->second.push_back(std::move(p));
  std::vector<Shortfall> shortfalls;
  for (const RejectedNode& r : rejected) {
    std::vector<PodPtr>& pods = pods_on[r.node->metadata.name];
    std::sort(pods.begin(), pods.end(),
              [](const PodPtr& a, const PodPtr& b) { return a->Key() < b->Key(); });
    Shortfall sf = ShortfallOn(*r.node, pods, want, requests_of);
    // Freeing a node the pod alone exceeds would not place it: nothing to ask there.
    if (!sf.too_small && !sf.lack.empty()) shortfalls.push_back(std::move(sf));
  }
  std::stable_sort(shortfalls.begin(), shortfalls.end(),
                   [](const Shortfall& x, const Shortfall& y) { return x.cost < y.cost; });
  size_t proposed = 0;
  for (const Shortfall& sf : shortfalls) {
    if (proposed >= max_per_group) break;
    if (auto r = Freeing(pod, sf, requests_of)) {
      proposal.remedies.push_back(std::move(*r));
      ++proposed;
    }
  }
  if (!beyond.empty())
    if (auto r = LargerNode(nodes, want, beyond)) proposal.remedies.push_back(std::move(*r));
  return proposal;
}

}  // namespace berth::noderesources
