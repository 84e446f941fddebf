// The `scale` subresource (autoscaling/v1 Scale) of deployments, replicasets, statefulsets and
// replicationcontrollers: what `kubectl scale` reads and writes. Only spec.replicas changes;
// nothing here runs a controller, so status.replicas is whatever the object's status says.
//
// Threads: pure functions, any thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// True for the resources that serve `scale`.
bool HasScale(const ResourceInfo& r);

// The Scale of a stored object: its name, namespace, uid, resourceVersion and creation time;
// spec.replicas (1 when unset, as the API's defaulting gives); status.replicas; and
// status.selector, the object's selector in label-selector syntax ("app=web,tier in (a,b)").
nlohmann::json ScaleOf(const nlohmann::json& object);

// Applies a Scale written by a client to the stored object: spec.replicas, and the Scale's
// resourceVersion (when set) as the precondition of the write. Rejects (Invalid, naming the
// field) a missing or negative replica count.
Result<nlohmann::json> WithScale(const nlohmann::json& object, const nlohmann::json& scale,
                                 const std::string& name);

}  // namespace berth::apiserver
