// berth simulate reads the CSI objects of the cluster's manifests. CSIDriver: with
// VolumeLimitScaling (on by default) a pod whose volume's driver opts in with
// preventPodSchedulingIfMissing goes only to nodes whose CSINode registers the driver.
// VolumeAttachment: a volume attached to a node that no pod there uses takes one of the node's
// CSI volume slots.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/codec.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"

namespace berth::sim {
namespace {

// A PersistentVolume of hostpath.csi.k8s.io bound to claim `data`, and a pod that mounts it.
constexpr const char* kBoundVolumeAndPod = R"(
apiVersion: v1
kind: PersistentVolume
metadata: {name: pv1}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: hostpath.csi.k8s.io, volumeHandle: vol-1}
  claimRef: {namespace: default, name: data}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
  namespace: default
  annotations: {pv.kubernetes.io/bind-completed: "yes"}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
  volumeName: pv1
  storageClassName: ""
status: {phase: Bound}
---
apiVersion: v1
kind: Pod
metadata: {name: app, namespace: default}
spec:
  containers: [{name: c, image: busybox, resources: {requests: {cpu: 100m}}}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
)";

PodResult SimulateOne(const std::string& manifests, const std::string& gates) {
  config::FeatureGates fg;
  std::vector<std::string> warnings;
  EXPECT_TRUE(fg.Set(gates, &warnings).ok());
  Registry registry = InTreeRegistry(fg);
  auto config = config::DefaultConfiguration(registry);
  auto objects = DecodeObjects(manifests, "cluster.yaml");
  EXPECT_TRUE(objects.ok()) << (objects.ok() ? "" : objects.error().message);
  SimulationOptions options;
  options.max_attempts = 1;
  auto sim = Simulate(config, registry, *objects, options);
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().message);
  EXPECT_EQ(sim->results.size(), 1u);
  return sim->results.at(0);
}

// n1 registers hostpath.csi.k8s.io in its CSINode, n2 has no CSINode; n2 has more room, so
// with the check off the pod would prefer it.
std::string DriverManifests(bool prevent) {
  return R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "32", memory: 64Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: hostpath.csi.k8s.io, nodeID: n1}]}
---
apiVersion: storage.k8s.io/v1
kind: CSIDriver
metadata: {name: hostpath.csi.k8s.io}
spec: {preventPodSchedulingIfMissing: )" +
         std::string(prevent ? "true" : "false") + R"(}
---
)" + kBoundVolumeAndPod;
}

PodResult SimulateWith(bool prevent, const std::string& gates) {
  return SimulateOne(DriverManifests(prevent), gates);
}

TEST(SimulateCSIDriver, PodGoesOnlyWhereTheOptedInDriverIsRegistered) {
  PodResult r = SimulateWith(true, "");
  EXPECT_EQ(r.result, "Scheduled") << r.message;
  EXPECT_EQ(r.node, "n1");
}

TEST(SimulateCSIDriver, WithoutOptInOrWithTheGateOffNodesWithoutTheDriverCount) {
  PodResult off = SimulateWith(true, "VolumeLimitScaling=false");
  EXPECT_EQ(off.result, "Scheduled") << off.message;
  EXPECT_EQ(off.node, "n2");
  PodResult no_opt_in = SimulateWith(false, "");
  EXPECT_EQ(no_opt_in.result, "Scheduled") << no_opt_in.message;
  EXPECT_EQ(no_opt_in.node, "n2");
}

// n1 and n2 both allow one volume of hostpath.csi.k8s.io; n1 has more room, so without
// attachments the pod goes there. With `attached`, old-vol is still attached to n1.
std::string AttachmentManifests(bool attached) {
  std::string m = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "32", memory: 64Gi, pods: "10"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "10"}}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n1}
spec: {drivers: [{name: hostpath.csi.k8s.io, nodeID: n1, allocatable: {count: 1}}]}
---
apiVersion: storage.k8s.io/v1
kind: CSINode
metadata: {name: n2}
spec: {drivers: [{name: hostpath.csi.k8s.io, nodeID: n2, allocatable: {count: 1}}]}
---
apiVersion: v1
kind: PersistentVolume
metadata: {name: old-vol}
spec:
  capacity: {storage: 1Gi}
  accessModes: [ReadWriteOnce]
  csi: {driver: hostpath.csi.k8s.io, volumeHandle: vol-old}
---
)" + std::string(kBoundVolumeAndPod);
  if (attached) {
    m += R"(---
apiVersion: storage.k8s.io/v1
kind: VolumeAttachment
metadata: {name: csi-old}
spec:
  attacher: hostpath.csi.k8s.io
  nodeName: n1
  source: {persistentVolumeName: old-vol}
status: {attached: true}
)";
  }
  return m;
}

PodResult SimulateAttached(bool attached) { return SimulateOne(AttachmentManifests(attached), ""); }

TEST(SimulateVolumeAttachment, AnAttachedVolumeTakesTheNodesSlot) {
  PodResult free = SimulateAttached(false);
  EXPECT_EQ(free.result, "Scheduled") << free.message;
  EXPECT_EQ(free.node, "n1");
  PodResult taken = SimulateAttached(true);
  EXPECT_EQ(taken.result, "Scheduled") << taken.message;
  EXPECT_EQ(taken.node, "n2");
}

}  // namespace
}  // namespace berth::sim
