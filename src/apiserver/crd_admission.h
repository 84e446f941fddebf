// Admission of CustomResourceDefinitions and of the custom objects they define, as
// apiextensions-apiserver does it:
//
//   * A CRD is defaulted (names.singular, names.listKind, conversion None), validated
//     (metadata.name is <plural>.<group>, a group with a dot, DNS-label names, a scope, unique
//     versions with exactly one storage version, a structural openAPIV3Schema for each) and
//     given its status: acceptedNames and the NamesAccepted and Established conditions, set
//     at once since nothing needs to start before the resource is served. A new CRD gets the
//     customresourcecleanup.apiextensions.k8s.io finalizer (CrdController removes its objects
//     when it is deleted).
//   * A custom object's fields are pruned, defaulted and validated against its version's
//     schema (crd_schema.h); with a status subresource, a create stores no status.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/crd_registry.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

inline constexpr char kCrdCleanupFinalizer[] = "customresourcecleanup.apiextensions.k8s.io";

bool IsCrdResource(const ResourceInfo& r);

VoidResult AdmitCrd(const ResourceInfo& r, nlohmann::json& crd, bool is_create);

// What an update of a CRD may not change: its scope (the stored objects' keys depend on it).
VoidResult ValidateCrdUpdate(const nlohmann::json& current, const nlohmann::json& next);

// Adds `unknown field "spec.foo"` to `problems` for each field of `obj` that its custom
// resource's schema does not declare (the fields pruning drops), as strict decoding reports
// them. Nothing for a kind that is not a custom resource.
// The paths ("spec.foo") of the fields of `obj` that its custom resource's schema does not
// declare; none for a kind that is not a custom resource.
std::vector<std::string> UnknownCustomFieldPaths(std::string_view group, const std::string& kind,
                                                 const nlohmann::json& obj);
void ListUnknownCustomFields(std::string_view group, const std::string& kind,
                             const nlohmann::json& obj, std::vector<std::string>* problems);

VoidResult AdmitCustomObject(const CustomResourceVersion& v, nlohmann::json& obj, bool is_create);

}  // namespace berth::apiserver
