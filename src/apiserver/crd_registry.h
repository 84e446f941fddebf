// The resources CustomResourceDefinitions add to the API server: one process-wide table, kept in
// step with the stored CRDs by CrdController (crd_controller.h) and consulted by FindResource,
// discovery, admission, tables and the scale subresource.
//
// A CRD's served versions each get a ResourceInfo that lives as long as the process (a request
// may still hold one while its CRD goes), all sharing one storage key ("<plural>.<group>"), so
// every version reads and writes the same objects (conversionStrategy None).
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"

namespace berth::apiserver {

// One served version of a custom resource.
struct CustomResourceVersion {
  ResourceInfo info;
  std::string crd_name;            // "<plural>.<group>"
  nlohmann::json schema;           // openAPIV3Schema (null: none)
  nlohmann::json printer_columns;  // additionalPrinterColumns (array)
  bool storage = false;
  // The CRD has other versions: stored objects may carry another version's apiVersion
  // (conversion None changes nothing else), which reads rewrite.
  bool several_versions = false;
  bool terminating = false;  // its CRD is being deleted: no new objects
  // spec.versions[].subresources.scale, when present.
  std::string spec_replicas_path, status_replicas_path, label_selector_path;
  // Served by the API server itself (RegisterBuiltinCrd): not a stored CRD, not replaced or
  // removed by one of the same name.
  bool builtin = false;
  // A built-in kind's own checks beyond its schema, after pruning and defaulting: `current` is
  // the stored object on an update, null on a create.
  std::function<VoidResult(const nlohmann::json& obj, const nlohmann::json* current)> validate;
};

// The custom resource served at group/version/plural, or null.
const CustomResourceVersion* FindCustomResource(std::string_view group, std::string_view version,
                                                std::string_view plural);
const CustomResourceVersion* FindCustomResourceByKind(std::string_view group,
                                                      std::string_view kind);
// The custom resource behind `r`, or null for a built-in resource.
const CustomResourceVersion* CustomResourceOf(const ResourceInfo& r);

// `text` (an object, a list, a Table or a watch event, as JSON) with the apiVersion of each
// object of `r`'s kind in it set to `r`'s: what conversion None does between versions. Other
// text comes back as it was.
std::string WithServedVersion(const ResourceInfo& r, const std::string& text);

// Every served custom resource version, the CRDs' preferred (first served) versions first.
std::vector<const CustomResourceVersion*> CustomResources();

// One view of each CRD's stored objects (all its versions share one storage key): what
// walks every kind's storage (namespace deletion) adds to the built-in resources.
std::vector<const ResourceInfo*> CustomStorageResources();

// Serves what `crd` (a stored CustomResourceDefinition) defines, replacing what it served
// before. A CRD being deleted is still served (its objects are being removed).
void RegisterCrd(const nlohmann::json& crd);
// Stops serving the resources of CRD `name` (not a built-in kind's).
void UnregisterCrd(std::string_view name);

// Serves `crd` (a CustomResourceDefinition document kept in code) as a kind of the API server's
// own: no stored CRD lists it, and a stored CRD of the same name neither replaces nor removes
// it (kube-apiserver's built-in handlers come before CRDs'). `validate` runs after the schema's
// checks (CustomResourceVersion::validate).
void RegisterBuiltinCrd(
    const nlohmann::json& crd,
    std::function<VoidResult(const nlohmann::json&, const nlohmann::json*)> validate);
// Stops serving the kinds RegisterBuiltinCrd added (a server that served them stops).
void UnregisterBuiltinCrds();
// Whether `crd_name` ("<plural>.<group>") is served by RegisterBuiltinCrd.
bool IsBuiltinCrd(std::string_view crd_name);

// The storage view of CRD `crd`'s objects (its storage version), for the cleanup on delete.
ResourceInfo StorageResourceOf(const nlohmann::json& crd);

}  // namespace berth::apiserver
