#include "controllers/deployment.h"

#include <fmt/format.h>

#include <algorithm>

#include "controllers/deployment_util.h"
#include "controllers/pod_util.h"

namespace berth::controllers {

namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";

std::string SetsPath(const std::string& ns) {
  return fmt::format("/apis/apps/v1/namespaces/{}/replicasets", ns);
}
std::string SetPath(const Json& set) { return SetsPath(NamespaceOf(set)) + "/" + NameOf(set); }
std::string DeploymentPath(const Json& d) {
  return fmt::format("/apis/apps/v1/namespaces/{}/deployments/{}", NamespaceOf(d), NameOf(d));
}

std::shared_ptr<const Json> Holder(const Object& o) {
  return std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, o);
}

// Annotations a new ReplicaSet does not copy from its Deployment (upstream's skipCopyAnnotation).
bool SkipCopyAnnotation(const std::string& k) {
  return k == "kubectl.kubernetes.io/last-applied-configuration" || k == kRevisionAnnotation ||
         k == kRevisionHistoryAnnotation || k == kDesiredReplicasAnnotation ||
         k == kMaxReplicasAnnotation || k == "deprecated.deployment.rollback.to";
}

// Sets the desired-replicas and max-replicas annotations; true when they changed.
bool SetReplicasAnnotations(Json& set, int64_t desired, int64_t max) {
  Json& ann = set["metadata"]["annotations"];
  if (!ann.is_object()) ann = Json::object();
  const std::string ds = std::to_string(desired), ms = std::to_string(max);
  bool changed = false;
  if (StringAt(ann, kDesiredReplicasAnnotation) != ds) {
    ann[std::string(kDesiredReplicasAnnotation)] = ds;
    changed = true;
  }
  if (StringAt(ann, kMaxReplicasAnnotation) != ms) {
    ann[std::string(kMaxReplicasAnnotation)] = ms;
    changed = true;
  }
  return changed;
}

// Copies the Deployment's annotations and the revision onto the new set; true when changed.
bool SetNewSetAnnotations(const Json& d, Json& set, int64_t revision, bool exists) {
  Json& ann = set["metadata"]["annotations"];
  if (!ann.is_object()) ann = Json::object();
  bool changed = false;
  const Json& dann = Member(Member(d, "metadata"), "annotations");
  if (dann.is_object()) {
    for (auto& [k, v] : dann.items()) {
      if (SkipCopyAnnotation(k) || (ann.contains(k) && ann[k] == v)) continue;
      ann[k] = v;
      changed = true;
    }
  }
  if (RevisionOf(set) < revision) {
    ann[std::string(kRevisionAnnotation)] = std::to_string(revision);
    changed = true;
  }
  if (!exists) {
    SetReplicasAnnotations(set, SpecReplicas(d), SpecReplicas(d) + MaxSurge(d));
    changed = true;
  }
  return changed;
}

}  // namespace

std::vector<Json*> DeploymentController::Rollout::All() {
  std::vector<Json*> out = old_sets;
  if (new_rs) out.push_back(new_rs);
  return out;
}

std::vector<const Json*> DeploymentController::Rollout::AllConst() {
  std::vector<const Json*> out(old_sets.begin(), old_sets.end());
  if (new_rs) out.push_back(new_rs);
  return out;
}

DeploymentController::DeploymentController(client::RestClient* rest, SharedInformer* pods,
                                           SharedInformer* sets, SharedInformer* deployments,
                                           ControllerOptions options)
    : rest_(rest),
      pods_(pods),
      sets_(sets),
      deployments_(deployments),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  deployments_->AddHandlers(EnqueueOnEvents(&queue_));
  client::InformerHandlers sh;
  sh.on_add = [this](const Object& o) { OnSetEvent(DocOf(o)); };
  sh.on_update = [this](const Object& a, const Object& b) {
    const Json& old_set = DocOf(a);
    const Json& set = DocOf(b);
    if (const Json* r = ControllerRefOf(old_set); r && !ControllerRefOf(set)) {
      EnqueueOwner(old_set);
    }
    OnSetEvent(set);
  };
  sh.on_delete = [this](const Object& o) { EnqueueOwner(DocOf(o)); };
  sets_->AddHandlers(std::move(sh));
  // Recreate waits for the old pods to go: their deletions wake the Deployment.
  client::InformerHandlers ph;
  ph.on_delete = [this](const Object& o) {
    const Json& pod = DocOf(o);
    const Json* ref = ControllerRefOf(pod);
    if (!ref || StringAt(*ref, "kind") != "ReplicaSet") return;
    auto set = sets_->Get(NamespaceOf(pod) + "/" + StringAt(*ref, "name"));
    if (set) EnqueueOwner(DocOf(*set));
  };
  pods_->AddHandlers(std::move(ph));
}

DeploymentController::~DeploymentController() { Stop(); }

void DeploymentController::Start() { workers_.Start(options_.workers); }

void DeploymentController::Stop() { workers_.Stop(); }

void DeploymentController::EnqueueOwner(const Json& obj) {
  const Json* ref = ControllerRefOf(obj);
  if (!ref || StringAt(*ref, "kind") != "Deployment") return;
  const std::string key = NamespaceOf(obj) + "/" + StringAt(*ref, "name");
  auto d = deployments_->Get(key);
  if (d && UidOf(DocOf(*d)) == StringAt(*ref, "uid")) queue_.Add(key);
}

std::vector<std::string> DeploymentController::DeploymentsMatching(const Json& set) const {
  std::vector<std::string> out;
  const Labels labels = LabelsOf(set);
  for (const Object& o : deployments_->List()) {
    const Json& d = DocOf(o);
    if (NamespaceOf(d) != NamespaceOf(set)) continue;
    auto sel = LabelSelectorOf(Member(Member(d, "spec"), "selector"));
    if (sel.ok() && sel->Matches(labels)) out.push_back(KeyOf(d));
  }
  return out;
}

void DeploymentController::OnSetEvent(const Json& set) {
  if (ControllerRefOf(set)) {
    EnqueueOwner(set);
    return;
  }
  // An orphan: every Deployment that could adopt it.
  for (const std::string& key : DeploymentsMatching(set)) queue_.Add(key);
}

std::string DeploymentController::Timestamp() const {
  return NowTimestamp(
      std::chrono::duration_cast<std::chrono::seconds>(options_.clock->Now().time_since_epoch())
          .count());
}

Result<std::vector<Json>> DeploymentController::ClaimReplicaSets(const Json& d,
                                                                 const CompiledSelector& selector) {
  const std::string uid = UidOf(d), ns = NamespaceOf(d);
  const bool deleting = HasDeletionTimestamp(d);
  std::vector<Json> claimed;
  std::vector<const Json*> orphans;
  std::vector<Object> all = sets_->List();
  std::optional<Error> first_error;
  for (const Object& o : all) {
    const Json& set = DocOf(o);
    if (NamespaceOf(set) != ns) continue;
    const Json* ref = ControllerRefOf(set);
    const bool matches = selector.Matches(LabelsOf(set));
    if (ref) {
      if (StringAt(*ref, "uid") != uid) continue;
      if (matches) {
        claimed.push_back(set);
      } else if (!deleting) {
        Json refs = Json::array();
        for (const Json& r : Member(Member(set, "metadata"), "ownerReferences")) {
          if (StringAt(r, "uid") != uid) refs.push_back(r);
        }
        Json patch = {{"metadata", {{"ownerReferences", refs}}}};
        auto r = rest_->Send("PATCH", SetPath(set), patch, kMergePatch);
        if (!r.ok() && r.error().code != ErrorCode::kNotFound && !first_error) {
          first_error = r.error();
        }
      }
      continue;
    }
    if (!deleting && matches && !HasDeletionTimestamp(set)) orphans.push_back(&set);
  }
  if (!orphans.empty()) {
    // Adopt only for a Deployment that still exists and is not being deleted, as the API
    // server says now (upstream's RecheckDeletionTimestamp).
    auto fresh = rest_->Get(DeploymentPath(d));
    if (!fresh.ok()) return fresh.error();
    if (UidOf(*fresh) != uid || HasDeletionTimestamp(*fresh)) return claimed;
    for (const Json* set : orphans) {
      Json refs = Member(Member(*set, "metadata"), "ownerReferences");
      if (!refs.is_array()) refs = Json::array();
      refs.push_back(NewControllerRef("apps/v1", "Deployment", d));
      Json patch = {{"metadata",
                     {{"ownerReferences", refs},
                      {"resourceVersion", StringAt(Member(*set, "metadata"), "resourceVersion")}}}};
      auto r = rest_->Patch(SetPath(*set), patch, kMergePatch);
      if (r.ok()) {
        claimed.push_back(*r);
      } else if (r.error().code != ErrorCode::kNotFound && !first_error) {
        first_error = r.error();
      }
    }
  }
  if (first_error) return *first_error;
  return claimed;
}

Result<bool> DeploymentController::PutSet(Json& set) {
  auto r = rest_->Put(SetPath(set), set);
  if (!r.ok()) return r.error();
  set = std::move(r).value();
  return true;
}

Result<bool> DeploymentController::ScaleSet(Json& set, int64_t n, const Json& d) {
  const bool size_changed = SpecReplicas(set) != n;
  Json copy = set;
  const bool ann_changed =
      SetReplicasAnnotations(copy, SpecReplicas(d), SpecReplicas(d) + MaxSurge(d));
  if (!size_changed && !ann_changed) return false;
  copy["spec"]["replicas"] = n;
  auto r = PutSet(copy);
  if (!r.ok()) return r.error();
  set = std::move(copy);
  return size_changed;
}

VoidResult DeploymentController::UpdateDeploymentMeta(Rollout& r) {
  // Annotations through the main resource: /status keeps the stored metadata.
  auto put = rest_->Put(DeploymentPath(r.d), r.d);
  if (!put.ok()) return put.error();
  Json status = r.d["status"];
  r.d = std::move(put).value();
  r.d["status"] = std::move(status);
  return {};
}

VoidResult DeploymentController::NewAndOld(Rollout& r, bool create) {
  // The oldest set whose template equals the Deployment's is the new one (upstream's
  // FindNewReplicaSet: sorted by creation time, then name).
  std::vector<Json*> sorted;
  for (Json& s : r.sets) sorted.push_back(&s);
  std::sort(sorted.begin(), sorted.end(), [](const Json* a, const Json* b) {
    const UnixTime ta = CreatedAt(*a), tb = CreatedAt(*b);
    return ta != tb ? ta < tb : NameOf(*a) < NameOf(*b);
  });
  const Json& tmpl = Member(Member(r.d, "spec"), "template");
  r.new_rs = nullptr;
  r.old_sets.clear();
  for (Json* s : sorted) {
    if (!r.new_rs && EqualIgnoreHash(Member(Member(*s, "spec"), "template"), tmpl)) {
      r.new_rs = s;
    } else {
      r.old_sets.push_back(s);
    }
  }
  int64_t max_old = 0;
  for (const Json* s : r.old_sets) max_old = std::max(max_old, RevisionOf(*s));
  const int64_t revision = max_old + 1;
  if (r.new_rs) {
    Json copy = *r.new_rs;
    bool changed = SetNewSetAnnotations(r.d, copy, revision, true);
    const Json& min_ready = Member(Member(r.d, "spec"), "minReadySeconds");
    if (IntAt(Member(copy, "spec"), "minReadySeconds") !=
        IntAt(Member(r.d, "spec"), "minReadySeconds")) {
      copy["spec"]["minReadySeconds"] = min_ready.is_null() ? Json(0) : min_ready;
      changed = true;
    }
    if (changed) {
      if (auto p = PutSet(copy); !p.ok()) return p.error();
      *r.new_rs = std::move(copy);
    }
    bool needs_status = false;
    const std::string rev = std::to_string(RevisionOf(*r.new_rs));
    if (StringAt(Member(Member(r.d, "metadata"), "annotations"), kRevisionAnnotation) != rev) {
      r.d["metadata"]["annotations"][std::string(kRevisionAnnotation)] = rev;
      if (auto u = UpdateDeploymentMeta(r); !u.ok()) return u;
    }
    Json status = Member(r.d, "status").is_object() ? r.d["status"] : Json::object();
    if (HasProgressDeadline(r.d) && !FindCondition(status, "Progressing")) {
      SetCondition(status,
                   NewCondition("Progressing", "True", "FoundNewReplicaSet",
                                fmt::format("Found new replica set \"{}\"", NameOf(*r.new_rs)),
                                Timestamp()));
      needs_status = true;
    }
    if (needs_status) return WriteStatus(r, status);
    return {};
  }
  if (!create) return {};
  return CreateNewReplicaSet(r, revision);
}

VoidResult DeploymentController::CreateNewReplicaSet(Rollout& r, int64_t revision) {
  const Json& cc = Member(Member(r.d, "status"), "collisionCount");
  std::optional<int64_t> collisions;
  if (cc.is_number_integer()) collisions = cc.get<int64_t>();
  Json tmpl = Member(Member(r.d, "spec"), "template");
  const std::string hash = ComputeHash(tmpl, collisions);
  tmpl["metadata"]["labels"][std::string(kPodTemplateHashLabel)] = hash;
  Json selector = Member(Member(r.d, "spec"), "selector");
  selector["matchLabels"][std::string(kPodTemplateHashLabel)] = hash;
  Json set = {
      {"apiVersion", "apps/v1"},
      {"kind", "ReplicaSet"},
      {"metadata",
       {{"name", NameOf(r.d) + "-" + hash},
        {"namespace", NamespaceOf(r.d)},
        {"labels", tmpl["metadata"]["labels"]},
        {"ownerReferences", Json::array({NewControllerRef("apps/v1", "Deployment", r.d)})}}},
      {"spec",
       {{"replicas", 0},
        {"minReadySeconds", IntAt(Member(r.d, "spec"), "minReadySeconds")},
        {"selector", selector},
        {"template", tmpl}}}};
  SetNewSetAnnotations(r.d, set, revision, false);
  std::vector<const Json*> all = r.AllConst();
  set["spec"]["replicas"] = NewRSNewReplicas(r.d, all, set);
  auto created = rest_->Post(SetsPath(NamespaceOf(r.d)), set);
  if (!created.ok()) {
    if (created.error().code != ErrorCode::kAlreadyExists) return created.error();
    // A set of that name exists: ours with this template (a stale cache) is used once the
    // informer shows it; anything else is a hash collision, and the count changes the name.
    auto existing = rest_->Get(SetPath(set));
    if (!existing.ok()) return existing.error();
    const Json* ref = ControllerRefOf(*existing);
    if (ref && StringAt(*ref, "uid") == UidOf(r.d) &&
        EqualIgnoreHash(Member(Member(*existing, "spec"), "template"),
                        Member(Member(r.d, "spec"), "template"))) {
      return Error{"new ReplicaSet not yet in the cache", ErrorCode::kConflict};
    }
    Json next = r.d["status"].is_object() ? r.d["status"] : Json::object();
    next["collisionCount"] = collisions.value_or(0) + 1;
    if (auto w = WriteStatus(r, next); !w.ok()) return w;
    return Error{fmt::format("hash collision for ReplicaSet {}", NameOf(set)),
                 ErrorCode::kConflict};
  }
  // Adding to r.sets may move it: the pointers are rebuilt from the names, taken before.
  std::vector<std::string> old_names;
  for (const Json* s : r.old_sets) old_names.push_back(NameOf(*s));
  r.sets.push_back(std::move(created).value());
  r.old_sets.clear();
  for (Json& s : r.sets) {
    if (std::find(old_names.begin(), old_names.end(), NameOf(s)) != old_names.end())
      r.old_sets.push_back(&s);
  }
  r.new_rs = &r.sets.back();
  if (options_.log) {
    options_.log(fmt::format("Deployment {}: Scaled up replica set {} to {}", KeyOf(r.d),
                             NameOf(*r.new_rs), SpecReplicas(*r.new_rs)));
  }
  const std::string rev = std::to_string(revision);
  if (StringAt(Member(Member(r.d, "metadata"), "annotations"), kRevisionAnnotation) != rev) {
    r.d["metadata"]["annotations"][std::string(kRevisionAnnotation)] = rev;
    if (auto u = UpdateDeploymentMeta(r); !u.ok()) return u;
  }
  if (!HasProgressDeadline(r.d)) return {};
  Json status = r.d["status"].is_object() ? r.d["status"] : Json::object();
  SetCondition(
      status,
      NewCondition("Progressing", "True", "NewReplicaSetCreated",
                   fmt::format("Created new replica set \"{}\"", NameOf(*r.new_rs)), Timestamp()));
  return WriteStatus(r, status);
}

VoidResult DeploymentController::Sync(const std::string& key) {
  auto obj = deployments_->Get(key);
  if (!obj) return {};
  auto holder = Holder(*obj);
  if (!holder) return {};
  Rollout r;
  r.d = *holder;
  if (!r.d["metadata"]["annotations"].is_object()) r.d["metadata"]["annotations"] = Json::object();
  const Json& sel = Member(Member(r.d, "spec"), "selector");
  auto selector = LabelSelectorOf(sel);
  if (!selector.ok() || !sel.is_object() || sel.empty()) {
    // An empty selector would match every pod: not acted on, as upstream.
    if (options_.log) options_.log(fmt::format("Deployment {}: empty or invalid selector", key));
    return {};
  }
  auto sets = ClaimReplicaSets(r.d, *selector);
  if (!sets.ok()) return sets.error();
  r.sets = std::move(sets).value();
  if (HasDeletionTimestamp(r.d)) {
    if (auto n = NewAndOld(r, false); !n.ok()) return n;
    return SyncStatusOnly(r);
  }
  if (auto c = CheckPausedConditions(r); !c.ok()) return c;
  const Json& spec = r.d["spec"];
  const bool paused = Member(spec, "paused").is_boolean() && spec["paused"].get<bool>();
  if (paused || IsScalingEvent(r)) {
    if (auto n = NewAndOld(r, false); !n.ok()) return n;
    if (auto s = Scale(r); !s.ok()) return s;
    if (paused) {
      if (auto c = CleanupOldSets(r); !c.ok()) return c;
    }
    return SyncStatusOnly(r);
  }
  if (IsRollingUpdate(r.d)) return RolloutRolling(r);
  std::vector<Object> all_pods = pods_->List();
  std::vector<const Json*> pods;
  const std::string ns = NamespaceOf(r.d);
  for (const Object& o : all_pods) {
    const Json& p = DocOf(o);
    if (NamespaceOf(p) == ns) pods.push_back(&p);
  }
  return RolloutRecreate(r, pods);
}

}  // namespace berth::controllers
