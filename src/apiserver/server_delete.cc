// Deletions: DeleteOptions (body and query), DELETE of one object (graceful for pods, with
// the garbage collector's finalizers for a propagationPolicy) and of a collection.
#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <string_view>

#include "apiserver/crd_registry.h"
#include "apiserver/gc_finalizers.h"
#include "apiserver/pod_deletion.h"
#include "apiserver/selectors.h"
#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

Result<DeleteRequest> ParseDeleteOptions(const HttpRequest& req) {
  DeleteRequest out;
  out.dry_run = req.Query("dryRun") == "All";
  if (auto grace = req.Query("gracePeriodSeconds"); grace && !grace->empty()) {
    char* end = nullptr;
    const long long v = std::strtoll(grace->c_str(), &end, 10);
    if (end == grace->c_str() || *end != '\0') {
      return Error{"gracePeriodSeconds: must be an integer", ErrorCode::kBadRequest};
    }
    out.grace_period_seconds = v;
  }
  if (auto policy = req.Query("propagationPolicy"); policy && !policy->empty()) {
    if (auto ok = ReadPropagation({{"propagationPolicy", *policy}}, out.propagation); !ok.ok()) {
      return ok.error();
    }
  }
  if (auto orphan = req.Query("orphanDependents"); orphan && !orphan->empty()) {
    if (out.propagation) return BothPropagationsError();
    out.propagation = *orphan == "true" ? "Orphan" : "Background";
  }
  if (req.body.empty()) return out;
  Json opts = Json::parse(req.body, nullptr, false);
  if (opts.is_discarded() || !opts.is_object()) {
    return Error{"the body of the request could not be decoded as DeleteOptions",
                 ErrorCode::kBadRequest};
  }
  if (auto ok = ReadDeleteOptions(opts, out); !ok.ok()) return ok.error();
  return out;
}

// The namespaces every cluster keeps (kube-apiserver's NamespaceLifecycle refuses to delete
// them).
VoidResult RefuseImmortalNamespace(const ResourceInfo& r, std::string_view name) {
  if (!r.group.empty() || r.plural != "namespaces") return {};
  if (name != "default" && name != "kube-system" && name != "kube-public") return {};
  return Error{
      fmt::format("namespaces \"{}\" is forbidden: this namespace may not be deleted", name),
      ErrorCode::kForbidden};
}

}  // namespace

GraceFn GraceFor(const ResourceInfo& r, const DeleteRequest& opts) {
  if (!r.group.empty() || r.plural != "pods") return nullptr;
  return [requested = opts.grace_period_seconds](const Json& pod) {
    return PodGraceDecision(pod, requested, NowUnixSeconds());
  };
}

VoidResult ReadDeleteOptions(const Json& opts, DeleteRequest& out) {
  if (auto dry = opts.find("dryRun"); dry != opts.end() && !dry->is_null()) {
    if (!dry->is_array()) {
      return Error{"DeleteOptions.dryRun: must be a list", ErrorCode::kBadRequest};
    }
    for (const auto& v : *dry) {
      if (v != "All") {
        return Error{fmt::format("DeleteOptions.dryRun: Unsupported value: {}: supported values: "
                                 "\"All\"",
                                 v.dump()),
                     ErrorCode::kBadRequest};
      }
      out.dry_run = true;
    }
  }
  if (auto grace = opts.find("gracePeriodSeconds"); grace != opts.end() && !grace->is_null()) {
    if (!grace->is_number_integer()) {
      return Error{"DeleteOptions.gracePeriodSeconds: must be an integer", ErrorCode::kBadRequest};
    }
    out.grace_period_seconds = grace->get<int64_t>();
  }
  if (auto ok = ReadPropagation(opts, out.propagation); !ok.ok()) return ok.error();
  if (auto pre = opts.find("preconditions"); pre != opts.end() && pre->is_object()) {
    if (auto uid = pre->find("uid"); uid != pre->end() && uid->is_string()) {
      out.preconditions.uid = uid->get<std::string>();
    }
    if (auto rv = pre->find("resourceVersion"); rv != pre->end() && rv->is_string()) {
      out.preconditions.resource_version = rv->get<std::string>();
    }
  }
  return {};
}

HttpResponse Server::Impl::Delete(HttpRequest& req, const Target& t) {
  auto opts = ParseDeleteOptions(req);
  if (!opts.ok()) return ErrorResponse(opts.error());
  if (auto refused = RefuseImmortalNamespace(*t.resource, t.name); !refused.ok()) {
    return ErrorResponse(refused.error());
  }
  // The garbage collector does not watch custom resources: no finalizer of its would go.
  if (opts->propagation && !opts->dry_run && !CustomResourceOf(*t.resource)) {
    auto set = SetGcFinalizers(*t.resource, t.ns, t.name, *opts);
    if (!set.ok()) return ErrorResponse(set.error(), t.resource->plural, t.name);
  }
  auto gone = store->Delete(*t.resource, t.ns, t.name, opts->preconditions, opts->dry_run,
                            Durability::kLater, GraceFor(*t.resource, *opts));
  if (!gone.ok()) return ErrorResponse(gone.error(), t.resource->plural, t.name);
  return AfterDurable(gone->rv, JsonResponse(200, *gone->text));
}

VoidResult Server::Impl::SetGcFinalizers(const ResourceInfo& r, const std::string& ns,
                                         const std::string& name, const DeleteRequest& opts) {
  auto current = store->Get(r, ns, name);
  if (!current.ok()) return {};  // the deletion answers NotFound
  const Json& meta = (*current->object)["metadata"];
  if (opts.preconditions.uid && meta.value("uid", "") != *opts.preconditions.uid) return {};
  Json finalizers = meta.contains("finalizers") ? meta["finalizers"] : Json::array();
  // A foreground or orphaning deletion that has started is not turned into the other, as
  // kube-apiserver's deletionFinalizersForGarbageCollection.
  const bool marked = meta.contains("deletionTimestamp");
  Json next = WithGcFinalizers(finalizers, *opts.propagation, marked);
  if (next == finalizers) return {};
  auto changed = store->Mutate(
      r, ns, name,
      [&](const Json* cur) -> Result<Json> {
        Json obj = *cur;
        Json& f = obj["metadata"]["finalizers"];
        if (!f.is_array()) f = Json::array();
        f = WithGcFinalizers(f, *opts.propagation, marked);
        if (f.empty()) obj["metadata"].erase("finalizers");
        return obj;
      },
      false, false, nullptr, Durability::kLater);
  if (!changed.ok() && changed.error().code != ErrorCode::kNotFound) return changed.error();
  return {};
}

HttpResponse Server::Impl::DeleteCollection(HttpRequest& req, const Target& t) {
  auto opts = ParseDeleteOptions(req);
  if (!opts.ok()) return ErrorResponse(opts.error());
  auto selected = SelectorFilter(req, *t.resource);
  if (!selected.ok()) return ErrorResponse(selected.error());
  auto list = store->List(*t.resource, t.ns, *selected, 0, "");
  if (!list.ok()) return ErrorResponse(list.error());
  std::string body = fmt::format(R"({{"kind":"{}List","apiVersion":"{}","metadata":{{}},"items":[)",
                                 t.resource->kind, t.resource->GroupVersion());
  bool first = true;
  // Revisions become durable in order, so the reply waits for the last deletion's commit only
  // (one group commit for the lot, not one per object).
  int64_t last_rv = 0;
  for (const auto& so : list->items) {
    const Json& meta = (*so.object)["metadata"];
    if (!RefuseImmortalNamespace(*t.resource, meta.value("name", "")).ok()) continue;
    auto gone = store->Delete(*t.resource, meta.value("namespace", ""), meta.value("name", ""), {},
                              opts->dry_run, Durability::kLater, GraceFor(*t.resource, *opts));
    if (!gone.ok()) continue;
    last_rv = std::max(last_rv, gone->rv);
    if (!first) body += ',';
    first = false;
    body += *gone->text;
  }
  body += "]}";
  if (last_rv == 0) return JsonResponse(200, body);
  return AfterDurable(last_rv, JsonResponse(200, body));
}

}  // namespace berth::apiserver
