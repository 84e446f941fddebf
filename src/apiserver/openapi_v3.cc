#include "apiserver/openapi_v3.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <vector>

#include "apiserver/crd_openapi.h"
#include "apiserver/openapi_schema.h"
#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

constexpr std::string_view kV2RefPrefix = "#/definitions/";
constexpr std::string_view kV3RefPrefix = "#/components/schemas/";

std::vector<std::string> Groups() {
  std::vector<std::string> groups;
  for (const auto& r : ServedResources()) {
    if (!r.group.empty() && std::find(groups.begin(), groups.end(), r.group) == groups.end()) {
      groups.push_back(r.group);
    }
  }
  return groups;
}

// Turns a Swagger 2.0 schema into its OpenAPI v3 form, as kube-apiserver publishes it:
// references point into components.schemas, and a reference with siblings (a field's
// description) is wrapped in allOf, which is how kubectl explain prints the field's description
// and then its type's.
void ToV3(Json& schema) {
  if (schema.is_array()) {
    for (auto& item : schema) ToV3(item);
    return;
  }
  if (!schema.is_object()) return;
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    const std::string& key = it.key();
    Json& value = it.value();
    if (key == "$ref" && value.is_string()) {
      std::string ref = value.get<std::string>();
      if (ref.rfind(kV2RefPrefix, 0) == 0) {
        value = std::string(kV3RefPrefix) + ref.substr(kV2RefPrefix.size());
      }
    } else if (key != "enum" && key != "x-kubernetes-group-version-kind") {
      ToV3(value);
    }
  }
  if (schema.contains("$ref") && schema.size() > 1) {
    Json ref = {{"$ref", std::move(schema["$ref"])}};
    schema.erase("$ref");
    schema["allOf"] = Json::array({std::move(ref)});
  }
}

// The two types that take either form: v2 calls them strings, v3 says which values they take
// (kubectl explain then names the type rather than printing `string`).
void ToV3Definition(const std::string& name, Json& schema) {
  ToV3(schema);
  if (name == "io.k8s.apimachinery.pkg.util.intstr.IntOrString") {
    schema.erase("type");
    schema["oneOf"] = Json::parse(R"([{"type":"integer"},{"type":"string"}])");
  } else if (name == "io.k8s.apimachinery.pkg.api.resource.Quantity") {
    schema.erase("type");
    schema["oneOf"] = Json::parse(R"([{"type":"string"},{"type":"number"}])");
  }
}

// The PATCH operation of a kind: its gvk, the fieldValidation parameter (the server validates
// fields, so kubectl's strict validation is left to it) and the patch types it takes (with
// strategic merge among them, kubectl's client-side apply computes its patch from the schemas).
Json PatchOperation(const std::string& group, const std::string& kind) {
  const Json body = {{"schema", {{"type", "object"}}}};
  return {
      {"patch",
       {{"x-kubernetes-group-version-kind", {{"group", group}, {"version", "v1"}, {"kind", kind}}},
        {"parameters", {{{"name", "fieldValidation"}, {"in", "query"}}}},
        {"requestBody",
         {{"content",
           {{"application/apply-patch+yaml", body},
            {"application/json-patch+json", body},
            {"application/merge-patch+json", body},
            {"application/strategic-merge-patch+json", body}}}}}}}};
}

// Null when the group serves nothing.
std::optional<Json> GroupVersionDocument(const std::string& group) {
  Json paths = Json::object();
  std::set<std::string> kinds;
  for (const auto& r : ServedResources()) {
    if (r.group != group) continue;
    std::string base = group.empty() ? "/api/v1" : fmt::format("/apis/{}/v1", group);
    std::string p = r.namespaced
                        ? fmt::format("{}/namespaces/{{namespace}}/{}/{{name}}", base, r.plural)
                        : fmt::format("{}/{}/{{name}}", base, r.plural);
    if (!kinds.insert(r.kind).second) continue;
    paths[p] = PatchOperation(r.group, r.kind);
  }
  if (paths.empty()) return std::nullopt;
  if (group.empty()) {
    // `kind: List` manifests are validated against this entry before kubectl splits them.
    paths["/api/v1/lists/{name}"] = PatchOperation("", "List");
  }
  Json schemas = Json::object();
  for (auto& [name, schema] : openapi_schema::ReachableFrom(&group)) {
    ToV3Definition(name, schema);
    schemas[name] = std::move(schema);
  }
  return Json{{"openapi", "3.0.0"},
              {"info", {{"title", "Berth"}, {"version", "v1.32.0"}}},
              {"paths", std::move(paths)},
              {"components", {{"schemas", std::move(schemas)}}}};
}

std::string IndexDocument() {
  const std::string hash(openapi_schema::DataHash());
  Json paths = Json::object();
  paths["api/v1"] = {{"serverRelativeURL", "/openapi/v3/api/v1?hash=" + hash}};
  for (const auto& g : Groups()) {
    paths["apis/" + g + "/v1"] = {
        {"serverRelativeURL", fmt::format("/openapi/v3/apis/{}/v1?hash={}", g, hash)}};
  }
  return Json{{"paths", paths}}.dump();
}

// Built documents by group ("" for core); a null entry: no such group.
struct Cache {
  std::mutex mu;
  std::map<std::string, std::shared_ptr<const std::string>> docs;
};

}  // namespace

std::optional<std::string> OpenApiV3Document(std::string_view path) {
  if (path == "/openapi/v3" || path == "/openapi/v3/") {
    static const std::string index = IndexDocument();
    const auto custom = CustomOpenApiV3Index();
    if (custom.empty()) return index;
    // What CustomResourceDefinitions serve changes: their entries are added per request.
    Json doc = Json::parse(index);
    for (const auto& [gv, url] : custom) doc["paths"][gv] = {{"serverRelativeURL", url}};
    return doc.dump();
  }
  constexpr std::string_view kPrefix = "/openapi/v3/";
  if (path.rfind(kPrefix, 0) != 0) return std::nullopt;
  std::string_view gv = path.substr(kPrefix.size());
  if (auto custom = CustomOpenApiV3Document(gv)) return custom;
  std::string group;
  if (gv == "api/v1") {
    group = "";
  } else if (gv.rfind("apis/", 0) == 0 && gv.size() > 8 && gv.substr(gv.size() - 3) == "/v1") {
    group = std::string(gv.substr(5, gv.size() - 8));
    auto groups = Groups();
    if (std::find(groups.begin(), groups.end(), group) == groups.end()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  static Cache cache;
  std::shared_ptr<const std::string> doc;
  {
    // Held while a document is built (once per group): its other requesters wait for it.
    std::lock_guard lock(cache.mu);
    auto it = cache.docs.find(group);
    if (it == cache.docs.end()) {
      auto built = GroupVersionDocument(group);
      it = cache.docs
               .emplace(group, built ? std::make_shared<const std::string>(built->dump()) : nullptr)
               .first;
    }
    doc = it->second;
  }
  if (!doc) return std::nullopt;
  return *doc;
}

}  // namespace berth::apiserver
