// The scheduling.k8s.io/v1beta1 Workload and PodGroup kinds, served when the GenericWorkload
// feature gate is on (ServerOptions::workload_api), as kube-apiserver v1.37 serves them with it.
//
// They are served through the custom resource machinery (crd_registry.h: RegisterBuiltinCrd),
// which gives them storage, watches, discovery, OpenAPI, tables, the status subresource,
// garbage collection and namespace deletion; their schemas keep the fields of the gates that are
// on by default (the alpha fields of CompositePodGroup, TopologyAwareWorkloadScheduling and
// PodGroupPreemptionPolicy are dropped, as kube-apiserver drops a disabled gate's fields), and
// ValidateWorkloadApiObject adds the rules a schema cannot say: one-of unions, immutable fields,
// list-map keys and the name formats.
//
// Threads: any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "apiserver/api_error.h"

namespace berth::apiserver {

// The CustomResourceDefinition documents (podgroups and workloads) that describe the two kinds.
const nlohmann::json& WorkloadApiDefinitions();

// Serves the two kinds (RegisterBuiltinCrd); UnregisterBuiltinCrds stops.
void RegisterWorkloadApi();

// kube-apiserver's validation of a Workload or PodGroup (`kind`) after the schema's: `current`
// is the stored object on an update, null on a create. Errors are 422s naming the field.
VoidResult ValidateWorkloadApiObject(std::string_view kind, const nlohmann::json& obj,
                                     const nlohmann::json* current);

}  // namespace berth::apiserver
