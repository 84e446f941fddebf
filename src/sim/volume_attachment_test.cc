// berth simulate reads VolumeAttachment objects from the cluster's manifests: a volume attached
// to a node that no pod there uses takes one of the node's CSI volume slots.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/codec.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"

namespace berth::sim {
namespace {

// n1 and n2 both allow one volume of hostpath.csi.k8s.io; n1 has more room, so without
// attachments the pod goes there. With `attached`, old-vol is still attached to n1.
std::string Manifests(bool attached) {
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

PodResult SimulateWith(bool attached) {
  config::FeatureGates fg;
  Registry registry = InTreeRegistry(fg);
  auto config = config::DefaultConfiguration(registry);
  auto objects = DecodeObjects(Manifests(attached), "cluster.yaml");
  EXPECT_TRUE(objects.ok()) << (objects.ok() ? "" : objects.error().message);
  SimulationOptions options;
  options.max_attempts = 1;
  auto sim = Simulate(config, registry, *objects, options);
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().message);
  EXPECT_EQ(sim->results.size(), 1u);
  return sim->results.at(0);
}

TEST(SimulateVolumeAttachment, AnAttachedVolumeTakesTheNodesSlot) {
  PodResult free = SimulateWith(false);
  EXPECT_EQ(free.result, "Scheduled") << free.message;
  EXPECT_EQ(free.node, "n1");
  PodResult taken = SimulateWith(true);
  EXPECT_EQ(taken.result, "Scheduled") << taken.message;
  EXPECT_EQ(taken.node, "n2");
}

}  // namespace
}  // namespace berth::sim
