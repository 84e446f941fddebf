// Validation of what a write may store, beyond field names and quantities: the rules of
// kube-apiserver's validation that decide how an object is scheduled or matched (label keys,
// container names and images, requests within limits, tolerations, node selector operators,
// taint effects, a workload's selector against its template's labels, container ports). An
// invalid object gets 422 naming the field, in kube-apiserver's words.
//
// Threads: pure functions, any thread.
#pragma once

#include <nlohmann/json.hpp>

#include "apiserver/api_error.h"
#include "apiserver/field_errors.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// 422 in kube-apiserver's words: `<Kind> "<name>" is invalid: <field>: <type's words>: <detail>`,
// the field error kept with it as data (field_errors.h).
ApiError InvalidField(const ResourceInfo& r, const nlohmann::json& obj, const std::string& field,
                      FieldErrorType type, const std::string& detail = "");

// API behaviour behind feature gates (`berth up --feature-gates`).
struct ValidationOptions {
  // TaintTolerationComparisonOperators (alpha, off by default): tolerations may use the
  // operators Lt and Gt, with an integer value.
  bool toleration_comparison_operators = false;
};

// The options for a write whose stored object is `current` (null on create): with a gate off,
// an update may keep what the stored pod already uses, as kube-apiserver allows it.
ValidationOptions ValidationFor(const ValidationOptions& gates, const nlohmann::json* current);

// `obj` after defaulting, for a create or an update of resource `r`.
VoidResult ValidateObject(const ResourceInfo& r, const nlohmann::json& obj,
                          const ValidationOptions& options = {});

}  // namespace berth::apiserver
