#include "berth/framework/node_info.h"

#include <algorithm>

#include "api/label_keys.h"
#include "framework/snapshot_editor.h"
#include "framework/zone_key.h"

namespace berth {
namespace {

bool HasPodAffinityConstraints(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a && (a->pod_affinity || a->pod_anti_affinity);
}

bool HasRequiredAntiAffinity(const Pod& pod) {
  const auto& a = pod.spec.affinity;
  return a && a->pod_anti_affinity && !a->pod_anti_affinity->required.empty();
}

template <class F>
void ForEachClaim(const Pod& pod, F&& f) {
  for (const auto& v : pod.spec.volumes) {
    if (v.persistent_volume_claim) {
      f(pod.metadata.namespace_ + "/" + v.persistent_volume_claim->claim_name);
    } else if (v.ephemeral) {
      f(pod.metadata.namespace_ + "/" + pod.metadata.name + "-" + v.name);
    }
  }
}

bool SamePod(const Pod& a, const Pod& b) {
  if (!a.metadata.uid.empty() || !b.metadata.uid.empty()) return a.metadata.uid == b.metadata.uid;
  return a.metadata.name == b.metadata.name && a.metadata.namespace_ == b.metadata.namespace_;
}

void Erase(std::vector<PodInfoPtr>& v, const Pod& pod) {
  for (size_t i = 0; i < v.size(); ++i) {
    if (SamePod(*v[i]->pod, pod)) {
      // Order of pods on a node is not observable; swap-remove keeps this O(1).
      v[i] = std::move(v.back());
      v.pop_back();
      return;
    }
  }
}

}  // namespace

std::string NodeZoneKey(const Node& node) {
  const auto& l = node.metadata.labels;
  // The deprecated beta labels win when both are present, as in kube-scheduler.
  auto get = [&](std::string_view beta, std::string_view ga) -> std::string {
    if (auto it = l.find(beta); it != l.end()) return it->second;
    if (auto it = l.find(ga); it != l.end()) return it->second;
    return "";
  };
  std::string region =
      get("failure-domain.beta.kubernetes.io/region", "topology.kubernetes.io/region");
  std::string zone = get("failure-domain.beta.kubernetes.io/zone", "topology.kubernetes.io/zone");
  if (region.empty() && zone.empty()) return "";
  // A NUL separator keeps "a:" + "b" apart from "a" + ":b".
  return region + std::string(":\0:", 3) + zone;
}

bool AffinityTerm::Matches(const Pod& pod, const Labels* ns_labels) const {
  if (namespaces.count(pod.metadata.namespace_) ||
      (ns_labels && namespace_selector.Matches(*ns_labels))) {
    return selector.Matches(pod.metadata.labels);
  }
  return false;
}

AffinityTerm MakeAffinityTerm(const Pod& pod, const PodAffinityTerm& term) {
  AffinityTerm t;
  t.selector = CompiledSelector::FromOptional(term.label_selector);
  // matchLabelKeys / mismatchLabelKeys: what the API server would have merged into the selector
  // when it admitted the pod, unless it did (label_keys.h); an absent selector stays "nothing".
  for (auto& req : PendingLabelKeyRequirements(term, pod.metadata.labels)) {
    if (req.op == "In") {
      t.selector.AddIn(std::move(req.key), std::move(req.values[0]));
    } else {
      t.selector.AddNotIn(std::move(req.key), std::move(req.values[0]));
    }
  }
  if (term.namespaces.empty() && !term.namespace_selector) {
    t.namespaces.insert(pod.metadata.namespace_);
  } else {
    t.namespaces.insert(term.namespaces.begin(), term.namespaces.end());
  }
  t.namespace_selector = CompiledSelector::FromOptional(term.namespace_selector);
  t.topology_key = term.topology_key;
  return t;
}

namespace {
const PodAffinityTerms kNoAffinityTerms;
}  // namespace

const std::vector<AffinityTerm>& PodInfo::required_affinity() const {
  return (affinity_terms ? *affinity_terms : kNoAffinityTerms).required_affinity;
}
const std::vector<AffinityTerm>& PodInfo::required_anti_affinity() const {
  return (affinity_terms ? *affinity_terms : kNoAffinityTerms).required_anti_affinity;
}
const std::vector<WeightedAffinityTerm>& PodInfo::preferred_affinity() const {
  return (affinity_terms ? *affinity_terms : kNoAffinityTerms).preferred_affinity;
}
const std::vector<WeightedAffinityTerm>& PodInfo::preferred_anti_affinity() const {
  return (affinity_terms ? *affinity_terms : kNoAffinityTerms).preferred_anti_affinity;
}

PodInfoPtr PodInfo::Create(std::shared_ptr<const Pod> pod) {
  auto info = std::make_shared<PodInfo>();
  info->requests = ComputePodRequests(*pod);
  const auto& a = pod->spec.affinity;
  if (a && (a->pod_affinity || a->pod_anti_affinity)) {
    PodAffinityTerms& terms = info->affinity_terms.emplace();
    if (a->pod_affinity) {
      for (const auto& t : a->pod_affinity->required)
        terms.required_affinity.push_back(MakeAffinityTerm(*pod, t));
      for (const auto& w : a->pod_affinity->preferred)
        terms.preferred_affinity.push_back({MakeAffinityTerm(*pod, w.term), w.weight});
    }
    if (a->pod_anti_affinity) {
      for (const auto& t : a->pod_anti_affinity->required)
        terms.required_anti_affinity.push_back(MakeAffinityTerm(*pod, t));
      for (const auto& w : a->pod_anti_affinity->preferred)
        terms.preferred_anti_affinity.push_back({MakeAffinityTerm(*pod, w.term), w.weight});
    }
  }
  info->pod = std::move(pod);
  return info;
}

// ---------------------------------------------------------------- HostPortInfo

namespace {
constexpr std::string_view kDefaultBindAllHostIP = "0.0.0.0";
std::string_view SanitizeIP(std::string_view ip) { return ip.empty() ? kDefaultBindAllHostIP : ip; }
std::string_view SanitizeProtocol(std::string_view p) { return p.empty() ? "TCP" : p; }
}  // namespace

void HostPortInfo::Add(std::string_view ip, std::string_view protocol, int32_t port) {
  if (port <= 0) return;
  ip = SanitizeIP(ip);
  protocol = SanitizeProtocol(protocol);
  for (auto& e : entries_) {
    if (e.port == port && e.ip == ip && e.protocol == protocol) {
      ++e.count;
      return;
    }
  }
  entries_.push_back({std::string(ip), std::string(protocol), port, 1});
}

void HostPortInfo::Remove(std::string_view ip, std::string_view protocol, int32_t port) {
  if (port <= 0) return;
  ip = SanitizeIP(ip);
  protocol = SanitizeProtocol(protocol);
  for (size_t i = 0; i < entries_.size(); ++i) {
    auto& e = entries_[i];
    if (e.port == port && e.ip == ip && e.protocol == protocol) {
      if (--e.count == 0) entries_.erase(entries_.begin() + static_cast<long>(i));
      return;
    }
  }
}

bool HostPortInfo::CheckConflict(std::string_view ip, std::string_view protocol,
                                 int32_t port) const {
  if (port <= 0) return false;
  ip = SanitizeIP(ip);
  protocol = SanitizeProtocol(protocol);
  for (const auto& e : entries_) {
    if (e.port != port || e.protocol != protocol) continue;
    // 0.0.0.0 binds every address, so it conflicts with any address on the same port.
    if (ip == kDefaultBindAllHostIP || e.ip == kDefaultBindAllHostIP || e.ip == ip) return true;
  }
  return false;
}

size_t HostPortInfo::size() const { return entries_.size(); }

// ---------------------------------------------------------------- NodeInfo

const std::string& NodeInfo::name() const {
  static const std::string kEmpty;
  return node_ ? node_->metadata.name : kEmpty;
}

const NodeInfo::Extras NodeInfo::kNoExtras;

void NodeInfo::SetNode(std::shared_ptr<const Node> node) {
  node_ = std::move(node);
  allocatable_ = node_ ? Resource::FromList(node_->status.allocatable) : Resource{};
  ++generation_;
}

void NodeInfo::AddPod(PodInfoPtr pod) {
  Update(*pod, +1);
  if (HasPodAffinityConstraints(*pod->pod)) MutableExtra().pods_with_affinity.push_back(pod);
  if (HasRequiredAntiAffinity(*pod->pod)) {
    MutableExtra().pods_with_required_anti_affinity.push_back(pod);
  }
  pods_.push_back(std::move(pod));
}

bool NodeInfo::RemovePod(const Pod& pod) {
  for (size_t i = 0; i < pods_.size(); ++i) {
    if (!SamePod(*pods_[i]->pod, pod)) continue;
    PodInfoPtr removed = pods_[i];
    pods_[i] = std::move(pods_.back());
    pods_.pop_back();
    if (extras_) {
      Erase(extras_->pods_with_affinity, pod);
      Erase(extras_->pods_with_required_anti_affinity, pod);
    }
    Update(*removed, -1);
    return true;
  }
  return false;
}

void NodeInfo::Update(const PodInfo& info, int sign) {
  const Pod& pod = *info.pod;
  if (sign > 0) {
    requested_.Add(info.requests.requests);
    non_zero_requested_.Add(info.requests.non_zero_requests);
  } else {
    requested_.Subtract(info.requests.requests);
    non_zero_requested_.Subtract(info.requests.non_zero_requests);
  }
  // Ports of app containers and of sidecars (restartable init containers), which keep running;
  // plain init containers have exited before the app starts.
  auto ports = [&](const auto& cs, bool sidecars_only) {
    for (const auto& c : cs) {
      if (sidecars_only && c.restart_policy != "Always") continue;
      for (const auto& p : c.ports) {
        if (sign > 0) {
          MutableExtra().used_ports.Add(p.host_ip, p.protocol, p.host_port);
        } else if (extras_) {
          extras_->used_ports.Remove(p.host_ip, p.protocol, p.host_port);
        }
      }
    }
  };
  ports(pod.spec.containers, false);
  ports(pod.spec.init_containers, true);
  ForEachClaim(pod, [&](std::string key) {
    if (sign < 0 && !extras_) return;
    auto& counts = MutableExtra().pvc_ref_counts;
    int& c = counts[key];
    c += sign;
    if (c <= 0) counts.erase(key);
  });
  ++generation_;
}

// ---------------------------------------------------------------- Snapshot

const NodeInfo* Snapshot::Get(std::string_view node_name) const {
  auto it = map_.find(std::string(node_name));
  return it == map_.end() ? nullptr : it->second.get();
}

namespace {

// The node list in `order` (names, or nodes), skipping what the map has no node for.
template <class Order, class NameOf>
void FillNodeList(const std::unordered_map<std::string, NodeInfoPtr>& map, const Order& order,
                  NameOf name_of, std::vector<const NodeInfo*>& list) {
  list.clear();
  list.reserve(order.size());
  for (const auto& entry : order) {
    auto it = map.find(name_of(entry));
    if (it == map.end() || !it->second->node()) continue;
    SnapshotEditor::SetListIndex(*it->second, static_cast<int32_t>(list.size()));
    list.push_back(it->second.get());
  }
}

}  // namespace

void Snapshot::RebuildLists(const std::vector<std::string>& order) {
  FillNodeList(
      map_, order, [](const std::string& name) -> const std::string& { return name; }, list_);
  RefreshDerivedLists();
}

void SnapshotEditor::RebuildLists(Snapshot& s, const std::vector<const Node*>& order) {
  FillNodeList(
      s.map_, order, [](const Node* n) -> const std::string& { return n->metadata.name; }, s.list_);
  s.RefreshDerivedLists();
}

void Snapshot::RefreshDerivedLists() {
  with_affinity_.clear();
  with_required_anti_affinity_.clear();
  used_pvcs_.clear();
  for (const NodeInfo* ni : list_) {
    if (!ni->pods_with_affinity().empty()) with_affinity_.push_back(ni);
    if (!ni->pods_with_required_anti_affinity().empty()) with_required_anti_affinity_.push_back(ni);
    for (const auto& [key, count] : ni->pvc_ref_counts()) used_pvcs_.insert(key);
  }
}

void SnapshotEditor::SetImageStates(NodeInfo& n, const Node& node) {
  std::vector<std::pair<std::string, ImageStateSummary>> states;
  for (const auto& img : node.status.images)
    for (const auto& name : img.names) states.emplace_back(name, ImageStateSummary{img.size_bytes});
  n.image_states_.AssignUnsorted(std::move(states));
}

Snapshot Snapshot::Build(const std::vector<std::shared_ptr<const Node>>& nodes,
                         const std::vector<std::shared_ptr<const Pod>>& pods) {
  Snapshot s;
  std::vector<const Node*> raw;
  for (const auto& n : nodes) {
    s.map_[n->metadata.name] = std::make_shared<NodeInfo>(n);
    raw.push_back(n.get());
  }
  for (const auto& p : pods) {
    auto it = s.map_.find(p->spec.node_name);
    if (it != s.map_.end()) it->second->AddPod(PodInfo::Create(p));
  }
  // Image spread: how many nodes hold each image.
  std::unordered_map<std::string, int> holders;
  for (const auto& n : nodes) {
    std::unordered_set<std::string> names;  // a node counts once per image name
    for (const auto& img : n->status.images)
      for (const auto& name : img.names) names.insert(name);
    for (const auto& name : names) ++holders[name];
  }
  for (const auto& n : nodes) {
    SnapshotEditor::SetImageStates(*s.map_[n->metadata.name], *n);
  }
  s.image_num_nodes = std::move(holders);
  SnapshotEditor::RebuildLists(s, ZoneInterleavedNodes(raw));
  return s;
}

std::vector<std::string> ZoneInterleavedOrder(const std::vector<const Node*>& nodes) {
  std::vector<std::string> out;
  out.reserve(nodes.size());
  for (const Node* n : ZoneInterleavedNodes(nodes)) out.push_back(n->metadata.name);
  return out;
}

std::vector<const Node*> ZoneInterleavedNodes(const std::vector<const Node*>& nodes) {
  std::vector<std::vector<const Node*>> zones;  // in first-seen order
  std::unordered_map<std::string, size_t> zone_index;
  for (const Node* n : nodes) {
    auto [it, inserted] = zone_index.try_emplace(NodeZoneKey(*n), zones.size());
    if (inserted) zones.emplace_back();
    zones[it->second].push_back(n);
  }
  std::vector<const Node*> out;
  out.reserve(nodes.size());
  for (size_t round = 0; out.size() < nodes.size(); ++round) {
    for (const auto& zone : zones)
      if (round < zone.size()) out.push_back(zone[round]);
  }
  return out;
}

std::string NormalizeImageName(std::string_view name) {
  std::string s(name);
  // A tag is a ':' after the last '/'; digests ('@') also count as explicit.
  auto slash = s.rfind('/');
  auto colon = s.rfind(':');
  bool has_tag = colon != std::string::npos && (slash == std::string::npos || colon > slash);
  if (!has_tag && s.find('@') == std::string::npos) s += ":latest";
  return s;
}

}  // namespace berth
