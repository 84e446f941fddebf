#include "controllers/controller_revision.h"

#include <fmt/format.h>

#include <algorithm>

#include "controllers/deployment_util.h"

namespace berth::controllers {

namespace {

std::string RevisionsPath(const std::string& ns) {
  return fmt::format("/apis/apps/v1/namespaces/{}/controllerrevisions", ns);
}

// The template as the set holds it: what the hash and the comparison read.
const Json& TemplateOf(const Json& owner) { return Member(Member(owner, "spec"), "template"); }

}  // namespace

Json RevisionData(const Json& pod_template) {
  Json t = pod_template;
  t["$patch"] = "replace";
  return {{"spec", {{"template", std::move(t)}}}};
}

Json TemplateOfRevision(const Json& revision) {
  Json t = Member(Member(Member(revision, "data"), "spec"), "template");
  if (t.is_object()) t.erase("$patch");
  return t;
}

Result<RevisionState> SyncRevisions(client::RestClient* rest, SharedInformer* revisions,
                                    const Json& owner, std::string_view owner_kind,
                                    const std::set<std::string>& live_hashes) {
  const std::string ns = NamespaceOf(owner);
  const std::string uid = UidOf(owner);
  RevisionState state;
  for (const Object& o : revisions->List()) {
    const Json& r = DocOf(o);
    const Json* ref = ControllerRefOf(r);
    if (NamespaceOf(r) == ns && ref && StringAt(*ref, "uid") == uid) state.owned.push_back(r);
  }
  std::sort(state.owned.begin(), state.owned.end(), [](const Json& a, const Json& b) {
    return IntAt(a, "revision") < IntAt(b, "revision");
  });
  const Json& tmpl = TemplateOf(owner);
  const Json& cc = Member(Member(owner, "status"), "collisionCount");
  const std::optional<int64_t> collisions =
      cc.is_number_integer() ? std::optional<int64_t>(cc.get<int64_t>()) : std::nullopt;
  state.update_hash = ComputeHash(tmpl, collisions);
  const int64_t next = state.owned.empty() ? 1 : IntAt(state.owned.back(), "revision") + 1;
  for (const Json& r : state.owned) {
    if (TemplateOfRevision(r) == tmpl) {
      state.update_revision = r;
      state.update_hash =
          StringAt(Member(Member(r, "metadata"), "labels"), kControllerRevisionHashLabel);
    }
  }
  if (!state.update_revision.is_null() && IntAt(state.update_revision, "revision") != next - 1) {
    // Back to an earlier template (a rollback): it becomes the newest revision again.
    Json patch = {{"revision", next}};
    auto r = rest->Patch(RevisionsPath(ns) + "/" + NameOf(state.update_revision), patch,
                         "application/merge-patch+json");
    if (!r.ok()) return r.error();
    state.update_revision = *r;
  }
  if (state.update_revision.is_null()) {
    Json labels = Member(Member(tmpl, "metadata"), "labels");
    if (!labels.is_object()) labels = Json::object();
    labels[std::string(kControllerRevisionHashLabel)] = state.update_hash;
    Json rev = {
        {"apiVersion", "apps/v1"},
        {"kind", "ControllerRevision"},
        {"metadata",
         {{"name", NameOf(owner) + "-" + state.update_hash},
          {"namespace", ns},
          {"labels", labels},
          {"ownerReferences", Json::array({NewControllerRef("apps/v1", owner_kind, owner)})}}},
        {"data", RevisionData(tmpl)},
        {"revision", next}};
    auto created = rest->Post(RevisionsPath(ns), rev);
    if (created.ok()) {
      state.update_revision = *created;
    } else if (created.error().code == ErrorCode::kAlreadyExists) {
      // Created by an earlier sync the informer has not shown yet, or a hash collision.
      auto existing = rest->Get(RevisionsPath(ns) + "/" + NameOf(owner) + "-" + state.update_hash);
      if (!existing.ok()) return existing.error();
      if (TemplateOfRevision(*existing) != tmpl) {
        return Error{
            fmt::format("{} {}: controller revision hash collision", owner_kind, KeyOf(owner)),
            ErrorCode::kConflict};
      }
      state.update_revision = *existing;
    } else if (IsNamespaceTerminating(created.error())) {
      state.namespace_terminating = true;
      return state;
    } else {
      return created.error();
    }
    state.owned.push_back(state.update_revision);
  }
  const int64_t limit = IntAt(Member(owner, "spec"), "revisionHistoryLimit", 10);
  std::vector<const Json*> removable;
  for (const Json& r : state.owned) {
    const std::string hash =
        StringAt(Member(Member(r, "metadata"), "labels"), kControllerRevisionHashLabel);
    if (NameOf(r) != NameOf(state.update_revision) && !live_hashes.count(hash))
      removable.push_back(&r);
  }
  for (size_t i = 0; i + limit < removable.size(); ++i) {
    auto d = rest->Delete(RevisionsPath(ns) + "/" + NameOf(*removable[i]));
    if (!d.ok() && d.error().code != ErrorCode::kNotFound) return d.error();
  }
  return state;
}

}  // namespace berth::controllers
