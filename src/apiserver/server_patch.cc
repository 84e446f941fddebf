// PATCH: JSON patch, merge patch, strategic merge patch and server-side apply, with the field
// checks kube-apiserver makes of the patch itself and of the patched object.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_admission.h"
#include "apiserver/default_storage_class.h"
#include "apiserver/field_errors.h"
#include "apiserver/field_types.h"
#include "apiserver/patch.h"
#include "apiserver/pod_resize.h"
#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

// The patch in a request's body: JSON (its repeated keys noted in `duplicates`, when given) or
// YAML.
Result<Json> ReadPatchBody(const HttpRequest& req, std::vector<std::string>* duplicates) {
  Json patch;
  if (!(StartsWithJson(req.body, '{') || StartsWithJson(req.body, '[')) ||
      !ParseJsonNotingDuplicates(req.body, kMaxBodyDepth, &patch, duplicates)) {
    auto docs = ParseDocuments(req.body, "patch");
    if (!docs.ok() || docs->size() != 1) {
      return Error{fmt::format("the body of the request could not be decoded: {}",
                               docs.ok() ? "expected one document" : docs.error().message),
                   ErrorCode::kBadRequest};
    }
    patch = std::move((*docs)[0]);
  }
  return patch;
}

// Server-side apply types the applied configuration: a field the kind does not declare fails
// the request whatever the directive.
VoidResult RefuseUndeclaredApplyFields(const ResourceInfo& res, const FieldSchema* schema,
                                       const Json& patch) {
  std::vector<std::string> unknown;
  if (schema) {
    unknown = FindUnknownFields(*schema, patch, FieldPathStyle::kApply);
  } else {
    for (const auto& path : UnknownCustomFieldPaths(res.group, res.kind, patch)) {
      unknown.push_back("." + path);  // a custom resource's, by its schema
    }
  }
  if (unknown.empty()) return {};
  for (auto& u : unknown) u += ": field not declared in schema";
  const Json meta = patch.value("metadata", Json::object());
  std::string api_version = StringField(patch, "apiVersion");
  if (api_version.find('/') == std::string::npos) api_version = "/" + api_version;
  return Error{
      fmt::format("failed to create typed patch object ({}/{}; {}, Kind={}): {}",
                  meta.is_object() ? StringField(meta, "namespace") : "",
                  meta.is_object() ? StringField(meta, "name") : "", api_version,
                  StringField(patch, "kind"),
                  unknown.size() == 1 ? unknown[0] : "errors:\n  " + Join(unknown, "\n  ")),
      ErrorCode::kBadRequest};
}

// What the patch itself breaks (repeated keys, a JSON patch's unknown keys), as kube-apiserver
// words it per patch type. Strict fails an apply on any of them here; other patch types fail
// once the patched object is checked (CheckPatchedFields).
Result<std::vector<std::string>> PatchProblems(PatchType type, FieldValidation fv,
                                               const Json& patch,
                                               const std::vector<std::string>& duplicates) {
  std::vector<std::string> problems;
  if (type == PatchType::kApplyPatch) {
    // The YAML decoder's words for a repeated key.
    for (const auto& d : duplicates) {
      std::string key =
          d.substr(d.find_last_of('.') == std::string::npos ? 0 : d.find_last_of('.') + 1);
      problems.push_back(fmt::format("key {} already set in map", Json(key).dump()));
    }
    if (fv == FieldValidation::kStrict && !problems.empty()) {
      return Error{fmt::format("error strict decoding YAML: error converting YAML to JSON: yaml: "
                               "unmarshal errors:\n  {}",
                               Join(problems, "\n  ")),
                   ErrorCode::kBadRequest};
    }
  } else if (type == PatchType::kJsonPatch) {
    for (const auto& d : duplicates) {
      problems.push_back(fmt::format("json patch duplicate field \"{}\"", d));
    }
    if (fv != FieldValidation::kIgnore && patch.is_array()) {
      for (size_t i = 0; i < patch.size(); ++i) {
        if (!patch[i].is_object()) continue;
        for (const auto& [k, v] : patch[i].items()) {
          if (k != "op" && k != "path" && k != "from" && k != "value") {
            problems.push_back(fmt::format("json patch unknown field \"[{}].{}\"", i, k));
          }
        }
      }
    }
  } else {
    for (const auto& d : duplicates) {
      problems.push_back(fmt::format("duplicate field \"{}\"", d));
    }
  }
  return problems;
}

// The patched object decoded as its kind: what the kind does not declare is dropped,
// reported (Warn, into `warnings` after the patch's own problems), or fails the patch
// (Strict).
VoidResult CheckPatchedFields(const ResourceInfo& res, const FieldSchema* schema, PatchType type,
                              FieldValidation fv, const Json& patch,
                              const std::vector<std::string>& patch_problems, Json& patched,
                              std::vector<std::string>* warnings) {
  const bool apply = type == PatchType::kApplyPatch;
  const bool check = fv != FieldValidation::kIgnore;
  if (schema && !apply) {
    if (auto bad = FindFieldTypeError(*schema, patched)) {
      // A value of the wrong type fails the decode first, in kube-apiserver's words.
      const Json& shown = type == PatchType::kStrategicMergePatch ? patch : patched;
      return InvalidObject("", "",
                           {{FieldErrorType::kInvalid, "patch",
                             fmt::format("{}: {}", Json(shown.dump()).dump(), *bad)}});
    }
    std::vector<std::string> problems = patch_problems;
    if (fv == FieldValidation::kStrict) {
      auto unknown = FindUnknownFields(*schema, patched, FieldPathStyle::kDecoder);
      problems.insert(problems.end(), unknown.begin(), unknown.end());
      if (!problems.empty()) {
        // kube-apiserver shows the patched object (the patch, for strategic merge).
        const Json& shown = type == PatchType::kStrategicMergePatch ? patch : patched;
        return InvalidObject("", "",
                             {{FieldErrorType::kInvalid, "patch",
                               fmt::format("{}: strict decoding error: {}",
                                           Json(shown.dump()).dump(), Join(problems, ", "))}});
      }
    }
    DropUnknownFields(*schema, patched, check ? &problems : nullptr);
    if (fv == FieldValidation::kWarn) *warnings = std::move(problems);
  } else if (schema) {
    // Applied configurations were checked before the patch; fields stored before the check
    // existed go quietly.
    DropUnknownFields(*schema, patched, nullptr);
    if (fv == FieldValidation::kWarn) *warnings = patch_problems;
  } else if (!apply && check) {
    // A custom resource's undeclared fields, which its admission prunes.
    std::vector<std::string> unknown;
    ListUnknownCustomFields(res.group, res.kind, patched, &unknown);
    if (fv == FieldValidation::kStrict && !unknown.empty()) {
      return InvalidObject("", "",
                           {{FieldErrorType::kInvalid, "patch",
                             fmt::format("{}: strict decoding error: {}",
                                         Json(patched.dump()).dump(), Join(unknown, ", "))}});
    }
    if (fv == FieldValidation::kWarn) *warnings = std::move(unknown);
  }
  return {};
}

// An apply that creates a pod admits it inside Store::Mutate, under the store's lock, where
// the lookup (it lists priority classes) cannot run: the class the patch names is found now.
PriorityClassLookup ClassNamedBy(const Json& patch, const PriorityClassLookup& pcs) {
  const Json* spec = patch.contains("spec") ? &patch["spec"] : nullptr;
  std::string class_name = spec && spec->is_object() ? StringField(*spec, "priorityClassName") : "";
  std::optional<Json> found = pcs(class_name);
  return [class_name, found](const std::string& n) -> std::optional<Json> {
    return n == class_name ? found : std::nullopt;
  };
}

}  // namespace

HttpResponse Server::Impl::Patch(HttpRequest& req, const Target& t) {
  auto type = PatchTypeFor(req.Header("content-type"));
  if (!type.ok()) return ErrorResponse(type.error());
  const ResourceInfo& res = *t.resource;
  const bool apply = *type == PatchType::kApplyPatch;
  if (apply && req.Query("fieldManager").value_or("").empty()) {
    return ErrorResponse(InvalidObject(
        "PatchOptions.meta.k8s.io", "",
        {{FieldErrorType::kRequired, "fieldManager", "is required for apply patch"}}));
  }
  auto fv = ParseFieldValidation(req.Query("fieldValidation"), "PatchOptions");
  if (!fv.ok()) return ErrorResponse(fv.error());
  // Duplicate keys of the patch itself.
  std::vector<std::string> duplicates;
  auto read = ReadPatchBody(req, *fv != FieldValidation::kIgnore ? &duplicates : nullptr);
  if (!read.ok()) return ErrorResponse(read.error());
  const Json patch = std::move(read).value();
  const FieldSchema* schema = FindFieldSchema(res.group, res.kind);
  if (apply) {
    if (auto ok = RefuseUndeclaredApplyFields(res, schema, patch); !ok.ok()) {
      return ErrorResponse(ok.error());
    }
  }
  auto problems = PatchProblems(*type, *fv, patch, duplicates);
  if (!problems.ok()) return ErrorResponse(problems.error());
  const std::vector<std::string> patch_problems = std::move(problems).value();
  std::vector<std::string> warnings;
  const std::string sub = t.subresource;
  auto pcs = PriorityClassesFor(res);
  // Read before the store's lock, as the priority classes: an apply creating a claim gets
  // the default StorageClass.
  const bool is_claim = apply && res.group.empty() && res.plural == "persistentvolumeclaims";
  const std::string default_class = is_claim ? DefaultStorageClassName(*store) : std::string();
  if (apply && res.group.empty() && res.kind == "Pod") pcs = ClassNamedBy(patch, pcs);
  bool created = false;
  const FieldManagerContext managers = ManagerFor(req, res, sub);
  const bool force = ParseBool(req.Query("force"));
  std::vector<FieldConflict> conflicts;
  auto result = store->Mutate(
      res, t.ns, t.name,
      [&](const Json* current) -> Result<Json> {
        conflicts.clear();
        if (!current) {
          // Server-side apply creates.
          warnings.clear();
          if (*fv == FieldValidation::kWarn) warnings = patch_problems;
          Json obj = patch;
          obj["metadata"]["name"] = t.name;
          if (auto ok = ApplyManagedFields(nullptr, patch, obj, managers, force, &conflicts);
              !ok.ok()) {
            return ok.error();
          }
          if (auto ok = Admit(res, obj, true, pcs, options.validation); !ok.ok()) return ok.error();
          if (is_claim) SetDefaultStorageClass(obj, default_class);
          return obj;
        }
        auto patched = ApplyPatch(*current, patch, *type);
        if (!patched.ok()) return patched.error();
        warnings.clear();
        if (auto ok = CheckPatchedFields(res, schema, *type, *fv, patch, patch_problems, *patched,
                                         &warnings);
            !ok.ok()) {
          return ok.error();
        }
        if (auto ok = CheckPatchedUid(res, *current, *patched); !ok.ok()) return ok.error();
        Json next = SplitStatus(res, sub, *current, std::move(patched).value());
        if (apply) {
          if (auto ok = ApplyManagedFields(current, patch, next, managers, force, &conflicts);
              !ok.ok()) {
            return ok.error();
          }
        }
        if (auto ok = Admit(res, next, false, pcs, ValidationFor(options.validation, current));
            !ok.ok())
          return ok.error();
        auto ok = IsPodResize(res, sub) ? ValidatePodResize(res, *current, next)
                                        : ValidateUpdate(res, *current, next);
        if (!ok.ok()) return ok.error();
        if (!apply) RecordUpdateManagedFields(current, next, managers);
        return next;
      },
      apply, req.Query("dryRun") == "All", &created, Durability::kLater);
  if (!result.ok() && !conflicts.empty()) {
    return WithWarnings(ApplyConflictResponse(result.error(), conflicts), warnings);
  }
  if (!result.ok())
    return WithWarnings(ErrorResponse(result.error(), res.plural, t.name), warnings);
  return WithWarnings(AfterDurable(result->rv, JsonResponse(created ? 201 : 200, *result->text)),
                      warnings);
}

}  // namespace berth::apiserver
