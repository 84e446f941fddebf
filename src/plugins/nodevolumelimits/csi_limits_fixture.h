// The fixture NodeVolumeLimits' tests share: claims, PVs, a StorageClass and the CSINode of
// one node, after kube-scheduler's CSILimits test fixture.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "framework/in_memory_cluster.h"
#include "testing/builders.h"

namespace berth::nodevolumelimits {

inline constexpr const char* kEbsDriver = "ebs.csi.aws.com";
inline constexpr const char* kGceDriver = "pd.csi.storage.gke.io";
inline constexpr const char* kEbsInTree = "kubernetes.io/aws-ebs";
inline constexpr const char* kHostPathInTree = "kubernetes.io/hostpath";
inline constexpr const char* kNodeName = "node-for-max-pd-test-1";

// kNoDriver: a CSINode that registers no driver.
enum class LimitSource { kNone, kCSINode, kCSINodeWithoutLimit, kNoDriver };

inline Ptr<PersistentVolumeClaim> Claim(std::string ns, std::string name, std::string volume,
                                        std::optional<std::string> sc) {
  auto pvc = std::make_shared<PersistentVolumeClaim>();
  pvc->metadata.namespace_ = std::move(ns);
  pvc->metadata.name = std::move(name);
  pvc->spec.volume_name = std::move(volume);
  pvc->spec.storage_class_name = std::move(sc);
  return pvc;
}

// The fixture of kube-scheduler's CSILimits tests: for each driver d, claims and PVs
// "csi-<d>-0..3" bound to each other (an EBS in-tree PV for kubernetes.io/aws-ebs, a PV without
// attachable source for kubernetes.io/hostpath), plus "csi-4" (unbound, class csi-sc),
// "csi-5" (unbound, no class) and "csi-6" (bound to a missing PV, class csi-sc). csi-sc
// provisions with the first driver.
inline void AddFixture(InMemoryCluster& cluster, const std::vector<std::string>& drivers) {
  for (const auto& d : drivers) {
    for (int j = 0; j < 4; ++j) {
      std::string name = "csi-" + d + "-" + std::to_string(j);
      auto pv = std::make_shared<PersistentVolume>();
      pv->metadata.name = name;
      if (d == kEbsInTree) {
        pv->spec.aws_volume_id = name;
      } else if (d != kHostPathInTree) {
        pv->spec.csi_driver = d;
        pv->spec.csi_volume_handle = name;
      }
      cluster.AddPV(pv);
      cluster.AddPVC(Claim("default", name, name, std::nullopt));
    }
  }
  cluster.AddPVC(Claim("default", "csi-4", "", "csi-sc"));
  cluster.AddPVC(Claim("default", "csi-5", "", std::nullopt));
  cluster.AddPVC(Claim("default", "csi-6", "missing-in-action", "csi-sc"));
  auto sc = std::make_shared<StorageClass>();
  sc->metadata.name = "csi-sc";
  sc->provisioner = drivers.front();
  cluster.AddStorageClass(sc);
}

inline void AddCSINode(InMemoryCluster& cluster, LimitSource source, int32_t limit,
                       const std::vector<std::string>& drivers) {
  if (source == LimitSource::kNone) return;
  auto csi = std::make_shared<CSINode>();
  csi->metadata.name = kNodeName;
  if (source == LimitSource::kNoDriver) return cluster.AddCSINode(csi);
  for (const auto& d : drivers) {
    CSINode::Driver driver;
    driver.name = d;
    driver.node_id = kNodeName;
    if (source == LimitSource::kCSINode) driver.allocatable_count = limit;
    csi->drivers.push_back(driver);
  }
  cluster.AddCSINode(csi);
}

inline std::shared_ptr<const Pod> PodWith(std::vector<std::string> claims) {
  static int counter = 0;
  auto b = berth::testing::MakePod().Name("pod-" + std::to_string(counter++)).Node(kNodeName);
  for (auto& c : claims) b.PVC(c);
  return b.Obj();
}

}  // namespace berth::nodevolumelimits
