// Writes of whole objects: create (POST) and update (PUT), admitted and recorded in
// managedFields, answered once durable.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/bootstrap.h"
#include "apiserver/default_storage_class.h"
#include "apiserver/pod_resize.h"
#include "apiserver/server_internal.h"
#include "apiserver/validation.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

// metadata.uid when it is a non-empty string.
const Json* FindUid(const Json& obj) {
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return nullptr;
  auto uid = meta->find("uid");
  if (uid == meta->end() || !uid->is_string() || uid->get_ref<const std::string&>().empty())
    return nullptr;
  return &*uid;
}

}  // namespace

PriorityClassLookup Server::Impl::PriorityClassesFor(const ResourceInfo& res) {
  const bool reads_classes = (res.group.empty() && res.plural == "pods") ||
                             (res.group == "scheduling.k8s.io" && res.plural == "priorityclasses");
  return reads_classes ? PriorityClasses() : PriorityClassLookup();
}

PriorityClassLookup Server::Impl::PriorityClasses() {
  const ResourceInfo* pcs = FindResource("scheduling.k8s.io", "v1", "priorityclasses");
  auto all = store->List(*pcs, "", {}, 0, "");
  std::vector<std::shared_ptr<const Json>> classes;
  if (all.ok()) {
    for (const auto& so : all->items) classes.push_back(so.object);
  }
  return [classes = std::move(classes)](const std::string& name) -> std::optional<Json> {
    for (const auto& c : classes) {
      const bool match = name.empty() ? c->value("globalDefault", false)
                                      : (*c)["metadata"].value("name", "") == name;
      if (match) return *c;
    }
    return std::nullopt;
  };
}

HttpResponse Server::Impl::AfterDurable(int64_t rv, HttpResponse r) {
  HttpResponse d;
  d.deferred = [this, rv, r = std::move(r)](std::function<void(HttpResponse)> reply) mutable {
    store->WhenDurable(rv, [r = std::move(r), reply = std::move(reply)](VoidResult ok) mutable {
      reply(ok.ok() ? std::move(r) : ErrorResponse(ok.error()));
    });
  };
  return d;
}

HttpResponse Server::Impl::Create(HttpRequest& req, const Target& t) {
  auto fv = ParseFieldValidation(req.Query("fieldValidation"), "CreateOptions");
  if (!fv.ok()) return ErrorResponse(fv.error());
  const ResourceInfo& res = *t.resource;
  std::vector<std::string> warnings;
  auto body = DecodeChecked(req, res.group, res.kind, *fv, &warnings);
  if (!body.ok()) return ErrorResponse(body.error());
  return WithWarnings(CreateObject(req, t, std::move(body).value()), warnings);
}

HttpResponse Server::Impl::CreateObject(HttpRequest& req, const Target& t, Json obj) {
  const ResourceInfo& res = *t.resource;
  if (obj.contains("kind") && obj["kind"] != res.kind) {
    return ErrorResponse(
        Error{fmt::format("the API version in the data ({}) does not match the "
                          "expected API version ({}) for kind {}",
                          obj.value("apiVersion", ""), res.GroupVersion(), obj.value("kind", "")),
              ErrorCode::kBadRequest});
  }
  Json& meta = obj["metadata"];
  if (!meta.is_object()) meta = Json::object();
  if (res.namespaced && meta.contains("namespace") && meta["namespace"] != t.ns &&
      meta["namespace"] != "") {
    return ErrorResponse(
        Error{"the namespace of the provided object does not match the namespace "
              "sent on the request",
              ErrorCode::kBadRequest});
  }
  if (meta.contains("resourceVersion") && meta["resourceVersion"] != "") {
    return ErrorResponse(Error{"resourceVersion should not be set on objects to be created",
                               ErrorCode::kBadRequest});
  }
  meta.erase("resourceVersion");
  if (auto ok = Admit(res, obj, true, PriorityClassesFor(res), options.validation); !ok.ok()) {
    return ErrorResponse(ok.error(), res.kind, meta.value("name", ""));
  }
  if (res.group.empty() && res.plural == "persistentvolumeclaims") {
    AdmitDefaultStorageClass(*store, obj);
  }
  RecordUpdateManagedFields(nullptr, obj, ManagerFor(req, res, ""));
  const bool dry_run = req.Query("dryRun") == "All";
  // `meta` lives in `obj`, which Create takes.
  const std::string name = meta.value("name", "");
  auto created = store->Create(res, t.ns, std::move(obj), dry_run, Durability::kLater);
  if (!created.ok()) return ErrorResponse(created.error(), res.plural, name);
  if (dry_run) return JsonResponse(201, *created->text);
  if (res.group.empty() && res.plural == "namespaces") {
    // Only the store fails here, and then the namespace's own write is not durable either.
    if (auto ok = PopulateNamespace(*store, name, ca_pem); !ok.ok()) {
      return ErrorResponse(ok.error());
    }
  }
  return AfterDurable(created->rv, JsonResponse(201, *created->text));
}

Json SplitStatus(const ResourceInfo& res, const std::string& subresource, const Json& current,
                 Json next) {
  bool has_status_sub = std::find(res.subresources.begin(), res.subresources.end(), "status") !=
                        res.subresources.end();
  if (IsPodResize(res, subresource)) return ApplyPodResize(current, next);
  if (subresource == "status") {
    Json out = current;
    if (next.contains("status")) {
      out["status"] = next["status"];
    } else {
      out.erase("status");
    }
    if (next.contains("metadata") && next["metadata"].contains("resourceVersion")) {
      out["metadata"]["resourceVersion"] = next["metadata"]["resourceVersion"];
    }
    return out;
  }
  if (has_status_sub) {
    if (current.contains("status")) {
      next["status"] = current["status"];
    } else {
      next.erase("status");
    }
  }
  if (res.group.empty() && res.plural == "namespaces") {
    return PrepareNamespaceUpdate(subresource, current, std::move(next));
  }
  return next;
}

VoidResult CheckBodyUid(const ResourceInfo& res, std::string_view ns, std::string_view name,
                        const Json& current, const Json& body) {
  const Json* uid = FindUid(body);
  if (uid == nullptr) return {};
  const Json* have = FindUid(current);
  const std::string have_uid = have ? have->get<std::string>() : "";
  if (*uid == have_uid) return {};
  return UidPreconditionError(res, ns, name, uid->get<std::string>(), have_uid);
}

VoidResult CheckPatchedUid(const ResourceInfo& res, const Json& current, const Json& patched) {
  const Json* uid = FindUid(patched);
  const Json* have = FindUid(current);
  if (uid == nullptr || (have != nullptr && *uid == *have)) return {};
  return InvalidField(res, patched, "metadata.uid", FieldErrorType::kInvalid,
                      fmt::format("{}: field is immutable", uid->dump()));
}

HttpResponse Server::Impl::Update(HttpRequest& req, const Target& t) {
  auto fv = ParseFieldValidation(req.Query("fieldValidation"), "UpdateOptions");
  if (!fv.ok()) return ErrorResponse(fv.error());
  const ResourceInfo& res = *t.resource;
  std::vector<std::string> warnings;
  auto body = DecodeChecked(req, res.group, res.kind, *fv, &warnings);
  if (!body.ok()) return ErrorResponse(body.error());
  Json obj = std::move(*body);
  const std::string sub = t.subresource;
  auto pcs = PriorityClassesFor(res);
  const FieldManagerContext managers = ManagerFor(req, res, sub);
  auto result = store->Mutate(
      res, t.ns, t.name,
      [&](const Json* current) -> Result<Json> {
        if (auto ok = CheckBodyUid(res, t.ns, t.name, *current, obj); !ok.ok()) return ok.error();
        Json next = SplitStatus(res, sub, *current, obj);
        if (auto ok = Admit(res, next, false, pcs, ValidationFor(options.validation, current));
            !ok.ok())
          return ok.error();
        auto ok = IsPodResize(res, sub) ? ValidatePodResize(res, *current, next)
                                        : ValidateUpdate(res, *current, next);
        if (!ok.ok()) return ok.error();
        RecordUpdateManagedFields(current, next, managers);
        return next;
      },
      false, req.Query("dryRun") == "All", nullptr, Durability::kLater);
  if (!result.ok())
    return WithWarnings(ErrorResponse(result.error(), res.plural, t.name), warnings);
  return WithWarnings(AfterDurable(result->rv, JsonResponse(200, *result->text)), warnings);
}

}  // namespace berth::apiserver
