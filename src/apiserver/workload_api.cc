#include "apiserver/workload_api.h"

#include <fmt/format.h>

#include <set>
#include <string>

#include "apiserver/crd_registry.h"
#include "apiserver/field_errors.h"
#include "apiserver/resource_validation_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using resource_validation::DnsLabel;
using resource_validation::DnsSubdomain;
using resource_validation::FieldErrors;
using resource_validation::Items;
using resource_validation::Member;
using resource_validation::SemanticEqual;
using resource_validation::Str;

// The schemas, in the words of the kinds' Go types (staging/src/k8s.io/api/scheduling/v1beta1).
constexpr char kSchemas[] = R"json({
  "GangSchedulingPolicy": {"type": "object", "properties": {
    "minCount": {"type": "integer", "format": "int32"}}},
  "PodGroupSchedulingPolicy": {"type": "object", "properties": {
    "basic": {"type": "object"},
    "gang": {"$ref": "GangSchedulingPolicy"}}},
  "DisruptionMode": {"type": "object", "properties": {
    "single": {"type": "object"},
    "all": {"type": "object"}}},
  "PodGroupResourceClaim": {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"},
    "resourceClaimName": {"type": "string"},
    "resourceClaimTemplateName": {"type": "string"}}},
  "PodGroupTemplate": {"type": "object", "required": ["name", "schedulingPolicy"], "properties": {
    "name": {"type": "string"},
    "schedulingPolicy": {"$ref": "PodGroupSchedulingPolicy"},
    "resourceClaims": {"type": "array", "items": {"$ref": "PodGroupResourceClaim"},
                       "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
    "disruptionMode": {"$ref": "DisruptionMode"},
    "priorityClassName": {"type": "string"},
    "priority": {"type": "integer", "format": "int32"}}},
  "Condition": {"type": "object", "required": ["type", "status"], "properties": {
    "type": {"type": "string"},
    "status": {"type": "string"},
    "observedGeneration": {"type": "integer", "format": "int64"},
    "lastTransitionTime": {"type": "string", "format": "date-time"},
    "reason": {"type": "string"},
    "message": {"type": "string"}}}
})json";

// `schema` with each {"$ref": NAME} replaced by the named schema of kSchemas.
Json Resolved(const Json& schema, const Json& named) {
  if (schema.is_object()) {
    if (auto ref = schema.find("$ref"); ref != schema.end() && ref->is_string()) {
      return Resolved(named.at(ref->get<std::string>()), named);
    }
    Json out = Json::object();
    for (auto it = schema.begin(); it != schema.end(); ++it) {
      out[it.key()] = Resolved(it.value(), named);
    }
    return out;
  }
  if (schema.is_array()) {
    Json out = Json::array();
    for (const auto& v : schema) out.push_back(Resolved(v, named));
    return out;
  }
  return schema;
}

Json Definition(const char* plural, const char* kind, const Json& spec_schema,
                const Json& status_schema) {
  Json root = {{"type", "object"},
               {"required", {"spec"}},
               {"properties",
                {{"apiVersion", {{"type", "string"}}},
                 {"kind", {{"type", "string"}}},
                 {"metadata", {{"type", "object"}}},
                 {"spec", spec_schema}}}};
  Json version = {{"name", "v1beta1"},
                  {"served", true},
                  {"storage", true},
                  {"schema", {{"openAPIV3Schema", root}}}};
  if (!status_schema.is_null()) {
    version["schema"]["openAPIV3Schema"]["properties"]["status"] = status_schema;
    version["subresources"] = {{"status", Json::object()}};
  }
  std::string singular = kind;
  for (char& c : singular) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", fmt::format("{}.scheduling.k8s.io", plural)}}},
          {"spec",
           {{"group", "scheduling.k8s.io"},
            {"scope", "Namespaced"},
            {"names",
             {{"plural", plural},
              {"singular", singular},
              {"kind", kind},
              {"listKind", std::string(kind) + "List"}}},
            {"versions", {version}}}}};
}

Json BuildDefinitions() {
  const Json named = Json::parse(kSchemas);
  const Json workload_spec = Resolved(Json::parse(R"json({
    "type": "object", "properties": {
      "controllerRef": {"type": "object", "required": ["kind", "name"], "properties": {
        "apiGroup": {"type": "string"}, "kind": {"type": "string"}, "name": {"type": "string"}}},
      "podGroupTemplates": {"type": "array", "items": {"$ref": "PodGroupTemplate"},
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"]}}})json"),
                                      named);
  Json pod_group = Resolved(Json::parse(R"json({
    "type": "object", "required": ["schedulingPolicy"], "properties": {
      "workloadRef": {"type": "object", "required": ["workloadName", "templateName"],
                      "properties": {"workloadName": {"type": "string"},
                                     "templateName": {"type": "string"}}},
      "schedulingPolicy": {"$ref": "PodGroupSchedulingPolicy"},
      "resourceClaims": {"type": "array", "items": {"$ref": "PodGroupResourceClaim"},
                         "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"]},
      "disruptionMode": {"$ref": "DisruptionMode"},
      "priorityClassName": {"type": "string"},
      "priority": {"type": "integer", "format": "int32"}}})json"),
                            named);
  // Unset, a PodGroup's disruption mode is Single.
  pod_group["properties"]["disruptionMode"]["default"] = {{"single", Json::object()}};
  const Json pod_group_status = Resolved(Json::parse(R"json({
    "type": "object", "properties": {
      "conditions": {"type": "array", "items": {"$ref": "Condition"},
                     "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"]},
      "resourceClaimStatuses": {"type": "array", "x-kubernetes-list-type": "map",
                                "x-kubernetes-list-map-keys": ["name"],
                                "items": {"type": "object", "required": ["name"], "properties": {
                                  "name": {"type": "string"},
                                  "resourceClaimName": {"type": "string"}}}}}})json"),
                                         named);
  return Json::array({Definition("podgroups", "PodGroup", pod_group, pod_group_status),
                      Definition("workloads", "Workload", workload_spec, Json())});
}

constexpr int kMaxPodGroupTemplates = 8;
constexpr int kMaxResourceClaims = 4;
constexpr int64_t kHighestUserDefinablePriority = 1000000000;

// A one-of union: exactly one of `members` set in `obj`.
void ExactlyOne(FieldErrors& e, const std::string& path, const Json& obj,
                std::initializer_list<const char*> members) {
  int set = 0;
  std::string names;
  for (const char* m : members) {
    if (!Member(obj, m).is_null()) ++set;
    names += fmt::format("{}`{}`", names.empty() ? "" : ", ", m);
  }
  if (set != 1) e.Invalid(path, Json(""), "must specify exactly one of: " + names);
}

void SchedulingPolicy(FieldErrors& e, const std::string& path, const Json& policy) {
  ExactlyOne(e, path, policy, {"basic", "gang"});
  const Json& gang = Member(policy, "gang");
  if (!gang.is_object()) return;
  const Json& min_count = Member(gang, "minCount");
  if (min_count.is_null()) {
    e.Required(path + ".gang.minCount");
  } else if (min_count.is_number_integer() && min_count.get<int64_t>() < 1) {
    e.Invalid(path + ".gang.minCount", min_count, "must be greater than or equal to 1");
  }
}

void ResourceClaims(FieldErrors& e, const std::string& path, const Json& claims) {
  if (!claims.is_array()) return;
  if (claims.size() > kMaxResourceClaims) e.TooMany(path, claims.size(), kMaxResourceClaims);
  std::set<std::string> seen;
  for (size_t i = 0; i < claims.size(); ++i) {
    const std::string at = resource_validation::Idx(path, i);
    const std::string name = Str(claims[i], "name");
    DnsLabel(e, at + ".name", name);
    if (!seen.insert(name).second) e.Duplicate(at + ".name", Json(name));
    ExactlyOne(e, at, claims[i], {"resourceClaimName", "resourceClaimTemplateName"});
    for (const char* ref : {"resourceClaimName", "resourceClaimTemplateName"}) {
      if (Member(claims[i], ref).is_string()) {
        DnsSubdomain(e, fmt::format("{}.{}", at, ref), Str(claims[i], ref));
      }
    }
  }
}

// The fields a PodGroup and a Workload's template share.
void GroupFields(FieldErrors& e, const std::string& path, const Json& group) {
  SchedulingPolicy(e, path + ".schedulingPolicy", Member(group, "schedulingPolicy"));
  ResourceClaims(e, path + ".resourceClaims", Member(group, "resourceClaims"));
  const Json& mode = Member(group, "disruptionMode");
  if (!mode.is_null()) ExactlyOne(e, path + ".disruptionMode", mode, {"single", "all"});
  if (Member(group, "priorityClassName").is_string()) {
    DnsSubdomain(e, path + ".priorityClassName", Str(group, "priorityClassName"));
  }
  const Json& priority = Member(group, "priority");
  if (priority.is_number_integer() && priority.get<int64_t>() > kHighestUserDefinablePriority) {
    e.Invalid(path + ".priority", priority,
              fmt::format("must be less than or equal to {}", kHighestUserDefinablePriority));
  }
}

// kube-apiserver's immutable fields: `fields` of `path` may not change in an update.
void Immutable(FieldErrors& e, const std::string& path, const Json& next, const Json& old,
               std::initializer_list<const char*> fields) {
  for (const char* f : fields) {
    if (!SemanticEqual(Member(next, f), Member(old, f))) {
      e.Invalid(fmt::format("{}.{}", path, f), Member(next, f), "field is immutable");
    }
  }
}

// The policy chosen at creation stays: basic may not change, gang may not be set or unset
// (its minCount may change).
void PolicyUpdate(FieldErrors& e, const std::string& path, const Json& next, const Json& old) {
  if (!SemanticEqual(Member(next, "basic"), Member(old, "basic"))) {
    e.Invalid(path + ".basic", Member(next, "basic"), "field is immutable");
  }
  const bool had = !Member(old, "gang").is_null();
  const bool has = !Member(next, "gang").is_null();
  if (!had && has) e.Forbidden(path + ".gang", "field cannot be set once created");
  if (had && !has) e.Forbidden(path + ".gang", "field cannot be cleared once set");
}

void ValidatePodGroup(FieldErrors& e, const Json& obj, const Json* current) {
  const Json& spec = Member(obj, "spec");
  const Json& ref = Member(spec, "workloadRef");
  if (ref.is_object()) {
    DnsSubdomain(e, "spec.workloadRef.workloadName", Str(ref, "workloadName"));
    DnsLabel(e, "spec.workloadRef.templateName", Str(ref, "templateName"));
  }
  GroupFields(e, "spec", spec);
  if (current == nullptr) return;
  const Json& old = Member(*current, "spec");
  Immutable(e, "spec", spec, old,
            {"workloadRef", "resourceClaims", "disruptionMode", "priorityClassName", "priority"});
  PolicyUpdate(e, "spec.schedulingPolicy", Member(spec, "schedulingPolicy"),
               Member(old, "schedulingPolicy"));
}

void ValidateWorkload(FieldErrors& e, const Json& obj, const Json* current) {
  const Json& spec = Member(obj, "spec");
  const Json& ref = Member(spec, "controllerRef");
  if (ref.is_object() && !Str(ref, "apiGroup").empty()) {
    DnsSubdomain(e, "spec.controllerRef.apiGroup", Str(ref, "apiGroup"));
  }
  const Json& templates = Items(spec, "podGroupTemplates");
  if (templates.empty()) {
    e.Invalid("spec", Json(""),
              "must specify exactly one of: `podGroupTemplates`, `compositePodGroupTemplates`");
  }
  if (templates.size() > kMaxPodGroupTemplates) {
    e.TooMany("spec.podGroupTemplates", templates.size(), kMaxPodGroupTemplates);
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < templates.size(); ++i) {
    const std::string at = resource_validation::Idx("spec.podGroupTemplates", i);
    const std::string name = Str(templates[i], "name");
    DnsLabel(e, at + ".name", name);
    if (!seen.insert(name).second) e.Duplicate(at + ".name", Json(name));
    GroupFields(e, at, templates[i]);
  }
  if (current == nullptr) return;
  const Json& old_spec = Member(*current, "spec");
  Immutable(e, "spec", spec, old_spec, {"controllerRef"});
  // Templates may be neither added nor removed; each keeps its immutable fields.
  const Json& old = Items(old_spec, "podGroupTemplates");
  for (size_t i = 0; i < templates.size(); ++i) {
    const std::string at = resource_validation::Idx("spec.podGroupTemplates", i);
    const std::string name = Str(templates[i], "name");
    const Json* before = nullptr;
    for (const auto& t : old) {
      if (Str(t, "name") == name) before = &t;
    }
    if (before == nullptr) {
      e.Forbidden(at, "items cannot be added");
      continue;
    }
    Immutable(e, at, templates[i], *before,
              {"resourceClaims", "disruptionMode", "priorityClassName", "priority"});
    PolicyUpdate(e, at + ".schedulingPolicy", Member(templates[i], "schedulingPolicy"),
                 Member(*before, "schedulingPolicy"));
  }
  for (const auto& t : old) {
    const std::string name = Str(t, "name");
    if (seen.count(name) == 0) {
      e.Forbidden("spec.podGroupTemplates", fmt::format("item \"{}\" cannot be removed", name));
    }
  }
}

}  // namespace

const Json& WorkloadApiDefinitions() {
  static const Json kDefinitions = BuildDefinitions();
  return kDefinitions;
}

void RegisterWorkloadApi() {
  for (const Json& crd : WorkloadApiDefinitions()) {
    const std::string kind = crd["spec"]["names"]["kind"].get<std::string>();
    RegisterBuiltinCrd(crd, [kind](const Json& obj, const Json* current) {
      return ValidateWorkloadApiObject(kind, obj, current);
    });
  }
}

VoidResult ValidateWorkloadApiObject(std::string_view kind, const Json& obj, const Json* current) {
  FieldErrors e;
  if (kind == "PodGroup") ValidatePodGroup(e, obj, current);
  if (kind == "Workload") ValidateWorkload(e, obj, current);
  if (e.list.empty()) return {};
  const Json& meta = Member(obj, "metadata");
  return InvalidObject(fmt::format("{}.scheduling.k8s.io", kind), Str(meta, "name"),
                       std::move(e.list));
}

}  // namespace berth::apiserver
