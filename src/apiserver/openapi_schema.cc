#include "apiserver/openapi_schema.h"

#include <algorithm>
#include <cstring>

namespace berth::apiserver::openapi_schema {
namespace {

constexpr std::string_view kRefPrefix = "#/definitions/";

void CollectRefs(const nlohmann::json& schema, std::vector<std::string>* out) {
  if (schema.is_object()) {
    for (const auto& [key, value] : schema.items()) {
      if (key == "$ref" && value.is_string()) {
        std::string_view ref = value.get_ref<const std::string&>();
        if (ref.rfind(kRefPrefix, 0) == 0) out->emplace_back(ref.substr(kRefPrefix.size()));
      } else if (key != "enum" && key != "x-kubernetes-group-version-kind") {
        CollectRefs(value, out);
      }
    }
  } else if (schema.is_array()) {
    for (const auto& item : schema) CollectRefs(item, out);
  }
}

}  // namespace

const Definition* Find(std::string_view name) {
  auto defs = Definitions();
  auto it = std::lower_bound(defs.begin(), defs.end(), name,
                             [](const Definition& d, std::string_view n) { return d.name < n; });
  if (it == defs.end() || it->name != name) return nullptr;
  return &*it;
}

std::map<std::string, nlohmann::json> ReachableFrom(const std::string* group) {
  std::vector<std::string> pending;
  for (const Definition& d : Definitions()) {
    if (*d.kind != '\0' && (!group || *group == d.group)) pending.emplace_back(d.name);
  }
  std::map<std::string, nlohmann::json> out;
  while (!pending.empty()) {
    std::string name = std::move(pending.back());
    pending.pop_back();
    if (out.count(name)) continue;
    const Definition* d = Find(name);
    if (!d) continue;  // the generator checks that every reference resolves
    nlohmann::json schema = nlohmann::json::parse(d->schema);
    CollectRefs(schema, &pending);
    out.emplace(std::move(name), std::move(schema));
  }
  return out;
}

}  // namespace berth::apiserver::openapi_schema
