#include "apiserver/bootstrap.h"

#include <nlohmann/json.hpp>

#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// Creates `obj` in `ns` unless an object of that name is there.
VoidResult Ensure(Store& store, std::string_view group, std::string_view plural,
                  std::string_view ns, Json obj) {
  const ResourceInfo* r = FindResource(group, "v1", plural);
  const std::string name = obj["metadata"]["name"].get<std::string>();
  if (store.Get(*r, ns, name).ok()) return {};
  obj["apiVersion"] = r->GroupVersion();
  obj["kind"] = r->kind;
  if (r->namespaced) obj["metadata"]["namespace"] = std::string(ns);
  auto created = store.Create(*r, ns, std::move(obj), false);
  // Forbidden: the namespace is being deleted, and what it held goes with it.
  if (!created.ok() && created.error().code != ErrorCode::kAlreadyExists &&
      created.error().code != ErrorCode::kForbidden) {
    return created.error();
  }
  return {};
}

const Json& BootstrapLabels() {
  static const Json kLabels = {{"kubernetes.io/bootstrapping", "rbac-defaults"}};
  return kLabels;
}

}  // namespace

VoidResult PopulateNamespace(Store& store, std::string_view ns, const std::string& ca_pem) {
  if (auto ok = Ensure(store, "", "serviceaccounts", ns, {{"metadata", {{"name", "default"}}}});
      !ok.ok()) {
    return ok;
  }
  if (ca_pem.empty()) return {};
  return Ensure(store, "", "configmaps", ns,
                {{"metadata",
                  {{"name", "kube-root-ca.crt"},
                   {"annotations",
                    {{"kubernetes.io/description",
                      "Contains a CA bundle that can be used to verify the kube-apiserver when "
                      "using internal endpoints such as the internal service IP or "
                      "kubernetes.default.svc. No other usage is guaranteed across "
                      "distributions of Kubernetes clusters."}}}}},
                 {"data", {{"ca.crt", ca_pem}}}});
}

VoidResult BootstrapCluster(Store& store, const std::string& ca_pem) {
  struct SystemClass {
    const char* name;
    int64_t value;
    const char* description;
  };
  for (const SystemClass& c :
       {SystemClass{"system-node-critical", 2000001000,
                    "Used for system critical pods that must not be moved from their current "
                    "node."},
        SystemClass{"system-cluster-critical", 2000000000,
                    "Used for system critical pods that must run in the cluster, but can be "
                    "moved to another node if necessary."}}) {
    auto ok = Ensure(store, "scheduling.k8s.io", "priorityclasses", "",
                     {{"metadata", {{"name", c.name}}},
                      {"value", c.value},
                      {"globalDefault", false},
                      {"description", c.description},
                      {"preemptionPolicy", "PreemptLowerPriority"}});
    if (!ok.ok()) return ok;
  }
  const Json autoupdate = {{"rbac.authorization.kubernetes.io/autoupdate", "true"}};
  auto role = Ensure(
      store, "rbac.authorization.k8s.io", "clusterroles", "",
      {{"metadata",
        {{"name", "cluster-admin"}, {"labels", BootstrapLabels()}, {"annotations", autoupdate}}},
       {"rules",
        {{{"apiGroups", {"*"}}, {"resources", {"*"}}, {"verbs", {"*"}}},
         {{"nonResourceURLs", {"*"}}, {"verbs", {"*"}}}}}});
  if (!role.ok()) return role;
  auto binding = Ensure(
      store, "rbac.authorization.k8s.io", "clusterrolebindings", "",
      {{"metadata",
        {{"name", "cluster-admin"}, {"labels", BootstrapLabels()}, {"annotations", autoupdate}}},
       {"roleRef",
        {{"apiGroup", "rbac.authorization.k8s.io"},
         {"kind", "ClusterRole"},
         {"name", "cluster-admin"}}},
       {"subjects",
        {{{"apiGroup", "rbac.authorization.k8s.io"},
          {"kind", "Group"},
          {"name", "system:masters"}}}}});
  if (!binding.ok()) return binding;
  // No cluster IP: `berth up` allocates none (docs/up.md).
  auto service = Ensure(
      store, "", "services", "default",
      {{"metadata",
        {{"name", "kubernetes"},
         {"labels", {{"component", "apiserver"}, {"provider", "kubernetes"}}}}},
       {"spec",
        {{"ports", {{{"name", "https"}, {"port", 443}, {"protocol", "TCP"}, {"targetPort", 6443}}}},
         {"type", "ClusterIP"},
         {"sessionAffinity", "None"},
         {"internalTrafficPolicy", "Cluster"}}}});
  if (!service.ok()) return service;
  const ResourceInfo* namespaces = FindResource("", "v1", "namespaces");
  auto all = store.List(*namespaces, "", nullptr, 0, "");
  if (!all.ok()) return all.error();
  for (const auto& so : all->items) {
    const std::string ns = (*so.object)["metadata"].value("name", "");
    if (auto ok = PopulateNamespace(store, ns, ca_pem); !ok.ok()) return ok;
  }
  return {};
}

}  // namespace berth::apiserver
