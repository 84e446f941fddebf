// Label and field selectors in their query-string form (`app in (web,db),!canary`,
// `spec.nodeName=,status.phase!=Succeeded`), compiled into predicates on stored objects.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "apiserver/store.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// Parses a label selector; an empty string matches everything.
Result<ObjectFilter> ParseLabelSelector(std::string_view text);
// Parses a field selector for resource `r`; fields outside kube-apiserver's allowlist for the
// resource are BadRequest ("field label not supported: X").
Result<ObjectFilter> ParseFieldSelector(const ResourceInfo& r, std::string_view text);

// A selector in the query-string form, as kube-apiserver prints one (a Scale's
// status.selector, kubectl's SELECTOR column): a LabelSelector (matchLabels,
// matchExpressions) or a plain label map (a ReplicationController's or a Service's), its
// requirements sorted by key; "" for an empty or absent one.
std::string FormatSelector(const nlohmann::json& selector);

// The value at a field path ("spec.nodeName") of an object; null when a step is missing or
// not an object.
const nlohmann::json* FieldAt(const nlohmann::json& obj, std::string_view path);
// The value of a field path as text ("" when absent or not a scalar).
std::string FieldValue(const nlohmann::json& obj, std::string_view path);

}  // namespace berth::apiserver
