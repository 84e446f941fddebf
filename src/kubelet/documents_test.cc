#include "kubelet/documents.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;

TEST(KubeletDocumentsTest, NodeKeepsWhatTheKubeletReadsOnly) {
  const Json node = Json::parse(R"({
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "n", "uid": "u", "labels": {"zone": "a"}},
    "spec": {"podCIDR": "10.64.0.0/24", "taints": [{"key": "k", "effect": "NoSchedule"}]},
    "status": {
      "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
      "capacity": {"cpu": "8"}, "allocatable": {"cpu": "7"},
      "conditions": [{"type": "MemoryPressure", "status": "False"},
                     {"type": "Ready", "status": "True", "lastTransitionTime": "t"}],
      "nodeInfo": {"kubeletVersion": "v1.32.0", "osImage": "Debian"},
      "images": [{"names": ["nginx"], "sizeBytes": 1}],
      "declaredFeatures": ["A"]}})");
  const Json kept = *KubeletNodeDocument(node);
  EXPECT_EQ(kept, Json::parse(R"({
    "spec": {"podCIDR": "10.64.0.0/24"},
    "status": {
      "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
      "capacity": {"cpu": "8"}, "allocatable": {"cpu": "7"},
      "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "t"}],
      "nodeInfo": {"kubeletVersion": "v1.32.0"},
      "images": [{"names": ["nginx"], "sizeBytes": 1}],
      "declaredFeatures": ["A"]}})"));
  EXPECT_EQ(*KubeletNodeDocument(Json::parse(R"({"kind": "Node"})")), Json::object());
}

TEST(KubeletDocumentsTest, PodKeepsWhatTheKubeletReadsOnly) {
  const Json pod = Json::parse(R"({
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "d"},
    "spec": {"nodeName": "n", "restartPolicy": "Never",
             "containers": [{"name": "c", "image": "nginx"}],
             "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
    "status": {"phase": "Running", "podIP": "10.64.0.2", "hostIP": "172.18.0.2",
               "conditions": [{"type": "Ready", "status": "True"}],
               "containerStatuses": [{"name": "c", "restartCount": 1}],
               "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}],
               "extendedResourceClaimStatus": {"resourceClaimName": "x"}}})");
  EXPECT_EQ(*KubeletPodDocument(pod), Json::parse(R"({
    "spec": {"restartPolicy": "Never",
             "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "t"}]},
    "status": {"podIP": "10.64.0.2", "hostIP": "172.18.0.2",
               "containerStatuses": [{"name": "c", "restartCount": 1}],
               "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "p-gpu"}],
               "extendedResourceClaimStatus": {"resourceClaimName": "x"}}})"));
}

}  // namespace
}  // namespace berth::kubelet
