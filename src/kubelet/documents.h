// What a simulated kubelet keeps of the nodes' and pods' documents its informers receive: the
// few fields it reads that the decoded Node and Pod lack, and nothing else. At 100,000 nodes
// and pods the whole documents would be most of berth up's memory.
//
// Every field the kubelets read from a document (node_work.cc, pod_work.cc, device_work.cc)
// must be listed here: anything else reads as absent.
#pragma once

#include <nlohmann/json_fwd.hpp>

#include "berth/api/objects.h"

namespace berth::kubelet {

// A node's status.addresses, capacity, allocatable, images and declaredFeatures, its Ready
// condition, nodeInfo.kubeletVersion and spec.podCIDR.
RawObject KubeletNodeDocument(const nlohmann::json& node);
// A pod's spec.restartPolicy and spec.resourceClaims, and its status.podIP, hostIP,
// containerStatuses, resourceClaimStatuses and extendedResourceClaimStatus.
RawObject KubeletPodDocument(const nlohmann::json& pod);

}  // namespace berth::kubelet
