// Admission: the defaulting and validation kube-apiserver applies before storing, limited to
// what schedulers and kubectl depend on.
//
//   * Pods: spec.schedulerName defaults to default-scheduler; priorityClassName resolves into
//     spec.priority (and preemptionPolicy), with the globalDefault class when none is named;
//     status.phase Pending and status.qosClass on create; quantities validated; on create,
//     matchLabelKeys / mismatchLabelKeys merged into their terms' selectors and validated
//     (pod_label_keys.h), as are a pod template's on every write.
//   * Workloads (deployments, replicasets, statefulsets, daemonsets, replicationcontrollers):
//     replicas, update strategies, revision history limits and the pod template's spec
//     defaulted as the API does on every write; a ReplicationController's selector and labels
//     default to its template's labels.
//   * Nodes: capacity and allocatable quantities validated (negative values rejected).
//   * Names: DNS-1123 subdomains for pods, nodes and namespaces.
// Errors are Invalid (422) or Forbidden (403), worded as kube-apiserver's.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "apiserver/api_error.h"
#include "apiserver/resources.h"
#include "apiserver/validation.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// Looks up a PriorityClass by name ("" = the globalDefault one); null when absent.
using PriorityClassLookup = std::function<std::optional<nlohmann::json>(const std::string& name)>;

// Defaults and validates `obj` for a create (`is_create`) or update of resource `r`.
// `validation`: the gated API behaviour (ValidationFor).
VoidResult Admit(const ResourceInfo& r, nlohmann::json& obj, bool is_create,
                 const PriorityClassLookup& priority_classes,
                 const ValidationOptions& validation = {});

// Refuses (Invalid) an update that changes what kube-apiserver keeps immutable: a pod's spec
// beyond container images, added tolerations, removed scheduling gates, activeDeadlineSeconds
// and terminationGracePeriodSeconds; a workload's selector; a PriorityClass's value. Values
// compare as typed objects do (an empty list is an absent one, "0.5" CPU is "500m"). A pod's
// priority fields the update leaves out are carried over into `next` first.
VoidResult ValidateUpdate(const ResourceInfo& r, const nlohmann::json& current,
                          nlohmann::json& next);

}  // namespace berth::apiserver
