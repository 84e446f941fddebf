#include "apiserver/crd_admission.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_schema.h"
#include "apiserver/name_validation.h"
#include "apiserver/store.h"
#include "apiserver/validation.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

std::string Str(const Json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool IsDnsLabel(const std::string& s) {
  static const std::regex kLabel("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, kLabel);
}

bool IsDns1035Label(const std::string& s) {
  static const std::regex kLabel("[a-z]([-a-z0-9]*[a-z0-9])?");
  return !s.empty() && s.size() <= 63 && std::regex_match(s, kLabel);
}

bool IsSubdomain(const std::string& s) {
  static const std::regex kSubdomain(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return !s.empty() && s.size() <= 253 && std::regex_match(s, kSubdomain);
}

// "PodGroup.scheduling.x-k8s.io "pg" is invalid: ..." with one error, or a bracketed list.
Error Invalid(const std::string& qualified_kind, const Json& obj,
              const std::vector<std::string>& errors) {
  std::string name;
  if (obj.contains("metadata") && obj["metadata"].is_object()) {
    name = Str(obj["metadata"], "name");
  }
  std::string what = errors.front();
  if (errors.size() > 1) {
    what = "[";
    for (size_t i = 0; i < errors.size(); ++i) what += (i ? ", " : "") + errors[i];
    what += "]";
  }
  return Error{fmt::format("{} \"{}\" is invalid: {}", qualified_kind, name, what),
               ErrorCode::kInvalid};
}

void DefaultCrd(Json& crd) {
  Json& spec = crd["spec"];
  if (!spec.is_object()) return;
  Json& names = spec["names"];
  if (!names.is_object()) names = Json::object();
  const std::string kind = Str(names, "kind");
  if (Str(names, "singular").empty() && !kind.empty()) {
    std::string singular = kind;
    std::transform(singular.begin(), singular.end(), singular.begin(), ::tolower);
    names["singular"] = singular;
  }
  if (Str(names, "listKind").empty() && !kind.empty()) names["listKind"] = kind + "List";
  if (!spec.contains("conversion")) spec["conversion"] = {{"strategy", "None"}};
}

void CheckNames(const Json& spec, std::vector<std::string>* errs) {
  const Json names = spec.value("names", Json::object());
  const std::string plural = Str(names, "plural");
  if (plural.empty()) {
    errs->push_back("spec.names.plural: Required value");
  } else if (!IsDnsLabel(plural)) {
    errs->push_back(fmt::format("spec.names.plural: Invalid value: \"{}\": a lowercase RFC 1123 "
                                "label must consist of lower case alphanumeric characters or "
                                "'-', and must start and end with an alphanumeric character",
                                plural));
  }
  const std::string singular = Str(names, "singular");
  if (!singular.empty() && !IsDnsLabel(singular)) {
    errs->push_back(fmt::format("spec.names.singular: Invalid value: \"{}\": a lowercase RFC "
                                "1123 label must consist of lower case alphanumeric characters "
                                "or '-', and must start and end with an alphanumeric character",
                                singular));
  }
  if (Str(names, "kind").empty()) errs->push_back("spec.names.kind: Required value");
  const Json shorts = names.value("shortNames", Json::array());
  for (size_t i = 0; shorts.is_array() && i < shorts.size(); ++i) {
    if (!shorts[i].is_string() || !IsDnsLabel(shorts[i].get<std::string>())) {
      errs->push_back(fmt::format("spec.names.shortNames[{}]: Invalid value: {}: a lowercase "
                                  "RFC 1123 label must consist of lower case alphanumeric "
                                  "characters or '-'",
                                  i, shorts[i].dump()));
    }
  }
}

void CheckVersions(const Json& spec, std::vector<std::string>* errs) {
  const Json versions = spec.value("versions", Json::array());
  if (!versions.is_array() || versions.empty()) {
    errs->push_back("spec.versions: Invalid value: null: must have exactly one version marked "
                    "as storage version");
    return;
  }
  int storage = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < versions.size(); ++i) {
    const Json& v = versions[i];
    const std::string base = fmt::format("spec.versions[{}]", i);
    const std::string name = Str(v, "name");
    if (!IsDns1035Label(name)) {
      errs->push_back(fmt::format("{}.name: Invalid value: \"{}\": a DNS-1035 label must consist "
                                  "of lower case alphanumeric characters or '-', start with an "
                                  "alphabetic character, and end with an alphanumeric character",
                                  base, name));
    } else if (!seen.insert(name).second) {
      errs->push_back(fmt::format("{}.name: Duplicate value: \"{}\"", base, name));
    }
    if (v.is_object() && v.value("storage", false)) ++storage;
    Json schema;
    if (v.is_object() && v.contains("schema") && v["schema"].is_object()) {
      schema = v["schema"].value("openAPIV3Schema", Json());
    }
    if (schema.is_null()) {
      errs->push_back(base + ".schema.openAPIV3Schema: Required value: schemas are required");
      continue;
    }
    for (std::string e : StructuralSchemaErrors(schema)) {
      // Named where this version keeps its schema.
      e.replace(0, std::string("spec.validation.openAPIV3Schema").size(),
                base + ".schema.openAPIV3Schema");
      errs->push_back(std::move(e));
    }
  }
  bool any_served = false;
  for (const auto& v : versions) any_served |= v.is_object() && v.value("served", false);
  if (!any_served) {
    errs->push_back("spec.versions: Invalid value: " + versions.dump() +
                    ": must have at least one version marked as served");
  }
  if (storage != 1) {
    errs->push_back("spec.versions: Invalid value: " + versions.dump() +
                    ": must have exactly one version marked as storage version");
  }
}

std::vector<std::string> CrdErrors(const Json& crd) {
  std::vector<std::string> errs;
  const Json spec = crd.value("spec", Json());
  if (!spec.is_object()) return {"spec: Required value"};
  const std::string group = Str(spec, "group");
  if (group.empty()) {
    errs.push_back("spec.group: Required value");
  } else if (!IsSubdomain(group) || group.find('.') == std::string::npos) {
    errs.push_back(fmt::format(
        "spec.group: Invalid value: \"{}\": should be a domain with at least one dot", group));
  }
  const std::string scope = Str(spec, "scope");
  if (scope.empty()) {
    errs.push_back("spec.scope: Required value");
  } else if (scope != "Cluster" && scope != "Namespaced") {
    errs.push_back(fmt::format(
        "spec.scope: Unsupported value: \"{}\": supported values: \"Cluster\", \"Namespaced\"",
        scope));
  }
  CheckNames(spec, &errs);
  const std::string plural = Str(spec.value("names", Json::object()), "plural");
  const std::string name = Str(crd.value("metadata", Json::object()), "name");
  if (name != plural + "." + group) {
    errs.insert(errs.begin(), fmt::format("metadata.name: Invalid value: \"{}\": must be "
                                          "spec.names.plural+\".\"+spec.group",
                                          name));
  }
  CheckVersions(spec, &errs);
  const std::string strategy = Str(spec.value("conversion", Json::object()), "strategy");
  if (strategy != "None") {
    errs.push_back(fmt::format("spec.conversion.strategy: Unsupported value: \"{}\": supported "
                               "values: \"None\"",
                               strategy));
  }
  return errs;
}

// Sets condition `type` to True, keeping its transition time when it already was.
void SetCondition(Json& status, const std::string& type, const std::string& reason,
                  const std::string& message, const std::string& now) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  for (auto& c : conds) {
    if (c.is_object() && Str(c, "type") == type) {
      if (Str(c, "status") != "True") c["lastTransitionTime"] = now;
      c["status"] = "True";
      c["reason"] = reason;
      c["message"] = message;
      return;
    }
  }
  conds.push_back({{"type", type},
                   {"status", "True"},
                   {"lastTransitionTime", now},
                   {"reason", reason},
                   {"message", message}});
}

}  // namespace

bool IsCrdResource(const ResourceInfo& r) {
  return r.group == "apiextensions.k8s.io" && r.plural == "customresourcedefinitions";
}

VoidResult AdmitCrd(const ResourceInfo& r, Json& crd, bool is_create) {
  (void)r;
  DefaultCrd(crd);
  if (auto errs = CrdErrors(crd); !errs.empty()) {
    return Invalid("CustomResourceDefinition.apiextensions.k8s.io", crd, errs);
  }
  // Served at once: both conditions hold from the first write.
  const std::string now = FormatTimestamp(NowUnixSeconds());
  Json& status = crd["status"];
  if (!status.is_object()) status = Json::object();
  status["acceptedNames"] = crd["spec"]["names"];
  SetCondition(status, "NamesAccepted", "NoConflicts", "no conflicts found", now);
  SetCondition(status, "Established", "InitialNamesAccepted", "the initial names have been accepted",
               now);
  Json versions = Json::array();
  for (const auto& v : crd["spec"]["versions"]) {
    if (v.value("storage", false)) versions.push_back(v["name"]);
  }
  status["storedVersions"] = versions;
  if (is_create) {
    Json& finalizers = crd["metadata"]["finalizers"];
    if (!finalizers.is_array()) finalizers = Json::array();
    if (std::find(finalizers.begin(), finalizers.end(), Json(kCrdCleanupFinalizer)) ==
        finalizers.end()) {
      finalizers.push_back(kCrdCleanupFinalizer);
    }
  }
  return {};
}

VoidResult AdmitCustomObject(const CustomResourceVersion& v, Json& obj, bool is_create) {
  const ResourceInfo& r = v.info;
  if (is_create) {
    if (auto ok = ValidateNewName(r, obj); !ok.ok()) return ok;
    // With a status subresource, status is written only there.
    if (std::find(r.subresources.begin(), r.subresources.end(), "status") !=
        r.subresources.end()) {
      obj.erase("status");
    }
  }
  if (auto ok = ValidateObject(r, obj); !ok.ok()) return ok;
  if (!v.schema.is_object()) return {};
  PruneUnknownFields(v.schema, obj);
  ApplySchemaDefaults(v.schema, obj);
  if (auto errs = ValidateAgainstSchema(v.schema, obj); !errs.empty()) {
    return Invalid(r.kind + "." + r.group, obj, errs);
  }
  return {};
}

}  // namespace berth::apiserver
