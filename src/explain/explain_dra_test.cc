// Explain shows DynamicResources' own diagnosis under its rejections: a claim asking for more
// GPU memory than any device has, and a node whose only GPU another claim holds.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/codec.h"
#include "config/load.h"
#include "explain/explain.h"
#include "plugins/registry.h"

namespace berth::explain {
namespace {

using ::testing::ElementsAre;

const char* kObjects = R"(
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {capacity: {cpu: "4", memory: 8Gi, pods: "110"}, allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.example.com" && device.capacity["gpu.example.com"].memory.compareTo(quantity("1Gi")) >= 0'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpu}
spec:
  driver: gpu.example.com
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  nodeName: n1
  devices:
  - name: gpu-0
    capacity: {memory: {value: 16Gi}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: taken, namespace: default, uid: uid-taken}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.example.com, pool: n1, device: gpu-0}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: big, namespace: default, uid: uid-big}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu
        selectors:
        - cel: {expression: 'device.capacity["gpu.example.com"].memory.compareTo(quantity("32Gi")) >= 0'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: one, namespace: default, uid: uid-one}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: web, namespace: default, uid: uid-web}
spec:
  containers: [{name: c, image: x}]
  resourceClaims:
  - {name: big, resourceClaimName: big}
  - {name: one, resourceClaimName: one}
)";

TEST(ExplainDraTest, DiagnosisNamesTheSelectorAndTheClaimHoldingTheGpu) {
  static const Registry registry = InTreeRegistry();
  static const auto config = config::DefaultConfiguration(registry);
  auto objects = DecodeObjects(kObjects, "test");
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  auto e = Explain(config, registry, *objects, "default/web", {});
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ(e->result, "Unschedulable");
  ASSERT_EQ(e->diagnoses.size(), 1u);
  EXPECT_EQ(e->diagnoses[0].node, "n1");
  EXPECT_EQ(e->diagnoses[0].plugin, "DynamicResources");
  EXPECT_THAT(e->diagnoses[0].lines,
              ElementsAre("claim default/big, request gpu: 1 device matches DeviceClass gpu, none "
                          "of them the request's selectors",
                          "claim default/one, request gpu: wants 1 device, 0 free; allocated: "
                          "gpu.example.com/n1/gpu-0 (claim default/taken)"));
  EXPECT_THAT(ToText(*e), ::testing::HasSubstr("n1 (DynamicResources):"));
  EXPECT_EQ(ToJson(*e)["diagnoses"][0]["plugin"], "DynamicResources");
}

}  // namespace
}  // namespace berth::explain
