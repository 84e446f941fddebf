// Validation of a pod's status.extendedResourceClaimStatus (the claim the scheduler made for
// extended resources backed by DRA, and which container's request each device request serves),
// as kube-apiserver's validatePodExtendedResourceClaimStatus checks it on a status update.
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

// The field errors ("<field>: <detail>") of `pod`'s status.extendedResourceClaimStatus; none
// when the pod has none.
FieldErrorList PodExtendedResourceClaimStatusErrors(const nlohmann::json& pod);

// 422 `Pod "x" is invalid: ...` carrying those errors; nothing when there are none.
VoidResult ValidatePodExtendedResourceClaimStatus(const ResourceInfo& r, const nlohmann::json& pod);

}  // namespace berth::apiserver
