// Pod and node builders for plugin unit tests, in-tree and out of tree:
//   MakePod().Name("p").Req({{"cpu", "100m"}}).Obj()
//   MakeNodeInfo(MakeNode().Name("n").Capacity({{"cpu", "4"}}).Obj(), {pod})
// Test code only, on the test's thread; builders are plain values (copy them freely). Needs no
// test framework. Q() and RL() take quantities that must parse ("100m", "1Gi"): a malformed one
// is a bug in the test and throws. Quantity::Parse and NodeInfo are defined in Berth itself, so
// a test using these builders links against Berth's libraries (in-tree) or the installed
// Berth::testing (out of tree); a plugin library gets them from the berth binary.
#pragma once

#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/quantity.h"
#include "berth/api/resource_claims.h"
#include "berth/export.h"
#include "berth/framework/node_info.h"

namespace berth::testing {

inline Quantity Q(const std::string& s) { return Quantity::Parse(s).value(); }

inline ResourceList RL(std::initializer_list<std::pair<const char*, const char*>> items) {
  ResourceList l;
  for (auto& [k, v] : items) l[k] = Q(v);
  return l;
}

class BERTH_EXPORT PodBuilder {
 public:
  PodBuilder() { pod_.metadata.namespace_ = "default"; }
  PodBuilder& Name(std::string n) {
    pod_.metadata.name = n;
    if (pod_.metadata.uid.empty()) pod_.metadata.uid = "uid-" + n;
    return *this;
  }
  PodBuilder& Namespace(std::string ns) {
    pod_.metadata.namespace_ = std::move(ns);
    return *this;
  }
  PodBuilder& UID(std::string u) {
    pod_.metadata.uid = std::move(u);
    return *this;
  }
  PodBuilder& Label(std::string k, std::string v) {
    pod_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& Node(std::string n) {
    pod_.spec.node_name = std::move(n);
    if (pod_.status.phase.empty()) pod_.status.phase = "Running";
    return *this;
  }
  PodBuilder& SchedulerName(std::string n) {
    pod_.spec.scheduler_name = std::move(n);
    return *this;
  }
  PodBuilder& Priority(int32_t p) {
    pod_.spec.priority = p;
    return *this;
  }
  PodBuilder& PreemptionPolicy(std::string p) {
    pod_.spec.preemption_policy = std::move(p);
    return *this;
  }
  PodBuilder& CreationTimestamp(UnixTime t) {
    pod_.metadata.creation_timestamp = t;
    return *this;
  }
  PodBuilder& StartTime(UnixTime t) {
    pod_.status.start_time = t;
    return *this;
  }
  PodBuilder& Terminating(UnixTime t = 1) {
    pod_.metadata.deletion_timestamp = t;
    return *this;
  }
  PodBuilder& NominatedNodeName(std::string n) {
    pod_.status.nominated_node_name = std::move(n);
    return *this;
  }
  // Adds a container with the given requests (empty list: no requests).
  PodBuilder& Req(std::initializer_list<std::pair<const char*, const char*>> requests,
                  std::string image = "") {
    berth::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.image = std::move(image);
    c.resources.requests = RL(requests);
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& InitReq(std::initializer_list<std::pair<const char*, const char*>> requests,
                      bool sidecar = false) {
    berth::Container c;
    c.name = "i" + std::to_string(pod_.spec.init_containers.size());
    c.resources.requests = RL(requests);
    if (sidecar) c.restart_policy = "Always";
    pod_.spec.init_containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& Container(berth::Container c) {
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& Image(std::string image) {
    berth::Container c;
    c.name = "c" + std::to_string(pod_.spec.containers.size());
    c.image = std::move(image);
    pod_.spec.containers.push_back(std::move(c));
    return *this;
  }
  PodBuilder& Overhead(std::initializer_list<std::pair<const char*, const char*>> o) {
    pod_.spec.overhead = RL(o);
    return *this;
  }
  PodBuilder& HostPort(int32_t port, std::string protocol = "TCP", std::string ip = "") {
    if (pod_.spec.containers.empty()) Req({});
    ContainerPort p;
    p.container_port = port;
    p.host_port = port;
    p.protocol = std::move(protocol);
    p.host_ip = std::move(ip);
    pod_.spec.containers.back().ports.push_back(std::move(p));
    return *this;
  }
  PodBuilder& NodeSelector(std::string k, std::string v) {
    pod_.spec.node_selector[std::move(k)] = std::move(v);
    return *this;
  }
  PodBuilder& Toleration(berth::Toleration t) {
    pod_.spec.tolerations.push_back(std::move(t));
    return *this;
  }
  PodBuilder& Affinity(berth::Affinity a) {
    pod_.spec.affinity = std::move(a);
    return *this;
  }
  PodBuilder& Spread(berth::TopologySpreadConstraint c) {
    pod_.spec.topology_spread_constraints.push_back(std::move(c));
    return *this;
  }
  PodBuilder& Volume(berth::Volume v) {
    pod_.spec.volumes.push_back(std::move(v));
    return *this;
  }
  PodBuilder& PVC(std::string claim, bool read_only = false) {
    berth::Volume v;
    v.name = claim;
    v.persistent_volume_claim = berth::Volume::Pvc{claim, read_only};
    pod_.spec.volumes.push_back(std::move(v));
    return *this;
  }
  PodBuilder& SchedulingGate(std::string g) {
    pod_.spec.scheduling_gates.push_back(std::move(g));
    return *this;
  }
  // spec.schedulingGroup.podGroupName (the Workload API's PodGroup).
  PodBuilder& SchedulingGroup(std::string g) {
    pod_.spec.scheduling_group = std::move(g);
    return *this;
  }
  // spec.resourceClaims entries (kept in the pod's raw document, see resource_claims.h):
  // one naming a ResourceClaim, one naming a ResourceClaimTemplate.
  PodBuilder& Claim(std::string name, std::string claim_name) {
    return AddClaim({std::move(name), std::move(claim_name), std::nullopt});
  }
  PodBuilder& ClaimFromTemplate(std::string name, std::string template_name) {
    return AddClaim({std::move(name), std::nullopt, std::move(template_name)});
  }
  // status.resourceClaimStatuses: the claim generated for the pod's claim `name`.
  PodBuilder& ClaimStatus(std::string name, std::string claim_name) {
    auto statuses = PodResourceClaimStatusesOf(pod_);
    statuses.emplace_back(std::move(name), std::move(claim_name));
    SetPodResourceClaimStatuses(pod_, statuses);
    return *this;
  }
  Pod& mutable_pod() { return pod_; }
  std::shared_ptr<const Pod> Obj() const { return std::make_shared<const Pod>(pod_); }
  PodInfoPtr Info() const { return PodInfo::Create(Obj()); }

 private:
  PodBuilder& AddClaim(PodResourceClaim c) {
    auto claims = PodResourceClaimsOf(pod_);
    claims.push_back(std::move(c));
    SetPodResourceClaims(pod_, claims);
    return *this;
  }
  Pod pod_;
};

inline PodBuilder MakePod() { return PodBuilder(); }

class BERTH_EXPORT NodeBuilder {
 public:
  NodeBuilder& Name(std::string n) {
    node_.metadata.name = n;
    node_.metadata.labels["kubernetes.io/hostname"] = n;
    return *this;
  }
  NodeBuilder& Label(std::string k, std::string v) {
    node_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  NodeBuilder& Capacity(std::initializer_list<std::pair<const char*, const char*>> c) {
    node_.status.allocatable = RL(c);
    if (!node_.status.allocatable.count("pods")) node_.status.allocatable["pods"] = Q("110");
    node_.status.capacity = node_.status.allocatable;
    return *this;
  }
  NodeBuilder& Taint(std::string key, std::string value, std::string effect) {
    node_.spec.taints.push_back({std::move(key), std::move(value), std::move(effect)});
    return *this;
  }
  NodeBuilder& Unschedulable(bool u = true) {
    node_.spec.unschedulable = u;
    return *this;
  }
  NodeBuilder& Image(std::vector<std::string> names, int64_t size) {
    node_.status.images.push_back({std::move(names), size});
    return *this;
  }
  Node& mutable_node() { return node_; }
  std::shared_ptr<const Node> Obj() const { return std::make_shared<const Node>(node_); }

 private:
  Node node_;
};

inline NodeBuilder MakeNode() { return NodeBuilder(); }

// A NodeInfo holding `node` and `pods`.
inline NodeInfo MakeNodeInfo(std::shared_ptr<const Node> node,
                             const std::vector<std::shared_ptr<const Pod>>& pods = {}) {
  NodeInfo ni(std::move(node));
  for (const auto& p : pods) ni.AddPod(PodInfo::Create(p));
  return ni;
}

}  // namespace berth::testing
