#include "apiserver/crd_admission.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "api/codec.h"
#include "api/validation.h"
#include "apiserver/crd_schema.h"
#include "apiserver/crd_shape.h"
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

// "PodGroup.scheduling.x-k8s.io "pg" is invalid: ..." with one error, or a bracketed list.
ApiError Invalid(const std::string& qualified_kind, const Json& obj, FieldErrorList errors) {
  std::string name;
  if (obj.contains("metadata") && obj["metadata"].is_object()) {
    name = Str(obj["metadata"], "name");
  }
  return InvalidObject(qualified_kind, name, std::move(errors));
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

// IsDNS1035Label's message.
std::string Dns1035Message() {
  return "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start "
         "with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name', "
         " or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), ::tolower);
  return s;
}

void CheckNames(const Json& spec, FieldErrorList* errs) {
  const Json names = spec.value("names", Json::object());
  const std::string plural = Str(names, "plural");
  if (plural.empty()) errs->push_back({FieldErrorType::kRequired, "spec.names.plural", ""});
  // Plural and singular as they are; kinds may have mixed case.
  struct Rule {
    const char* field;
    bool lowered;
  };
  for (const Rule& rule : {Rule{"plural", false}, Rule{"singular", false}, Rule{"kind", true},
                           Rule{"listKind", true}}) {
    const std::string value = Str(names, rule.field);
    if (value.empty() || validation::IsDNS1035Label(rule.lowered ? Lower(value) : value)) continue;
    errs->push_back(
        {FieldErrorType::kInvalid, fmt::format("spec.names.{}", rule.field),
         fmt::format("\"{}\": {}{}", value,
                     rule.lowered ? "may have mixed case, but should otherwise match: " : "",
                     Dns1035Message())});
  }
  if (Str(names, "kind").empty())
    errs->push_back({FieldErrorType::kRequired, "spec.names.kind", ""});
  const Json shorts = names.value("shortNames", Json::array());
  for (size_t i = 0; shorts.is_array() && i < shorts.size(); ++i) {
    if (!shorts[i].is_string() || !validation::IsDNS1123Label(shorts[i].get<std::string>())) {
      errs->push_back(
          {FieldErrorType::kInvalid, fmt::format("spec.names.shortNames[{}]", i),
           fmt::format("{}: a lowercase RFC 1123 label must consist of lower case alphanumeric "
                       "characters or '-', and must start and end with an alphanumeric "
                       "character (e.g. 'my-name',  or '123-abc', regex used for validation is "
                       "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                       shorts[i].dump())});
    }
  }
}

// A simple JSON path under `under` (".spec" or ".status"; empty: either).
bool PathUnder(const std::string& path, const std::string& under) {
  if (under.empty()) return PathUnder(path, ".spec") || PathUnder(path, ".status");
  return path.rfind(under + ".", 0) == 0 && path.size() > under.size() + 1;
}

// additionalPrinterColumns and the scale subresource's paths of version `v`.
void CheckColumnsAndScale(const Json& v, const std::string& base, FieldErrorList* errs) {
  const Json columns = v.value("additionalPrinterColumns", Json::array());
  for (size_t i = 0; columns.is_array() && i < columns.size(); ++i) {
    const std::string at = fmt::format("{}.additionalPrinterColumns[{}]", base, i);
    const std::string type = Str(columns[i], "type");
    if (Str(columns[i], "name").empty())
      errs->push_back({FieldErrorType::kRequired, at + ".name", ""});
    if (type.empty()) {
      errs->push_back({FieldErrorType::kRequired, at + ".type", ""});
    } else if (type != "boolean" && type != "date" && type != "integer" && type != "number" &&
               type != "string") {
      errs->push_back({FieldErrorType::kNotSupported, at + ".type",
                       fmt::format("\"{}\": supported values: \"boolean\", \"date\", "
                                   "\"integer\", \"number\", \"string\"",
                                   type)});
    }
    const std::string path = Str(columns[i], "jsonPath");
    if (path.empty()) {
      errs->push_back({FieldErrorType::kRequired, at + ".jsonPath", ""});
    } else if (path.front() != '.') {
      errs->push_back({FieldErrorType::kInvalid, at + ".jsonPath",
                       fmt::format("\"{}\": must be a simple json path starting with .", path)});
    }
  }
  const Json subs = v.value("subresources", Json::object());
  const Json scale = subs.is_object() ? subs.value("scale", Json()) : Json();
  if (!scale.is_object()) return;
  const std::string at = base + ".subresources.scale";
  struct PathRule {
    const char* field;
    const char* under;
    bool required;
  };
  for (const PathRule& rule : {PathRule{"specReplicasPath", ".spec", true},
                               PathRule{"statusReplicasPath", ".status", true},
                               PathRule{"labelSelectorPath", "", false}}) {
    const std::string path = Str(scale, rule.field);
    if (path.empty()) {
      if (rule.required) {
        errs->push_back({FieldErrorType::kRequired, fmt::format("{}.{}", at, rule.field), ""});
      }
    } else if (!PathUnder(path, rule.under)) {
      errs->push_back({FieldErrorType::kInvalid, fmt::format("{}.{}", at, rule.field),
                       fmt::format("\"{}\": should be a json path under {}", path,
                                   *rule.under ? rule.under : "either .spec or .status")});
    }
  }
}

void CheckVersions(const Json& spec, FieldErrorList* errs) {
  const Json versions = spec.value("versions", Json::array());
  if (!versions.is_array() || versions.empty()) {
    errs->push_back({FieldErrorType::kInvalid, "spec.versions",
                     "null: must have exactly one version marked as storage version"});
    return;
  }
  int storage = 0;
  std::set<std::string> seen;
  for (size_t i = 0; i < versions.size(); ++i) {
    const Json& v = versions[i];
    const std::string base = fmt::format("spec.versions[{}]", i);
    const std::string name = Str(v, "name");
    if (!validation::IsDNS1035Label(name)) {
      errs->push_back({FieldErrorType::kInvalid, base + ".name",
                       fmt::format("\"{}\": {}", name, Dns1035Message())});
    } else if (!seen.insert(name).second) {
      errs->push_back({FieldErrorType::kDuplicate, base + ".name", fmt::format("\"{}\"", name)});
    }
    if (!v.is_object()) continue;
    if (v.value("storage", false)) ++storage;
    CheckColumnsAndScale(v, base, errs);
    Json schema;
    if (v.is_object() && v.contains("schema") && v["schema"].is_object()) {
      schema = v["schema"].value("openAPIV3Schema", Json());
    }
    if (schema.is_null()) {
      errs->push_back(
          {FieldErrorType::kRequired, base + ".schema.openAPIV3Schema", "schemas are required"});
      continue;
    }
    // Named where this version keeps its schema.
    for (FieldError& e : StructuralSchemaErrors(schema, base + ".schema.openAPIV3Schema")) {
      errs->push_back(std::move(e));
    }
  }
  bool any_served = false;
  for (const auto& v : versions) any_served |= v.is_object() && v.value("served", false);
  if (!any_served) {
    errs->push_back({FieldErrorType::kInvalid, "spec.versions",
                     versions.dump() + ": must have at least one version marked as served"});
  }
  if (storage != 1) {
    errs->push_back(
        {FieldErrorType::kInvalid, "spec.versions",
         versions.dump() + ": must have exactly one version marked as storage version"});
  }
}

FieldErrorList CrdErrors(const Json& crd) {
  FieldErrorList errs;
  const Json spec = crd.value("spec", Json());
  if (!spec.is_object()) return {{FieldErrorType::kRequired, "spec", ""}};
  const std::string group = Str(spec, "group");
  if (group.empty()) {
    errs.push_back({FieldErrorType::kRequired, "spec.group", ""});
  } else if (!validation::IsDNS1123Subdomain(group) || group.find('.') == std::string::npos) {
    errs.push_back({FieldErrorType::kInvalid, "spec.group",
                    fmt::format("\"{}\": should be a domain with at least one dot", group)});
  }
  const std::string scope = Str(spec, "scope");
  if (scope.empty()) {
    errs.push_back({FieldErrorType::kRequired, "spec.scope", ""});
  } else if (scope != "Cluster" && scope != "Namespaced") {
    errs.push_back({FieldErrorType::kNotSupported, "spec.scope",
                    fmt::format("\"{}\": supported values: \"Cluster\", \"Namespaced\"", scope)});
  }
  CheckNames(spec, &errs);
  const std::string plural = Str(spec.value("names", Json::object()), "plural");
  const std::string name = Str(crd.value("metadata", Json::object()), "name");
  if (name != plural + "." + group) {
    errs.insert(errs.begin(),
                {FieldErrorType::kInvalid, "metadata.name",
                 fmt::format("\"{}\": must be spec.names.plural+\".\"+spec.group", name)});
  }
  CheckVersions(spec, &errs);
  const std::string strategy = Str(spec.value("conversion", Json::object()), "strategy");
  if (strategy != "None") {
    errs.push_back({FieldErrorType::kNotSupported, "spec.conversion.strategy",
                    fmt::format("\"{}\": supported values: \"None\"", strategy)});
  }
  return errs;
}

// Sets condition `type` to `value`, keeping its transition time when it already had it.
void SetCondition(Json& status, const std::string& type, bool value, const std::string& reason,
                  const std::string& message, const std::string& now) {
  Json& conds = status["conditions"];
  if (!conds.is_array()) conds = Json::array();
  const std::string v = value ? "True" : "False";
  for (auto& c : conds) {
    if (c.is_object() && Str(c, "type") == type) {
      if (Str(c, "status") != v) c["lastTransitionTime"] = now;
      c["status"] = v;
      c["reason"] = reason;
      c["message"] = message;
      return;
    }
  }
  conds.push_back({{"type", type},
                   {"status", v},
                   {"lastTransitionTime", now},
                   {"reason", reason},
                   {"message", message}});
}

// The names of `names` another served CRD of `group` already uses, as the naming controller
// reports the first: {reason, message}; empty reason when there is no conflict.
std::pair<std::string, std::string> NameConflict(const std::string& crd_name,
                                                 const std::string& group, const Json& names) {
  const std::string plural = Str(names, "plural"), singular = Str(names, "singular");
  const std::string kind = Str(names, "kind"), list_kind = Str(names, "listKind");
  std::vector<std::string> shorts;
  for (const auto& s : names.value("shortNames", Json::array())) {
    if (s.is_string()) shorts.push_back(s.get<std::string>());
  }
  for (const CustomResourceVersion* v : CustomResources()) {
    const ResourceInfo& o = v->info;
    if (o.group != group || v->crd_name == crd_name) continue;
    auto used = [&](const std::string& n) {
      return !n.empty() &&
             (n == o.plural || n == o.singular ||
              std::find(o.short_names.begin(), o.short_names.end(), n) != o.short_names.end());
    };
    if (used(plural)) return {"PluralConflict", fmt::format("\"{}\" is already in use", plural)};
    if (used(singular)) {
      return {"SingularConflict", fmt::format("\"{}\" is already in use", singular)};
    }
    for (const auto& s : shorts) {
      if (used(s)) return {"ShortNamesConflict", fmt::format("\"{}\" is already in use", s)};
    }
    if (kind == o.kind) return {"KindConflict", fmt::format("\"{}\" is already in use", kind)};
    if (!list_kind.empty() && list_kind == o.kind + "List") {
      return {"ListKindConflict", fmt::format("\"{}\" is already in use", list_kind)};
    }
  }
  return {};
}

// status: acceptedNames and the NamesAccepted and Established conditions (set at once: nothing
// needs to start before the resource is served), and storedVersions, which keeps every version
// objects may have been stored in.
void SetCrdStatus(Json& crd) {
  const std::string now = FormatTimestamp(NowUnixSeconds());
  const Json& spec = crd["spec"];
  Json& status = crd["status"];
  if (!status.is_object()) status = Json::object();
  const auto [reason, message] =
      NameConflict(Str(crd["metadata"], "name"), Str(spec, "group"), spec["names"]);
  if (reason.empty()) {
    status["acceptedNames"] = spec["names"];
    SetCondition(status, "NamesAccepted", true, "NoConflicts", "no conflicts found", now);
    SetCondition(status, "Established", true, "InitialNamesAccepted",
                 "the initial names have been accepted", now);
  } else {
    if (!status.contains("acceptedNames")) status["acceptedNames"] = {{"plural", ""}, {"kind", ""}};
    SetCondition(status, "NamesAccepted", false, reason, message, now);
    SetCondition(status, "Established", false, "NotAccepted", "not all names are accepted", now);
  }
  // Versions no longer defined are dropped (conversion None reads their objects as any
  // other version); kube-apiserver instead refuses to drop them until status says so.
  Json stored = Json::array();
  for (const auto& name : status.value("storedVersions", Json::array())) {
    for (const auto& v : spec["versions"]) {
      if (v["name"] == name) stored.push_back(name);
    }
  }
  for (const auto& v : spec["versions"]) {
    if (v.value("storage", false) &&
        std::find(stored.begin(), stored.end(), v["name"]) == stored.end()) {
      stored.push_back(v["name"]);
    }
  }
  status["storedVersions"] = stored;
}

}  // namespace

bool IsCrdResource(const ResourceInfo& r) {
  return r.group == "apiextensions.k8s.io" && r.plural == "customresourcedefinitions";
}

VoidResult AdmitCrd(const ResourceInfo& r, Json& crd, bool is_create) {
  (void)r;
  // Refused as kube-apiserver's decoder refuses it: nothing of the wrong type is stored.
  if (auto bad = CrdShapeError(crd)) {
    return Error{fmt::format("CustomResourceDefinition in version \"v1\" cannot be handled as "
                             "a CustomResourceDefinition: a field has the wrong type: {}",
                             *bad),
                 ErrorCode::kBadRequest};
  }
  DefaultCrd(crd);
  if (auto errs = CrdErrors(crd); !errs.empty()) {
    return Invalid("CustomResourceDefinition.apiextensions.k8s.io", crd, errs);
  }
  SetCrdStatus(crd);
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

VoidResult ValidateCrdUpdate(const Json& current, const Json& next) {
  const std::string before = Str(current.value("spec", Json::object()), "scope");
  const std::string after = Str(next.value("spec", Json::object()), "scope");
  if (before == after) return {};
  return Invalid(
      "CustomResourceDefinition.apiextensions.k8s.io", next,
      {{FieldErrorType::kInvalid, "spec.scope", fmt::format("\"{}\": field is immutable", after)}});
}

std::vector<std::string> UnknownCustomFieldPaths(std::string_view group, const std::string& kind,
                                                 const Json& obj) {
  const std::string api_version = Str(obj, "apiVersion");
  const std::string version = api_version.substr(api_version.find('/') + 1);
  const CustomResourceVersion* match = nullptr;
  for (const CustomResourceVersion* v : CustomResources()) {
    if (v->info.group != group || v->info.kind != kind) continue;
    if (!match || v->info.version == version) match = v;
  }
  std::vector<std::string> pruned;
  if (!match || !match->schema.is_object()) return pruned;
  Json copy = obj;
  PruneUnknownFields(match->schema, copy, &pruned);
  return pruned;
}

void ListUnknownCustomFields(std::string_view group, const std::string& kind, const Json& obj,
                             std::vector<std::string>* problems) {
  for (const auto& path : UnknownCustomFieldPaths(group, kind, obj)) {
    problems->push_back(fmt::format("unknown field \"{}\"", path));
  }
}

VoidResult AdmitCustomObject(const CustomResourceVersion& v, Json& obj, bool is_create) {
  const ResourceInfo& r = v.info;
  if (is_create && v.terminating) {
    return Error{"create not allowed while custom resource definition is terminating",
                 ErrorCode::kMethodNotAllowed};
  }
  if (is_create) {
    if (auto ok = ValidateNewName(r, obj); !ok.ok()) return ok;
    // With a status subresource, status is written only there.
    if (std::find(r.subresources.begin(), r.subresources.end(), "status") != r.subresources.end()) {
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
