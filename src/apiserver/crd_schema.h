// A CustomResourceDefinition version's openAPIV3Schema applied to a custom object, in the
// order kube-apiserver applies it: unknown fields pruned, `default`s filled in, then the
// value validated. Errors are field errors in kube-apiserver's words ("spec.replicas:
// Invalid value: ...").
//
// Supported keywords: type (object, array, string, integer, number, boolean), properties,
// additionalProperties, items, required, enum, minimum/maximum (and exclusive forms),
// minLength/maxLength, pattern (ECMAScript syntax, which the usual RE2 patterns also are),
// minItems/maxItems, nullable, default, allOf/anyOf/oneOf/not, x-kubernetes-preserve-unknown-
// fields, x-kubernetes-int-or-string, x-kubernetes-embedded-resource.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/field_errors.h"

namespace berth::apiserver {

// Drops the fields `schema` does not declare. At the root apiVersion, kind and metadata stay.
// `pruned` (optional) receives their paths ("spec.foo", "spec.items[0].bar").
void PruneUnknownFields(const nlohmann::json& schema, nlohmann::json& obj,
                        std::vector<std::string>* pruned = nullptr);

// Fills in absent properties that declare a `default`, recursively.
void ApplySchemaDefaults(const nlohmann::json& schema, nlohmann::json& obj);

// The field errors of `obj` against `schema` (empty: valid). The root's apiVersion, kind and
// metadata are not checked here.
FieldErrorList ValidateAgainstSchema(const nlohmann::json& schema, const nlohmann::json& obj);

// Why `schema` is not structural (empty: it is): every node has a type unless it preserves
// unknown fields or is int-or-string, and the root is an object. The schema's own path is `root`.
FieldErrorList StructuralSchemaErrors(const nlohmann::json& schema,
                                      const std::string& root = "spec.validation.openAPIV3Schema");

// Why `pattern` cannot be used (empty: it can).
std::string PatternError(const std::string& pattern);

}  // namespace berth::apiserver
