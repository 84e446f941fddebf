// Defaulting and validation of resource.k8s.io/v1 (DeviceClass, ResourceClaim,
// ResourceClaimTemplate, ResourceSlice, DeviceTaintRule), as kube-apiserver's v1 defaulters and
// pkg/apis/resource/validation apply them: every field error of a write is collected and
// reported in one 422, `ResourceClaim.resource.k8s.io "x" is invalid: [<field>: <detail>, ...]`.
// CEL selector expressions are compiled with the evaluator of src/cel (dra.h).
//
// Threads: pure functions, any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/field_errors.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

inline bool IsResourceApi(const ResourceInfo& r) { return r.group == "resource.k8s.io"; }

// The v1 defaults: allocationMode ExactCount and count 1 for exact requests and subrequests,
// toleration operator Equal, device taints' timeAdded (`now`, RFC 3339). A create of a
// ResourceClaim or DeviceTaintRule drops the status it carries, as their registry strategies do.
void DefaultResourceObject(const ResourceInfo& r, nlohmann::json& obj, bool is_create,
                           const std::string& now);

// What an update changes beyond the client's object, given the stored one: a DeviceTaintRule
// whose taint effect changes while its timeAdded stays gets `now` as timeAdded.
void PrepareResourceUpdate(const ResourceInfo& r, const nlohmann::json& current,
                           nlohmann::json& next, const std::string& now);

// The field errors of `obj` (in kube-apiserver's words); `old` is the
// stored object on an update (null on a create). On an update, a ResourceClaim's and a
// ResourceClaimTemplate's spec is only checked for immutability, as upstream does.
FieldErrorList ResourceFieldErrors(const ResourceInfo& r, const nlohmann::json& obj,
                                   const nlohmann::json* old);

// 422 carrying the field errors (nothing when there are none).
VoidResult ValidateResourceObject(const ResourceInfo& r, const nlohmann::json& obj,
                                  const nlohmann::json* old);

// The Invalid error of a list of field errors, as kube-apiserver's errors.NewInvalid words it.
ApiError ResourceInvalid(const ResourceInfo& r, const nlohmann::json& obj, FieldErrorList errors);

}  // namespace berth::apiserver
