// The subresources that are more than the object itself: binding, scale, log and eviction.
// (status is an ordinary write, server_writes.cc; exec, attach and portforward are refused
// in server_routing.cc.)
#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_registry.h"
#include "apiserver/crd_table.h"
#include "apiserver/eviction.h"
#include "apiserver/field_errors.h"
#include "apiserver/patch.h"
#include "apiserver/scale.h"
#include "apiserver/selectors.h"
#include "apiserver/server_internal.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

}  // namespace

HttpResponse Server::Impl::Bind(HttpRequest& req, const Target& t, const Json& binding) {
  const ResourceInfo* pods = FindResource("", "v1", "pods");
  std::string name = binding.contains("metadata") ? binding["metadata"].value("name", "") : "";
  std::string node = binding.contains("target") ? binding["target"].value("name", "") : "";
  std::string uid = binding.contains("metadata") ? binding["metadata"].value("uid", "") : "";
  if (name.empty() || node.empty()) {
    return ErrorResponse(
        InvalidObject("Binding.core", name, {{FieldErrorType::kRequired, "target.name", ""}}));
  }
  const std::string now = FormatTimestamp(NowUnixSeconds());
  // In place: a pod's document (its managedFields included) is not copied to set two fields.
  auto result = store->Change(
      *pods, t.ns, name,
      [&](Json& pod) -> Result<bool> {
        const Json& meta = std::as_const(pod)["metadata"];
        if (!uid.empty() && meta.value("uid", "") != uid) {
          return Error{fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": the UID "
                                   "in the precondition ({}) does not match the UID in record ({})."
                                   " The object might have been deleted and then recreated",
                                   name, uid, meta.value("uid", "")),
                       ErrorCode::kConflict};
        }
        const Json& spec = std::as_const(pod)["spec"];
        if (spec.contains("nodeName") && !spec["nodeName"].get<std::string>().empty()) {
          return Error{fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                   "is already assigned to node \"{}\"",
                                   name, name, spec["nodeName"].get<std::string>()),
                       ErrorCode::kConflict};
        }
        if (meta.contains("deletionTimestamp")) {
          return Error{fmt::format("Operation cannot be fulfilled on pods/binding \"{}\": pod {} "
                                   "is being deleted, cannot be assigned to a host",
                                   name, name),
                       ErrorCode::kConflict};
        }
        // Every check before the first change: the pod is changed where it is stored. A status
        // or conditions of another shape (what an older write may have stored) is replaced.
        Json& status = pod["status"];
        if (!status.is_object()) status = Json::object();
        pod["spec"]["nodeName"] = node;
        // ClearingNominatedNodeNameAfterBinding (on in v1.37): a bound pod is nominated nowhere.
        status.erase("nominatedNodeName");
        Json& conds = status["conditions"];
        if (!conds.is_array()) conds = Json::array();
        // Copied from one built once: an initializer list is assembled again on every call.
        static const Json kScheduled = {{"type", "PodScheduled"},
                                        {"status", "True"},
                                        {"lastProbeTime", nullptr},
                                        {"lastTransitionTime", ""}};
        Json cond = kScheduled;
        cond["lastTransitionTime"] = now;
        bool replaced = false;
        for (auto& c : conds) {
          const Json& existing = c;
          if (existing.is_object() && existing.contains("type") &&
              existing["type"] == "PodScheduled") {
            c = cond;
            replaced = true;
          }
        }
        if (!replaced) conds.push_back(cond);
        return true;  // the spec changed: nodeName
      },
      req.Query("dryRun") == "All", Durability::kLater);
  if (!result.ok()) {
    if (result.error().code == ErrorCode::kNotFound) {
      return ErrorResponse(result.error(), "pods", name);
    }
    return ErrorResponse(result.error(), "pods/binding", name);
  }
  return AfterDurable(result->rv, SuccessStatus(201));
}

HttpResponse Server::Impl::Scale(HttpRequest& req, const Target& t) {
  const ResourceInfo& res = *t.resource;
  // A custom resource's Scale comes from the paths its CRD names (crd_table.h).
  const CustomResourceVersion* custom = CustomResourceOf(res);
  auto scale_of = [custom](const Json& o) {
    return custom ? CustomScaleOf(*custom, o) : ScaleOf(o);
  };
  if (req.method == "GET") {
    auto got = store->Get(res, t.ns, t.name);
    if (!got.ok()) return ErrorResponse(got.error(), res.plural, t.name);
    return JsonResponse(200, scale_of(*got->object).dump());
  }
  // PUT sends a whole Scale; PATCH a patch of the current one (the form `kubectl scale` uses).
  std::optional<PatchType> type;
  if (req.method == "PATCH") {
    auto patch_type = PatchTypeFor(req.Header("content-type"));
    if (!patch_type.ok()) return ErrorResponse(patch_type.error());
    if (*patch_type == PatchType::kApplyPatch) {
      return ErrorResponse(Error{"server-side apply is not supported on the scale subresource",
                                 ErrorCode::kUnsupportedMediaType});
    }
    type = *patch_type;
  }
  Json body = Json::parse(req.body, nullptr, false);
  if (body.is_discarded() || !(body.is_object() || (type && body.is_array()))) {
    return ErrorResponse(
        Error{"the body of the request could not be decoded as a Scale", ErrorCode::kBadRequest});
  }
  auto pcs = PriorityClassesFor(res);
  const FieldManagerContext managers = ManagerFor(req, res, t.subresource);
  auto result = store->Mutate(
      res, t.ns, t.name,
      [&](const Json* current) -> Result<Json> {
        Json scale = body;
        if (type) {
          auto patched = ApplyPatch(scale_of(*current), body, *type);
          if (!patched.ok()) return patched.error();
          scale = std::move(patched).value();
        }
        auto next = custom ? WithCustomScale(*custom, *current, scale, t.name)
                           : WithScale(*current, scale, t.name);
        if (!next.ok()) return next.error();
        if (auto ok = Admit(res, *next, false, pcs); !ok.ok()) return ok.error();
        RecordUpdateManagedFields(current, *next, managers);
        return next;
      },
      false, req.Query("dryRun") == "All", nullptr, Durability::kLater);
  if (!result.ok()) return ErrorResponse(result.error(), res.plural, t.name);
  return AfterDurable(result->rv, JsonResponse(200, scale_of(*result->object).dump()));
}

// No container here writes a log (simulated kubelets run none): a container that has started
// has an empty one; one that has not is answered as kube-apiserver answers for it.
HttpResponse Server::Impl::Log(HttpRequest& req, const Target& t) {
  auto got = store->Get(*t.resource, t.ns, t.name);
  if (!got.ok()) return ErrorResponse(got.error(), t.resource->plural, t.name);
  std::string container = req.Query("container").value_or("");
  if (const Json* list = FieldAt(*got->object, "spec.containers");
      container.empty() && list != nullptr && list->is_array() && !list->empty()) {
    container = FieldValue((*list)[0], "name");
  }
  if (const Json* statuses = FieldAt(*got->object, "status.containerStatuses");
      statuses != nullptr && statuses->is_array()) {
    for (const Json& s : *statuses) {
      if (!s.is_object() || s.value("name", "") != container) continue;
      const Json& state = s.contains("state") ? s["state"] : Json();
      if (state.is_object() && (state.contains("running") || state.contains("terminated"))) {
        HttpResponse empty;
        empty.content_type = "text/plain";
        return empty;
      }
    }
  }
  return ErrorResponse(Error{fmt::format("container \"{}\" in pod \"{}\" is waiting to start: "
                                         "no kubelet has started it",
                                         container, t.name),
                             ErrorCode::kBadRequest});
}

HttpResponse Server::Impl::Evict(HttpRequest& req, const Target& t) {
  DeleteRequest opts;
  opts.dry_run = req.Query("dryRun") == "All";
  if (!req.body.empty()) {
    Json eviction = Json::parse(req.body, nullptr, false);
    if (eviction.is_discarded() || !eviction.is_object()) {
      return ErrorResponse(Error{"the body of the request could not be decoded as an Eviction",
                                 ErrorCode::kBadRequest});
    }
    if (auto d = eviction.find("deleteOptions"); d != eviction.end() && d->is_object()) {
      if (auto ok = ReadDeleteOptions(*d, opts); !ok.ok()) return ErrorResponse(ok.error());
    }
  }
  const ResourceInfo& pods = *t.resource;
  const ResourceInfo* pdbs = FindResource("policy", "v1", "poddisruptionbudgets");
  const bool caller_rv = opts.preconditions.resource_version.has_value();
  // A pod that changes between the check and the deletion is checked again (a few times), as
  // kube-apiserver retries conflicts.
  for (int attempt = 0;; ++attempt) {
    auto pod = store->Get(pods, t.ns, t.name);
    if (!pod.ok()) return ErrorResponse(pod.error(), pods.plural, t.name);
    auto listed = store->List(*pdbs, t.ns, nullptr, 0, "");
    if (!listed.ok()) return ErrorResponse(listed.error());
    std::vector<const Json*> budgets;
    for (const auto& so : listed->items) budgets.push_back(so.object.get());
    auto refused = [](const EvictionDecision& d) {
      Json body = StatusBody(*d.refusal);
      if (!d.cause.empty()) {
        body["details"]["causes"] =
            Json::array({{{"reason", "DisruptionBudget"}, {"message", d.cause}}});
      }
      if (d.refusal->code == ErrorCode::kTooManyRequests) {
        body["details"]["retryAfterSeconds"] = 10;
      }
      return JsonResponse(body["code"].get<int>(), body.dump());
    };
    EvictionDecision decision = DecideEviction(*pod->object, budgets);
    if (decision.refusal) return refused(decision);
    if (decision.budget && !opts.dry_run) {
      const std::string now = FormatTimestamp(NowUnixSeconds());
      // Checked again against the budget as the write finds it, in the same atomic step: a
      // concurrent eviction (kubectl drain evicts in parallel) may have spent the disruption
      // this one was allowed, and spending it twice would leave the budget negative.
      std::optional<EvictionDecision> refused_now;
      auto spent = store->Mutate(
          *pdbs, t.ns, *decision.budget,
          [&](const Json* current) -> Result<Json> {
            EvictionDecision again = DecideEviction(*pod->object, {current});
            if (again.refusal) {
              refused_now = again;
              return *again.refusal;
            }
            if (!again.budget) return *current;
            return SpendDisruption(*current, t.name, now);
          },
          false, false, nullptr, Durability::kLater);
      if (refused_now) return refused(*refused_now);
      if (!spent.ok()) return ErrorResponse(spent.error(), pdbs->plural, *decision.budget);
    }
    // The pod must still be the one the budgets were checked against.
    DeletePreconditions preconditions = opts.preconditions;
    const std::string phase = FieldValue(*pod->object, "status.phase");
    if (!caller_rv && phase != "Succeeded" && phase != "Failed") {
      preconditions.resource_version = FieldValue(*pod->object, "metadata.resourceVersion");
    }
    auto gone = store->Delete(pods, t.ns, t.name, preconditions, opts.dry_run, Durability::kLater,
                              GraceFor(pods, opts));
    if (gone.ok()) return AfterDurable(gone->rv, SuccessStatus(201));
    if (gone.error().code != ErrorCode::kConflict || caller_rv) {
      return ErrorResponse(gone.error(), pods.plural, t.name);
    }
    if (decision.budget || attempt >= 4) {
      // The budget was spent on a pod that changed meanwhile: the client retries the eviction.
      Json body =
          StatusBody(Error{"Cannot evict pod as it would violate the pod's disruption "
                           "budget.",
                           ErrorCode::kTooManyRequests});
      body["details"]["retryAfterSeconds"] = 10;
      return JsonResponse(429, body.dump());
    }
  }
}

}  // namespace berth::apiserver
