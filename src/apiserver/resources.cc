#include "apiserver/resources.h"

#include "apiserver/crd_registry.h"

namespace berth::apiserver {

const std::vector<ResourceInfo>& ServedResources() {
  static const std::vector<ResourceInfo> kResources = [] {
    std::vector<ResourceInfo> r;
    auto add = [&](std::string group, std::string plural, std::string singular, std::string kind,
                   bool namespaced, std::vector<std::string> short_names = {},
                   std::vector<std::string> subresources = {}) {
      ResourceInfo info;
      info.group = std::move(group);
      info.version = "v1";
      info.plural = std::move(plural);
      info.singular = std::move(singular);
      info.kind = std::move(kind);
      info.namespaced = namespaced;
      info.short_names = std::move(short_names);
      info.subresources = std::move(subresources);
      r.push_back(std::move(info));
    };
    add("", "pods", "pod", "Pod", true, {"po"},
        {"status", "binding", "eviction", "resize", "log", "exec", "attach", "portforward"});
    add("", "bindings", "binding", "Binding", true);
    r.back().create_only = true;
    add("", "nodes", "node", "Node", false, {"no"}, {"status"});
    add("", "namespaces", "namespace", "Namespace", false, {"ns"}, {"status", "finalize"});
    add("", "events", "event", "Event", true, {"ev"});
    add("", "services", "service", "Service", true, {"svc"}, {"status"});
    add("", "endpoints", "endpoints", "Endpoints", true, {"ep"});
    add("", "configmaps", "configmap", "ConfigMap", true, {"cm"});
    add("", "secrets", "secret", "Secret", true);
    add("", "serviceaccounts", "serviceaccount", "ServiceAccount", true, {"sa"});
    add("", "persistentvolumes", "persistentvolume", "PersistentVolume", false, {"pv"}, {"status"});
    add("", "persistentvolumeclaims", "persistentvolumeclaim", "PersistentVolumeClaim", true,
        {"pvc"}, {"status"});
    add("", "replicationcontrollers", "replicationcontroller", "ReplicationController", true,
        {"rc"}, {"status", "scale"});
    add("", "limitranges", "limitrange", "LimitRange", true, {"limits"});
    add("", "podtemplates", "podtemplate", "PodTemplate", true);
    add("", "resourcequotas", "resourcequota", "ResourceQuota", true, {"quota"}, {"status"});
    add("apps", "deployments", "deployment", "Deployment", true, {"deploy"}, {"status", "scale"});
    add("apps", "replicasets", "replicaset", "ReplicaSet", true, {"rs"}, {"status", "scale"});
    add("apps", "statefulsets", "statefulset", "StatefulSet", true, {"sts"}, {"status", "scale"});
    add("apps", "daemonsets", "daemonset", "DaemonSet", true, {"ds"}, {"status"});
    add("apps", "controllerrevisions", "controllerrevision", "ControllerRevision", true);
    add("batch", "jobs", "job", "Job", true, {}, {"status"});
    add("batch", "cronjobs", "cronjob", "CronJob", true, {"cj"}, {"status"});
    add("networking.k8s.io", "ingresses", "ingress", "Ingress", true, {"ing"}, {"status"});
    add("networking.k8s.io", "ingressclasses", "ingressclass", "IngressClass", false);
    add("networking.k8s.io", "networkpolicies", "networkpolicy", "NetworkPolicy", true, {"netpol"});
    add("coordination.k8s.io", "leases", "lease", "Lease", true);
    add("events.k8s.io", "events", "event", "Event", true, {"ev"});
    add("storage.k8s.io", "storageclasses", "storageclass", "StorageClass", false, {"sc"});
    add("storage.k8s.io", "csinodes", "csinode", "CSINode", false);
    add("storage.k8s.io", "csidrivers", "csidriver", "CSIDriver", false);
    add("storage.k8s.io", "csistoragecapacities", "csistoragecapacity", "CSIStorageCapacity", true);
    add("storage.k8s.io", "volumeattachments", "volumeattachment", "VolumeAttachment", false, {},
        {"status"});
    add("policy", "poddisruptionbudgets", "poddisruptionbudget", "PodDisruptionBudget", true,
        {"pdb"}, {"status"});
    add("scheduling.k8s.io", "priorityclasses", "priorityclass", "PriorityClass", false, {"pc"});
    add("resource.k8s.io", "deviceclasses", "deviceclass", "DeviceClass", false);
    add("resource.k8s.io", "resourceclaims", "resourceclaim", "ResourceClaim", true, {},
        {"status"});
    add("resource.k8s.io", "resourceclaimtemplates", "resourceclaimtemplate",
        "ResourceClaimTemplate", true);
    add("resource.k8s.io", "resourceslices", "resourceslice", "ResourceSlice", false);
    add("resource.k8s.io", "devicetaintrules", "devicetaintrule", "DeviceTaintRule", false, {},
        {"status"});
    add("rbac.authorization.k8s.io", "clusterroles", "clusterrole", "ClusterRole", false);
    add("rbac.authorization.k8s.io", "clusterrolebindings", "clusterrolebinding",
        "ClusterRoleBinding", false);
    add("rbac.authorization.k8s.io", "roles", "role", "Role", true);
    add("rbac.authorization.k8s.io", "rolebindings", "rolebinding", "RoleBinding", true);
    add("authorization.k8s.io", "selfsubjectaccessreviews", "selfsubjectaccessreview",
        "SelfSubjectAccessReview", false);
    r.back().create_only = true;
    add("authorization.k8s.io", "selfsubjectrulesreviews", "selfsubjectrulesreview",
        "SelfSubjectRulesReview", false);
    r.back().create_only = true;
    add("authentication.k8s.io", "selfsubjectreviews", "selfsubjectreview", "SelfSubjectReview",
        false);
    r.back().create_only = true;
    add("apiextensions.k8s.io", "customresourcedefinitions", "customresourcedefinition",
        "CustomResourceDefinition", false, {"crd", "crds"}, {"status"});
    r.back().categories = {"api-extensions"};
    return r;
  }();
  return kResources;
}

const ResourceInfo* FindResource(std::string_view group, std::string_view version,
                                 std::string_view plural) {
  for (const auto& r : ServedResources()) {
    if (r.group == group && r.version == version && r.plural == plural) return &r;
  }
  // Then what CustomResourceDefinitions add (crd_registry.h).
  if (const CustomResourceVersion* custom = FindCustomResource(group, version, plural)) {
    return &custom->info;
  }
  return nullptr;
}

const ResourceInfo* FindResourceByKind(std::string_view group, std::string_view kind) {
  for (const auto& r : ServedResources()) {
    if (r.group == group && r.kind == kind) return &r;
  }
  if (const CustomResourceVersion* custom = FindCustomResourceByKind(group, kind)) {
    return &custom->info;
  }
  return nullptr;
}

}  // namespace berth::apiserver
