// A CustomResourceDefinition version's openAPIV3Schema applied to a custom object, in the
// order kube-apiserver applies it: unknown fields pruned, `default`s filled in, then the
// value validated. Errors are field errors in kube-apiserver's words ("spec.replicas:
// Invalid value: ...").
//
// Supported keywords: type (object, array, string, integer, number, boolean), properties,
// additionalProperties, items, required, enum, minimum/maximum (and exclusive forms),
// minLength/maxLength, pattern (ECMAScript regex), minItems/maxItems, nullable, default,
// x-kubernetes-preserve-unknown-fields, x-kubernetes-int-or-string,
// x-kubernetes-embedded-resource. anyOf/allOf/oneOf/not are accepted and not evaluated.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace berth::apiserver {

// Drops the fields `schema` does not declare. At the root apiVersion, kind and metadata stay.
void PruneUnknownFields(const nlohmann::json& schema, nlohmann::json& obj);

// Fills in absent properties that declare a `default`, recursively.
void ApplySchemaDefaults(const nlohmann::json& schema, nlohmann::json& obj);

// The field errors of `obj` against `schema` (empty: valid). The root's apiVersion, kind and
// metadata are not checked here.
std::vector<std::string> ValidateAgainstSchema(const nlohmann::json& schema,
                                               const nlohmann::json& obj);

// Why `schema` is not structural (empty: it is): every node has a type unless it preserves
// unknown fields or is int-or-string, and the root is an object.
std::vector<std::string> StructuralSchemaErrors(const nlohmann::json& schema);

}  // namespace berth::apiserver
