// A pod's resource claims, read from and written to its raw document (the Pod layout is frozen).
#include "berth/api/resource_claims.h"

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace berth {
namespace {

using nlohmann::json;

const json* Child(const json* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

std::optional<std::string> OptStr(const json& obj, const char* key) {
  const json* v = Child(&obj, key);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

json MutableCopy(const Pod& pod) {
  json doc = pod.raw && pod.raw->is_object() ? *pod.raw : json::object();
  if (!doc.contains("apiVersion")) doc["apiVersion"] = "v1";
  if (!doc.contains("kind")) doc["kind"] = "Pod";
  return doc;
}

json& Obj(json& parent, const char* key) {
  json& v = parent[key];
  if (!v.is_object()) v = json::object();
  return v;
}

}  // namespace

std::vector<PodResourceClaim> PodResourceClaimsOf(const Pod& pod) {
  std::vector<PodResourceClaim> out;
  const json* list = Child(Child(pod.raw.get(), "spec"), "resourceClaims");
  if (list == nullptr || !list->is_array()) return out;
  for (const json& e : *list) {
    if (!e.is_object()) continue;
    PodResourceClaim c;
    c.name = OptStr(e, "name").value_or("");
    c.resource_claim_name = OptStr(e, "resourceClaimName");
    c.resource_claim_template_name = OptStr(e, "resourceClaimTemplateName");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> PodResourceClaimStatusesOf(const Pod& pod) {
  std::vector<std::pair<std::string, std::string>> out;
  const json* list = Child(Child(pod.raw.get(), "status"), "resourceClaimStatuses");
  if (list == nullptr || !list->is_array()) return out;
  for (const json& e : *list) {
    if (!e.is_object()) continue;
    auto name = OptStr(e, "name");
    auto claim = OptStr(e, "resourceClaimName");
    if (name && claim) out.emplace_back(*name, *claim);
  }
  return out;
}

void SetPodResourceClaims(Pod& pod, const std::vector<PodResourceClaim>& claims) {
  json doc = MutableCopy(pod);
  json& spec = Obj(doc, "spec");
  if (claims.empty()) {
    spec.erase("resourceClaims");
  } else {
    json list = json::array();
    for (const auto& c : claims) {
      json e = {{"name", c.name}};
      if (c.resource_claim_name) e["resourceClaimName"] = *c.resource_claim_name;
      if (c.resource_claim_template_name)
        e["resourceClaimTemplateName"] = *c.resource_claim_template_name;
      list.push_back(std::move(e));
    }
    spec["resourceClaims"] = std::move(list);
  }
  pod.raw = std::make_shared<const json>(std::move(doc));
}

void SetPodResourceClaimStatuses(Pod& pod,
                                 const std::vector<std::pair<std::string, std::string>>& statuses) {
  json doc = MutableCopy(pod);
  json& status = Obj(doc, "status");
  if (statuses.empty()) {
    status.erase("resourceClaimStatuses");
  } else {
    json list = json::array();
    for (const auto& [name, claim] : statuses)
      list.push_back({{"name", name}, {"resourceClaimName", claim}});
    status["resourceClaimStatuses"] = std::move(list);
  }
  pod.raw = std::make_shared<const json>(std::move(doc));
}

}  // namespace berth
