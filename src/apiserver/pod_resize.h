// The `resize` subresource of pods (in-place resize): a write through it changes only the
// containers' `resources` and `resizePolicy`, and is checked with kube-apiserver's rules for a
// resize (QoS class kept, requests and limits never removed, memory limits not lowered unless
// the container restarts for it, no resize of pods with pod-level resources, static or Windows
// pods). The simulated kubelet then actuates the new resources.
//
// Threads: pure functions, any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// True for a write to pods/resize.
bool IsPodResize(const ResourceInfo& r, const std::string& subresource);

// The stored pod `current` with only what a resize may change taken from the written `next`:
// each container's resources and resizePolicy (matched by name), and those of restartable
// (sidecar) init containers. Containers added, removed or renamed in `next` are left for
// ValidatePodResize to refuse, as kube-apiserver does.
nlohmann::json ApplyPodResize(const nlohmann::json& current, const nlohmann::json& next);

// kube-apiserver's ValidatePodResize for `next` (from ApplyPodResize) against `current`: 422
// naming each field ("spec.containers[0].resources.requests: Forbidden: resource requests
// cannot be removed", "spec: Invalid value: \"Guaranteed\": Pod QOS Class may not change as a
// result of resizing", "spec: Forbidden: only cpu and memory resources are mutable", ...).
VoidResult ValidatePodResize(const ResourceInfo& r, const nlohmann::json& current,
                             const nlohmann::json& next);

// The QoS class of a pod spec (kube-apiserver's ComputePodQOS): Guaranteed, Burstable or
// BestEffort from the cpu and memory requests and limits of every container, or the pod-level
// resources when the spec sets them.
std::string ComputePodQos(const nlohmann::json& spec);

}  // namespace berth::apiserver
