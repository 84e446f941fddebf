#include "apiserver/discovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <tuple>
#include <vector>

#include "apiserver/crd_registry.h"
#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kAggregatedV2 =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

std::vector<std::string> Verbs(const ResourceInfo& r) {
  if (r.create_only) return {"create"};
  return {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
}

// kubectl's `get all` expands the "all" category from discovery.
bool InCategoryAll(const ResourceInfo& r) {
  return r.plural == "pods" || r.plural == "services" || r.plural == "deployments" ||
         r.plural == "replicasets" || r.plural == "statefulsets" || r.plural == "daemonsets" ||
         r.plural == "replicationcontrollers" || r.plural == "jobs" || r.plural == "cronjobs";
}

Json Categories(const ResourceInfo& r) {
  Json out = Json::array();
  if (InCategoryAll(r)) out.push_back("all");
  for (const auto& c : r.categories) out.push_back(c);
  return out;
}

// The built-in resources, then those CustomResourceDefinitions add (copies: a CRD may go
// while a document is being written).
std::vector<ResourceInfo> AllResources() {
  std::vector<ResourceInfo> all = ServedResources();
  for (const CustomResourceVersion* v : CustomResources()) all.push_back(v->info);
  return all;
}

// Kubernetes' version order: GA before beta before alpha, higher numbers first, then
// anything else alphabetically.
bool VersionBefore(const std::string& a, const std::string& b) {
  auto key = [](const std::string& v) {
    int major = 0, minor = 0, pos = 0;
    int stage = 3;  // 0 GA, 1 beta, 2 alpha, 3 other
    if (std::sscanf(v.c_str(), "v%d%n", &major, &pos) == 1 && major > 0) {
      std::string rest = v.substr(pos);
      if (rest.empty()) {
        stage = 0;
      } else if (std::sscanf(rest.c_str(), "beta%d", &minor) == 1) {
        stage = 1;
      } else if (std::sscanf(rest.c_str(), "alpha%d", &minor) == 1) {
        stage = 2;
      }
    }
    return std::make_tuple(stage, stage == 3 ? 0 : -major, -minor, v);
  };
  return key(a) < key(b);
}

// The versions of `group`, preferred first.
std::vector<std::string> GroupVersions(const std::vector<ResourceInfo>& all,
                                       std::string_view group) {
  std::vector<std::string> versions;
  for (const auto& r : all) {
    if (r.group == group &&
        std::find(versions.begin(), versions.end(), r.version) == versions.end()) {
      versions.push_back(r.version);
    }
  }
  std::sort(versions.begin(), versions.end(), VersionBefore);
  return versions;
}

// What a subresource takes and returns.
struct SubresourceShape {
  std::string group, version, kind;
  std::vector<std::string> verbs;
};

SubresourceShape ShapeOf(const ResourceInfo& r, const std::string& sub) {
  if (sub == "status") return {r.group, r.version, r.kind, {"get", "patch", "update"}};
  if (sub == "resize") return {r.group, r.version, r.kind, {"get", "patch", "update"}};
  if (sub == "scale") return {"autoscaling", "v1", "Scale", {"get", "patch", "update"}};
  if (sub == "eviction") return {"policy", "v1", "Eviction", {"create"}};
  if (sub == "log") return {r.group, r.version, r.kind, {"get"}};
  if (sub == "finalize") return {r.group, r.version, r.kind, {"update"}};
  if (sub == "exec") return {"", "v1", "PodExecOptions", {"create", "get"}};
  if (sub == "attach") return {"", "v1", "PodAttachOptions", {"create", "get"}};
  if (sub == "portforward") return {"", "v1", "PodPortForwardOptions", {"create", "get"}};
  return {"", "v1", "Binding", {"create"}};
}

Json ResourceList(std::string_view group, std::string_view version) {
  Json resources = Json::array();
  for (const auto& r : AllResources()) {
    if (r.group != group || r.version != version) continue;
    Json entry = {{"name", r.plural},
                  {"singularName", r.singular},
                  {"namespaced", r.namespaced},
                  {"kind", r.kind},
                  {"verbs", Verbs(r)}};
    if (!r.short_names.empty()) entry["shortNames"] = r.short_names;
    if (Json c = Categories(r); !c.empty()) entry["categories"] = c;
    resources.push_back(entry);
    for (const auto& sub : r.subresources) {
      const SubresourceShape shape = ShapeOf(r, sub);
      Json s = {{"name", r.plural + "/" + sub},
                {"singularName", ""},
                {"namespaced", r.namespaced},
                {"kind", shape.kind},
                {"verbs", shape.verbs}};
      // A kind of another group than the resource's names its group and version.
      if (shape.group != r.group) {
        s["group"] = shape.group;
        s["version"] = shape.version;
      }
      resources.push_back(s);
    }
  }
  std::string gv = group.empty() ? std::string(version) : fmt::format("{}/{}", group, version);
  return {{"kind", "APIResourceList"},
          {"apiVersion", "v1"},
          {"groupVersion", gv},
          {"resources", resources}};
}

std::vector<std::string> Groups() {
  std::vector<std::string> groups;
  for (const auto& r : AllResources()) {
    if (!r.group.empty() && std::find(groups.begin(), groups.end(), r.group) == groups.end()) {
      groups.push_back(r.group);
    }
  }
  return groups;
}

Json GroupDoc(const std::string& g) {
  Json versions = Json::array();
  for (const auto& v : GroupVersions(AllResources(), g)) {
    versions.push_back({{"groupVersion", g + "/" + v}, {"version", v}});
  }
  return {{"name", g}, {"versions", versions}, {"preferredVersion", versions.at(0)}};
}

Json AggregatedVersion(const std::vector<ResourceInfo>& all, const std::string& group,
                       const std::string& version) {
  Json resources = Json::array();
  for (const auto& r : all) {
    if (r.group != group || r.version != version) continue;
    Json entry = {{"resource", r.plural},
                  {"responseKind", {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
                  {"scope", r.namespaced ? "Namespaced" : "Cluster"},
                  {"singularResource", r.singular},
                  {"verbs", Verbs(r)}};
    if (!r.short_names.empty()) entry["shortNames"] = r.short_names;
    if (Json c = Categories(r); !c.empty()) entry["categories"] = c;
    Json subs = Json::array();
    for (const auto& sub : r.subresources) {
      const SubresourceShape shape = ShapeOf(r, sub);
      subs.push_back({{"subresource", sub},
                      {"responseKind",
                       {{"group", shape.group}, {"version", shape.version}, {"kind", shape.kind}}},
                      {"verbs", shape.verbs}});
    }
    if (!subs.empty()) entry["subresources"] = subs;
    resources.push_back(entry);
  }
  return {{"version", version}, {"resources", resources}, {"freshness", "Current"}};
}

Json AggregatedGroup(const std::string& group) {
  const std::vector<ResourceInfo> all = AllResources();
  Json versions = Json::array();
  for (const auto& v : GroupVersions(all, group)) {
    versions.push_back(AggregatedVersion(all, group, v));
  }
  Json item = {{"metadata", {{"creationTimestamp", nullptr}}}, {"versions", versions}};
  if (!group.empty()) item["metadata"]["name"] = group;
  return item;
}

}  // namespace

Json VersionDocument() {
  return {{"major", "1"},
          {"minor", "32"},
          {"gitVersion", "v1.32.0-berth"},
          {"gitCommit", "0000000000000000000000000000000000000000"},
          {"gitTreeState", "clean"},
          {"buildDate", "2026-01-01T00:00:00Z"},
          {"goVersion", "go1.23.0"},
          {"compiler", "gc"},
          {"platform", "linux/amd64"}};
}

std::optional<DiscoveryReply> DiscoveryDocument(std::string_view path, std::string_view accept,
                                                std::string_view address, uint16_t port) {
  const bool aggregated = accept.find(kAggregatedV2) != std::string_view::npos;
  if (path == "/api") {
    if (aggregated) {
      return DiscoveryReply{std::string(kAggregatedV2),
                            {{"kind", "APIGroupDiscoveryList"},
                             {"apiVersion", "apidiscovery.k8s.io/v2"},
                             {"metadata", Json::object()},
                             {"items", {AggregatedGroup("")}}}};
    }
    return DiscoveryReply{"application/json",
                          {{"kind", "APIVersions"},
                           {"versions", {"v1"}},
                           {"serverAddressByClientCIDRs",
                            {{{"clientCIDR", "0.0.0.0/0"},
                              {"serverAddress", fmt::format("{}:{}", address, port)}}}}}};
  }
  if (path == "/apis") {
    if (aggregated) {
      Json items = Json::array();
      for (const auto& g : Groups()) items.push_back(AggregatedGroup(g));
      return DiscoveryReply{std::string(kAggregatedV2),
                            {{"kind", "APIGroupDiscoveryList"},
                             {"apiVersion", "apidiscovery.k8s.io/v2"},
                             {"metadata", Json::object()},
                             {"items", items}}};
    }
    Json groups = Json::array();
    for (const auto& g : Groups()) groups.push_back(GroupDoc(g));
    return DiscoveryReply{"application/json",
                          {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", groups}}};
  }
  if (path == "/api/v1") return DiscoveryReply{"application/json", ResourceList("", "v1")};
  if (path.rfind("/apis/", 0) == 0) {
    std::string_view rest = path.substr(6);
    size_t slash = rest.find('/');
    std::string group(rest.substr(0, slash));
    auto groups = Groups();
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) return std::nullopt;
    if (slash == std::string_view::npos) {
      Json doc = GroupDoc(group);
      doc["kind"] = "APIGroup";
      doc["apiVersion"] = "v1";
      return DiscoveryReply{"application/json", doc};
    }
    const std::string version(rest.substr(slash + 1));
    auto versions = GroupVersions(AllResources(), group);
    if (std::find(versions.begin(), versions.end(), version) == versions.end()) {
      return std::nullopt;
    }
    return DiscoveryReply{"application/json", ResourceList(group, version)};
  }
  return std::nullopt;
}

}  // namespace berth::apiserver
