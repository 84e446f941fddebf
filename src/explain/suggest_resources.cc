// Resources: what to free on a node by evicting or shrinking the pods there, never more than
// they request, shown only when evicting them places the pod; and when no node is large
// enough for the pod, a node like the largest one, with room for it.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "api/codec.h"
#include "berth/api/resources.h"
#include "config/plugin_names.h"
#include "explain/suggest.h"

namespace berth::explain {

namespace names = config::names;

std::string FormatAmount(std::string_view resource, int64_t v) {
  if (resource == "cpu") return v % 1000 == 0 ? fmt::format("{}", v / 1000) : fmt::format("{}m", v);
  if (resource == "memory" || resource == "ephemeral-storage") {
    constexpr int64_t kMi = 1024 * 1024;
    return fmt::format("{}Mi", (v + kMi - 1) / kMi);
  }
  return std::to_string(v);
}

namespace {

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
  std::string node;
  std::map<std::string, int64_t> lack;
  Resource used;
  int64_t cost = 0;
  bool too_small = false;
};

// Whether evicting the pod frees its room: not a static pod's mirror (the kubelet runs it
// whatever the API says) nor a DaemonSet's pod (recreated on the same node).
bool Evictable(const Pod& p) {
  if (p.metadata.annotations.count("kubernetes.io/config.mirror")) return false;
  return std::none_of(
      p.metadata.owner_references.begin(), p.metadata.owner_references.end(),
      [](const OwnerReference& ref) { return ref.controller && ref.kind == "DaemonSet"; });
}

std::vector<PodPtr> EvictablePodsOn(const Cluster& c, const std::string& node) {
  std::vector<PodPtr> pods = c.PodsOn(node);
  std::erase_if(pods, [](const PodPtr& p) { return !Evictable(*p); });
  return pods;
}

// `used` is what the evictable pods request: more than that cannot be freed.
Shortfall ShortfallOn(const Cluster& c, const Node& node, const Resource& want) {
  Shortfall s;
  s.node = node.metadata.name;
  for (const PodPtr& p : EvictablePodsOn(c, s.node)) s.used.Add(ComputePodRequests(*p).requests);
  Resource all;
  for (const PodPtr& p : c.PodsOn(s.node)) all.Add(ComputePodRequests(*p).requests);
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
std::vector<PodPtr> PodsToEvict(const Cluster& c, const Shortfall& s) {
  std::vector<PodPtr> pods = EvictablePodsOn(c, s.node);
  auto frees = [&](const PodPtr& p) {
    const Resource r = ComputePodRequests(*p).requests;
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
    const Resource r = ComputePodRequests(*p).requests;
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

void SuggestFreeing(Search& s, const Shortfall& shortfall) {
  const std::vector<PodPtr> evict = PodsToEvict(s.c, shortfall);
  if (evict.empty()) return;
  std::vector<std::string> freeing, requested;
  for (const auto& [r, lack] : shortfall.lack) {
    freeing.push_back(fmt::format("{} {}", FormatAmount(r, lack), r));
    requested.push_back(fmt::format("{} {}", FormatAmount(r, shortfall.used.Get(r)), r));
  }
  std::set<std::string> keys;
  bool preemptible = true;
  for (const PodPtr& p : evict) {
    keys.insert(p->Key());
    preemptible &= p->Priority() < s.c.pod->Priority();
  }
  Suggestion sug = MakeSuggestion(
      "resources",
      fmt::format("free {} on node {} (evict or shrink pods there; they request {})",
                  fmt::join(freeing, " and "), shortfall.node, fmt::join(requested, " and ")),
      "", shortfall.node, shortfall.cost);
  if (preemptible) {
    sug.victims.assign(keys.begin(), keys.end());
    sug.description += fmt::format("; lower-priority pods preemption would evict: {}",
                                   fmt::join(sug.victims, ", "));
  }
  // Checked as done: the pods gone from a copy of the cluster, the pod scheduled again.
  s.verifier.Check(std::move(sug), s.c.WithoutPods(keys));
}

// The node with the most allocatable of `resource`.
const Node* Largest(const Cluster& c, const std::string& resource) {
  const Node* best = nullptr;
  int64_t most = -1;
  for (const NodePtr& n : c.nodes)
    if (int64_t v = Resource::FromList(n->status.allocatable).Get(resource); v > most) {
      most = v;
      best = n.get();
    }
  return best;
}

// No node is large enough: a node like the largest, with the room the pod asks for, checked
// by adding it (without pods) to a copy of the cluster.
void SuggestLargerNode(Search& s, const Resource& want) {
  std::vector<std::string> beyond;
  for (const std::string& r : ResourceNames(want)) {
    const Node* largest = Largest(s.c, r);
    if (want.Get(r) > 0 &&
        (!largest || want.Get(r) > Resource::FromList(largest->status.allocatable).Get(r)))
      beyond.push_back(r);
  }
  if (beyond.empty()) return;
  const Node* model = Largest(s.c, beyond.front());
  if (!model) return;
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
  s.verifier.Check(MakeSuggestion("larger-node",
                                  fmt::format("add a node like {} with at least {} allocatable "
                                              "(no node is large enough), or lower the pod's "
                                              "requests",
                                              model->metadata.name, fmt::join(sizes, " and ")),
                                  "", model->metadata.name, 0),
                   s.c.WithAddedNode(added));
}

}  // namespace

void SuggestResources(Search& s) {
  if (s.RejectedBy(names::kNodeResourcesFit).empty()) return;
  const Resource want = ComputePodRequests(*s.c.pod).requests;
  std::vector<Shortfall> shortfalls;
  for (const std::string& node : s.RejectedBy(names::kNodeResourcesFit)) {
    Shortfall sf = ShortfallOn(s.c, *s.by_name[node], want);
    // Freeing a node the pod alone exceeds would not place it: nothing to ask there.
    if (!sf.too_small && !sf.lack.empty()) shortfalls.push_back(std::move(sf));
  }
  std::stable_sort(shortfalls.begin(), shortfalls.end(),
                   [](const Shortfall& x, const Shortfall& y) { return x.cost < y.cost; });
  for (const Shortfall& sf : shortfalls) {
    if (!s.TryMore("resources")) break;
    SuggestFreeing(s, sf);
  }
  SuggestLargerNode(s, want);
}

std::vector<std::string> NodeSizeNotes(const Cluster& c) {
  const Resource want = ComputePodRequests(*c.pod).requests;
  std::vector<std::string> notes;
  for (const std::string& r : ResourceNames(want)) {
    if (want.Get(r) <= 0) continue;
    const Node* largest = Largest(c, r);
    const int64_t most = largest ? Resource::FromList(largest->status.allocatable).Get(r) : 0;
    if (want.Get(r) <= most) continue;
    if (most <= 0) {
      notes.push_back(fmt::format(
          "no node is large enough: the pod requests {} {}, and no node has any allocatable",
          FormatAmount(r, want.Get(r)), r));
    } else {
      notes.push_back(fmt::format(
          "no node is large enough: the pod requests {} {}, and the most any node "
          "has allocatable is {} (node {})",
          FormatAmount(r, want.Get(r)), r, FormatAmount(r, most), largest->metadata.name));
    }
  }
  return notes;
}

}  // namespace berth::explain
