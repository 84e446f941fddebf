#include "apiserver/crd_openapi.h"

#include <fmt/format.h>

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "apiserver/crd_registry.h"
#include "apiserver/openapi_schema.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

constexpr char kObjectMeta[] = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
constexpr std::string_view kV2RefPrefix = "#/definitions/";
constexpr std::string_view kV3RefPrefix = "#/components/schemas/";

// "scheduling.x-k8s.io" -> "io.x-k8s.scheduling", as kube-apiserver names CRD definitions.
std::string ReversedGroup(const std::string& group) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= group.size()) {
    size_t dot = group.find('.', start);
    if (dot == std::string::npos) dot = group.size();
    parts.push_back(group.substr(start, dot - start));
    start = dot + 1;
  }
  std::string out;
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) out += (out.empty() ? "" : ".") + *it;
  return out;
}

// Rewrites Swagger 2.0 references to v3 ones and collects the names they point to.
void Rereference(Json& schema, std::set<std::string>* refs) {
  if (schema.is_array()) {
    for (auto& e : schema) Rereference(e, refs);
    return;
  }
  if (!schema.is_object()) return;
  for (auto it = schema.begin(); it != schema.end(); ++it) {
    if (it.key() == "$ref" && it->is_string()) {
      std::string ref = it->get<std::string>();
      if (ref.rfind(kV2RefPrefix, 0) == 0) {
        const std::string name = ref.substr(kV2RefPrefix.size());
        refs->insert(name);
        *it = std::string(kV3RefPrefix) + name;
      }
    } else if (it.key() != "enum" && it.key() != "default") {
      Rereference(it.value(), refs);
    }
  }
}

// ObjectMeta and what it refers to, in their v3 form.
void AddObjectMeta(Json& schemas) {
  std::vector<std::string> todo = {kObjectMeta};
  while (!todo.empty()) {
    const std::string name = todo.back();
    todo.pop_back();
    if (schemas.contains(name)) continue;
    const openapi_schema::Definition* d = openapi_schema::Find(name);
    if (!d) continue;
    Json schema = Json::parse(d->schema);
    std::set<std::string> refs;
    Rereference(schema, &refs);
    schemas[name] = std::move(schema);
    todo.insert(todo.end(), refs.begin(), refs.end());
  }
}

Json KindSchema(const CustomResourceVersion& v) {
  Json schema = v.schema.is_object() ? v.schema : Json{{"type", "object"}};
  const ResourceInfo& r = v.info;
  schema["x-kubernetes-group-version-kind"] = {
      {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}};
  Json& props = schema["properties"];
  if (!props.is_object()) props = Json::object();
  props["metadata"] = {{"description", "Standard object's metadata."},
                       {"allOf", {{{"$ref", std::string(kV3RefPrefix) + kObjectMeta}}}}};
  if (!props.contains("apiVersion")) props["apiVersion"] = {{"type", "string"}};
  if (!props.contains("kind")) props["kind"] = {{"type", "string"}};
  return schema;
}

Json PatchOperation(const ResourceInfo& r) {
  const Json body = {{"schema", {{"type", "object"}}}};
  return {{"patch",
           {{"x-kubernetes-group-version-kind",
             {{"group", r.group}, {"version", r.version}, {"kind", r.kind}}},
            {"parameters", {{{"name", "fieldValidation"}, {"in", "query"}}}},
            {"requestBody",
             {{"content",
               {{"application/apply-patch+yaml", body},
                {"application/json-patch+json", body},
                {"application/merge-patch+json", body}}}}}}}};
}

// The custom resources served at `gv` ("apis/<group>/<version>").
std::vector<const CustomResourceVersion*> ServedAt(std::string_view gv) {
  std::vector<const CustomResourceVersion*> out;
  for (const CustomResourceVersion* v : CustomResources()) {
    if ("apis/" + v->info.GroupVersion() == gv) out.push_back(v);
  }
  return out;
}

}  // namespace

std::optional<std::string> CustomOpenApiV3Document(std::string_view gv) {
  const std::vector<const CustomResourceVersion*> served = ServedAt(gv);
  if (served.empty()) return std::nullopt;
  Json paths = Json::object();
  Json schemas = Json::object();
  for (const CustomResourceVersion* v : served) {
    const ResourceInfo& r = v->info;
    const std::string base = "/apis/" + r.GroupVersion();
    const std::string path =
        r.namespaced ? fmt::format("{}/namespaces/{{namespace}}/{}/{{name}}", base, r.plural)
                     : fmt::format("{}/{}/{{name}}", base, r.plural);
    paths[path] = PatchOperation(r);
    schemas[fmt::format("{}.{}.{}", ReversedGroup(r.group), r.version, r.kind)] = KindSchema(*v);
  }
  AddObjectMeta(schemas);
  return Json{{"openapi", "3.0.0"},
              {"info", {{"title", "Berth"}, {"version", "v1.32.0"}}},
              {"paths", std::move(paths)},
              {"components", {{"schemas", std::move(schemas)}}}}
      .dump();
}

std::vector<std::pair<std::string, std::string>> CustomOpenApiV3Index() {
  std::set<std::string> gvs;
  for (const CustomResourceVersion* v : CustomResources()) gvs.insert(v->info.GroupVersion());
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& gv : gvs) {
    const std::string key = "apis/" + gv;
    auto doc = CustomOpenApiV3Document(key);
    if (!doc) continue;
    // The hash changes with the document: clients cache a document by its URL.
    out.emplace_back(
        key, fmt::format("/openapi/v3/{}?hash={:016X}", key, std::hash<std::string>{}(*doc)));
  }
  return out;
}

}  // namespace berth::apiserver
