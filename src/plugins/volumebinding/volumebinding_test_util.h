// Builders of claims, volumes and classes, and a cluster with the plugin, for VolumeBinding's
// tests (its cases follow kube-scheduler's volume_binding_test.go).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/volumebinding/volumebinding.h"
#include "testing/builders.h"

namespace berth::volumebinding {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakePod;
using berth::testing::Q;

inline constexpr const char* kHostname = "kubernetes.io/hostname";

inline std::shared_ptr<StorageClass> Class(std::string name, std::optional<std::string> mode,
                                           std::string provisioner = "") {
  auto sc = std::make_shared<StorageClass>();
  sc->metadata.name = std::move(name);
  sc->volume_binding_mode = std::move(mode);
  sc->provisioner = std::move(provisioner);
  return sc;
}

inline const Ptr<StorageClass> kImmediateSC = Class("immediate-sc", "Immediate");
inline const Ptr<StorageClass> kWaitSC = Class("wait-sc", "WaitForFirstConsumer");
inline const Ptr<StorageClass> kWaitHddSC = Class("wait-hdd-sc", "WaitForFirstConsumer");

class PVCBuilder {
 public:
  PVCBuilder(std::string name, std::string class_name) {
    pvc_.metadata.name = std::move(name);
    pvc_.metadata.namespace_ = "default";
    pvc_.metadata.uid = "uid-" + pvc_.metadata.name;
    pvc_.spec.storage_class_name = std::move(class_name);
    pvc_.status.phase = "Pending";
  }
  PVCBuilder& BoundPV(std::string pv) {
    pvc_.spec.volume_name = std::move(pv);
    pvc_.metadata.annotations["pv.kubernetes.io/bind-completed"] = "yes";
    pvc_.status.phase = "Bound";
    return *this;
  }
  PVCBuilder& PreBound(std::string pv) {
    pvc_.spec.volume_name = std::move(pv);
    return *this;
  }
  PVCBuilder& Phase(std::string p) {
    pvc_.status.phase = std::move(p);
    return *this;
  }
  PVCBuilder& Request(const std::string& q) {
    pvc_.spec.requests["storage"] = Q(q);
    return *this;
  }
  PVCBuilder& AccessModes(std::vector<std::string> modes) {
    pvc_.spec.access_modes = std::move(modes);
    return *this;
  }
  PVCBuilder& VolumeMode(std::string m) {
    pvc_.spec.volume_mode = std::move(m);
    return *this;
  }
  PVCBuilder& Selector(LabelSelector s) {
    pvc_.spec.selector = std::move(s);
    return *this;
  }
  PVCBuilder& SelectedNode(std::string node) {
    pvc_.metadata.annotations["volume.kubernetes.io/selected-node"] = std::move(node);
    return *this;
  }
  Ptr<PersistentVolumeClaim> Obj() const { return std::make_shared<PersistentVolumeClaim>(pvc_); }

 private:
  PersistentVolumeClaim pvc_;
};

class PVBuilder {
 public:
  PVBuilder(std::string name, std::string class_name) {
    pv_.metadata.name = std::move(name);
    pv_.spec.storage_class_name = std::move(class_name);
    pv_.spec.capacity["storage"] = Q("1Gi");
    pv_.status.phase = "Available";
  }
  PVBuilder& Phase(std::string p) {
    pv_.status.phase = std::move(p);
    return *this;
  }
  PVBuilder& Capacity(const std::string& q) {
    pv_.spec.capacity["storage"] = Q(q);
    return *this;
  }
  PVBuilder& NodeAffinity(std::string key, std::vector<std::string> values) {
    NodeSelectorTerm term;
    term.match_expressions.push_back({std::move(key), "In", std::move(values)});
    pv_.spec.node_affinity = NodeSelector{{term}};
    return *this;
  }
  PVBuilder& AccessModes(std::vector<std::string> modes) {
    pv_.spec.access_modes = std::move(modes);
    return *this;
  }
  PVBuilder& VolumeMode(std::string m) {
    pv_.spec.volume_mode = std::move(m);
    return *this;
  }
  PVBuilder& Label(std::string k, std::string v) {
    pv_.metadata.labels[std::move(k)] = std::move(v);
    return *this;
  }
  PVBuilder& ClaimRef(std::string name) {
    pv_.spec.claim_ref = PersistentVolume::Spec::ClaimRef{"default", std::move(name), ""};
    return *this;
  }
  Ptr<PersistentVolume> Obj() const { return std::make_shared<PersistentVolume>(pv_); }

 private:
  PersistentVolume pv_;
};

inline PVCBuilder MakePVC(std::string name, std::string cls) {
  return PVCBuilder(std::move(name), cls);
}
inline PVBuilder MakePV(std::string name, std::string cls) {
  return PVBuilder(std::move(name), cls);
}

inline std::shared_ptr<const Node> NodeNamed(std::string name, Labels extra = {}) {
  auto b = MakeNode().Name(std::move(name));
  for (auto& [k, v] : extra) b.Label(k, v);
  return b.Obj();
}

// A cluster, the handle over it and the plugin.
struct Env {
  explicit Env(std::vector<std::shared_ptr<const Node>> nodes,
               std::vector<Ptr<PersistentVolumeClaim>> pvcs = {},
               std::vector<Ptr<PersistentVolume>> pvs = {},
               std::vector<Ptr<StorageClass>> classes = {kImmediateSC, kWaitSC, kWaitHddSC},
               std::vector<config::UtilizationShapePoint> shape = {})
      : handle(Snapshot::Build(nodes, {}), &cluster), plugin(handle, 600, shape) {
    for (const auto& n : nodes) cluster.AddNode(n);
    for (const auto& c : classes) cluster.AddStorageClass(c);
    for (const auto& pvc : pvcs) cluster.AddPVC(pvc);
    for (const auto& pv : pvs) cluster.AddPV(pv);
  }
  const NodeInfo& node(const std::string& name) { return *handle.snapshot().Get(name); }

  InMemoryCluster cluster;
  FakeHandle handle;
  VolumeBinding plugin;
};

inline std::shared_ptr<const Pod> PodWithClaims(std::string name, std::vector<std::string> claims) {
  auto b = MakePod().Name(std::move(name));
  for (auto& c : claims) b.PVC(c);
  return b.Obj();
}

inline Status Unresolvable(std::vector<std::string_view> reasons) {
  std::vector<std::string> r(reasons.begin(), reasons.end());
  return Status(Code::kUnschedulableAndUnresolvable, std::move(r));
}

}  // namespace berth::volumebinding
