// Answers to the review kinds clients create to ask about themselves: SelfSubjectAccessReview
// (`kubectl auth can-i`), SelfSubjectRulesReview (`kubectl auth can-i --list`) and
// SelfSubjectReview (`kubectl auth whoami`). The server has one
// identity, the admin token's, which may do everything; nothing is stored.
//
// Threads: pure functions, any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// The user the admin token authenticates as (also the kubeconfig's user name).
inline constexpr const char* kAdminUser = "berth-admin";

// True for the review resources.
bool IsReview(const ResourceInfo& r);

// The review `body` with its status filled in, as kube-apiserver answers a create (201).
// BadRequest when the body is not an object of the resource's kind.
Result<nlohmann::json> AnswerReview(const ResourceInfo& r, const nlohmann::json& body);

}  // namespace berth::apiserver
