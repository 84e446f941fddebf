// Label and field selectors in their query-string form (`app in (web,db),!canary`,
// `spec.nodeName=,status.phase!=Succeeded`), compiled into predicates on stored objects.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string_view>

#include "apiserver/resources.h"
#include "apiserver/store.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// Parses a label selector; an empty string matches everything.
Result<ObjectFilter> ParseLabelSelector(std::string_view text);
// Parses a field selector for resource `r`; fields outside kube-apiserver's allowlist for the
// resource are BadRequest ("field label not supported: X").
Result<ObjectFilter> ParseFieldSelector(const ResourceInfo& r, std::string_view text);

// The value of a field path ("spec.nodeName") of an object, "" when absent.
std::string FieldValue(const nlohmann::json& obj, std::string_view path);

}  // namespace berth::apiserver
