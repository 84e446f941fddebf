#include "controllers/stateful_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "controllers/controller_revision.h"
#include "controllers/pod_util.h"
#include "controllers/stateful_set_util.h"

namespace berth::controllers {

namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";

UnixTime Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string SetPath(const std::string& ns, const std::string& name) {
  return fmt::format("/apis/apps/v1/namespaces/{}/statefulsets/{}", ns, name);
}

std::string PodPath(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
}

std::shared_ptr<const Json> Holder(const Object& obj) {
  return std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, obj);
}

std::string RevisionOfPod(const Json& pod) {
  return StringAt(Member(Member(pod, "metadata"), "labels"), kControllerRevisionHashLabel);
}

std::string Phase(const Json& pod) { return StringAt(Member(pod, "status"), "phase"); }

bool RunningAndReady(const Json& pod) { return Phase(pod) == "Running" && IsPodReady(pod); }

const Json& Strategy(const Json& set) { return Member(Member(set, "spec"), "updateStrategy"); }

}  // namespace

// What one sync reads: the set, its revisions and its pods by ordinal.
struct StatefulSetController::State {
  const Json* set = nullptr;
  std::string key;
  int64_t start = 0, replicas = 0;
  bool monotonic = true;  // OrderedReady
  std::string current_name, update_name;
  Json current_template, update_template;
  std::vector<const Json*> slots;      // ordinal start+i -> pod (null: missing)
  std::vector<const Json*> condemned;  // beyond the replicas, highest ordinal first
  std::vector<const Json*> all;        // every pod of the set
  bool namespace_terminating = false;  // a create was refused: the namespace is being deleted
};

StatefulSetController::StatefulSetController(client::RestClient* rest, SharedInformer* pods,
                                             SharedInformer* sets, SharedInformer* revisions,
                                             SharedInformer* claims, ControllerOptions options)
    : rest_(rest),
      pods_(pods),
      sets_(sets),
      revisions_(revisions),
      claims_(claims),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  sets_->AddHandlers(EnqueueOnEvents(&queue_));
  client::InformerHandlers pod_handlers;
  pod_handlers.on_add = [this](const Object& o) { OnPod(o); };
  pod_handlers.on_update = [this](const Object&, const Object& o) { OnPod(o); };
  pod_handlers.on_delete = [this](const Object& o) { OnPod(o); };
  pods_->AddHandlers(std::move(pod_handlers));
  pods_->AddOwnerIndexes();
}

StatefulSetController::~StatefulSetController() { Stop(); }
void StatefulSetController::Start() { workers_.Start(options_.workers); }
void StatefulSetController::Stop() { workers_.Stop(); }

void StatefulSetController::OnPod(const Object& obj) {
  const Json& pod = DocOf(obj);
  const Json* ref = ControllerRefOf(pod);
  if (!ref || StringAt(*ref, "kind") != "StatefulSet") return;
  const std::string key = NamespaceOf(pod) + "/" + StringAt(*ref, "name");
  auto set = sets_->Get(key);
  if (set && UidOf(DocOf(*set)) == StringAt(*ref, "uid")) queue_.Add(key);
}

VoidResult StatefulSetController::EnsureClaims(State& s, int64_t ordinal) {
  const Json& set = *s.set;
  const Json& templates = Member(Member(set, "spec"), "volumeClaimTemplates");
  if (!templates.is_array()) return {};
  const std::string ns = NamespaceOf(set);
  for (const Json& t : templates) {
    const std::string name = ClaimName(set, t, ordinal);
    if (claims_->Get(ns + "/" + name)) continue;
    auto r = rest_->Post(fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims", ns),
                         NewClaim(set, t, ordinal));
    if (!r.ok() && IsNamespaceTerminating(r.error())) {
      s.namespace_terminating = true;
      return {};
    }
    if (!r.ok() && r.error().code != ErrorCode::kAlreadyExists) {
      return Error{fmt::format("StatefulSet {}: claim {}: {}", KeyOf(set), name, r.error().message),
                   r.error().code};
    }
  }
  return {};
}

VoidResult StatefulSetController::CreatePod(State& s, int64_t ordinal) {
  if (auto r = EnsureClaims(s, ordinal); !r.ok() || s.namespace_terminating) return r;
  // As upstream's newVersionedStatefulSetPod: below the partition (or, without a rollingUpdate
  // block, below the current replicas), a recreated pod keeps the current revision.
  const Json& strategy = Strategy(*s.set);
  const std::string type = StringAt(strategy, "type");
  bool current = false;
  if (type.empty() || type == "RollingUpdate") {
    const Json& ru = Member(strategy, "rollingUpdate");
    const int64_t bound = ru.is_object() ? IntAt(ru, "partition", 0)
                                         : IntAt(Member(*s.set, "status"), "currentReplicas", 0);
    current = ordinal < s.start + bound && !s.current_template.is_null();
  }
  Json pod = NewStatefulPod(*s.set, current ? s.current_template : s.update_template, ordinal,
                            current ? s.current_name : s.update_name);
  auto r = rest_->Post(fmt::format("/api/v1/namespaces/{}/pods", NamespaceOf(*s.set)), pod);
  // AlreadyExists: the pod is there, whatever this cache shows; the next event syncs again.
  if (!r.ok() && IsNamespaceTerminating(r.error())) {
    s.namespace_terminating = true;
    return {};
  }
  if (!r.ok() && r.error().code != ErrorCode::kAlreadyExists) return r.error();
  return {};
}

VoidResult StatefulSetController::DeletePod(const Json& pod) {
  auto r = rest_->Delete(PodPath(NamespaceOf(pod), NameOf(pod)));
  if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();
  return {};
}

VoidResult StatefulSetController::ReleaseClaimsTo(const Json& set, const Json& pod) {
  const Json& spec = Member(set, "spec");
  if (StringAt(Member(spec, "persistentVolumeClaimRetentionPolicy"), "whenScaled") != "Delete")
    return {};
  const Json& templates = Member(spec, "volumeClaimTemplates");
  auto ordinal = OrdinalOf(NameOf(set), NameOf(pod));
  if (!templates.is_array() || !ordinal) return {};
  const std::string ns = NamespaceOf(set);
  for (const Json& t : templates) {
    const std::string name = ClaimName(set, t, *ordinal);
    auto claim = claims_->Get(ns + "/" + name);
    if (!claim) continue;
    Json refs = Member(Member(DocOf(*claim), "metadata"), "ownerReferences");
    if (!refs.is_array()) refs = Json::array();
    bool owned = false;
    for (const Json& r : refs) owned = owned || StringAt(r, "uid") == UidOf(pod);
    if (owned) continue;
    Json ref = NewControllerRef("v1", "Pod", pod);
    ref["controller"] = false;
    refs.push_back(std::move(ref));
    auto r = rest_->Patch(fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims/{}", ns, name),
                          {{"metadata", {{"ownerReferences", refs}}}}, kMergePatch);
    if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();
  }
  return {};
}

Result<bool> StatefulSetController::ManageReplicas(State& s) {
  const Json* first_unhealthy = nullptr;
  for (size_t i = 0; i < s.slots.size(); ++i) {
    const Json* pod = s.slots[i];
    const int64_t ordinal = s.start + static_cast<int64_t>(i);
    if (pod && Phase(*pod) == "Failed" && !HasDeletionTimestamp(*pod)) {
      if (auto r = DeletePod(*pod); !r.ok()) return r.error();
      if (s.monotonic) return false;
      continue;
    }
    if (!pod) {
      if (auto r = CreatePod(s, ordinal); !r.ok()) return r.error();
      if (s.monotonic || s.namespace_terminating) return false;
      continue;
    }
    if (auto r = EnsureClaims(s, ordinal); !r.ok()) return r.error();
    if (s.namespace_terminating) return false;
    if (!first_unhealthy && (HasDeletionTimestamp(*pod) || !RunningAndReady(*pod)))
      first_unhealthy = pod;
    if (s.monotonic && first_unhealthy) return false;
  }
  for (const Json* pod : s.condemned) {
    if (HasDeletionTimestamp(*pod)) {
      if (s.monotonic) return false;
      continue;
    }
    // OrderedReady removes a pod only while every other pod is healthy.
    if (s.monotonic && first_unhealthy && first_unhealthy != pod) return false;
    if (auto r = ReleaseClaimsTo(*s.set, *pod); !r.ok()) return r.error();
    if (auto r = DeletePod(*pod); !r.ok()) return r.error();
    if (s.monotonic) return false;
  }
  return true;
}

VoidResult StatefulSetController::RollPods(State& s) {
  const Json& strategy = Strategy(*s.set);
  const std::string type = StringAt(strategy, "type");
  if (!type.empty() && type != "RollingUpdate") return {};
  const int64_t partition = IntAt(Member(strategy, "rollingUpdate"), "partition", 0);
  for (int64_t i = static_cast<int64_t>(s.slots.size()) - 1; i >= partition; --i) {
    const Json* pod = s.slots[i];
    if (!pod) return {};
    if (RevisionOfPod(*pod) != s.update_name && !HasDeletionTimestamp(*pod)) return DeletePod(*pod);
    if (!RunningAndReady(*pod) || HasDeletionTimestamp(*pod)) return {};  // wait for it
  }
  return {};
}

VoidResult StatefulSetController::WriteStatus(State& s) {
  const Json& set = *s.set;
  const int64_t min_ready = IntAt(Member(set, "spec"), "minReadySeconds");
  const UnixTime now = Seconds(options_.clock->Now());
  int64_t replicas = 0, ready = 0, available = 0, current = 0, updated = 0;
  for (const Json* p : s.all) {
    if (Phase(*p).empty()) continue;
    ++replicas;
    if (RunningAndReady(*p)) {
      ++ready;
      available += IsPodAvailable(*p, min_ready, now);
    }
    if (HasDeletionTimestamp(*p)) continue;
    current += RevisionOfPod(*p) == s.current_name;
    updated += RevisionOfPod(*p) == s.update_name;
  }
  std::string current_name = s.current_name;
  const std::string type = StringAt(Strategy(set), "type");
  if ((type.empty() || type == "RollingUpdate") && updated == replicas && ready == replicas) {
    current = updated;
    current_name = s.update_name;
  }
  const Json& old = Member(set, "status");
  Json status = {{"replicas", replicas},
                 {"readyReplicas", ready},
                 {"availableReplicas", available},
                 {"currentReplicas", current},
                 {"updatedReplicas", updated},
                 {"currentRevision", current_name},
                 {"updateRevision", s.update_name},
                 {"observedGeneration", IntAt(Member(set, "metadata"), "generation")}};
  if (!Member(old, "collisionCount").is_null()) status["collisionCount"] = old["collisionCount"];
  bool same = StringAt(old, "currentRevision") == current_name &&
              StringAt(old, "updateRevision") == s.update_name;
  for (const char* f : {"replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                        "updatedReplicas", "observedGeneration"})
    same = same && IntAt(old, f) == status[f].get<int64_t>();
  if (min_ready > 0 && ready != available) queue_.AddAfter(s.key, std::chrono::seconds(min_ready));
  if (same) return {};
  const std::string path = SetPath(NamespaceOf(set), NameOf(set)) + "/status";
  Json next = set;
  next["status"] = status;
  auto put = rest_->Put(path, next);
  if (put.ok()) return {};
  if (put.error().code != ErrorCode::kConflict) return put.error();
  auto fresh = rest_->Get(SetPath(NamespaceOf(set), NameOf(set)));
  if (!fresh.ok()) return fresh.error();
  (*fresh)["status"] = status;
  auto again = rest_->Put(path, *fresh);
  if (!again.ok()) return again.error();
  return {};
}

VoidResult StatefulSetController::Sync(const std::string& key) {
  auto obj = sets_->Get(key);
  if (!obj) return {};
  auto holder = Holder(*obj);
  if (!holder) return {};
  const Json& set = *holder;
  State s;
  s.set = &set;
  s.key = key;
  s.start = StartOrdinal(set);
  s.replicas = std::max<int64_t>(0, IntAt(Member(set, "spec"), "replicas", 1));
  s.monotonic = StringAt(Member(set, "spec"), "podManagementPolicy") != "Parallel";
  const std::string ns = NamespaceOf(set);
  const std::string uid = UidOf(set);
  const std::string name = NameOf(set);
  std::vector<Object> pods = pods_->ControlledBy(uid);
  std::set<std::string> live_hashes;
  std::map<int64_t, const Json*> by_ordinal;
  for (const Object& o : pods) {
    const auto* pod = std::get_if<std::shared_ptr<const Pod>>(&o);
    if (!pod || (*pod)->metadata.namespace_ != ns) continue;
    const Json& doc = DocOf(o);
    const Json* ref = ControllerRefOf(doc);
    if (!ref || StringAt(*ref, "uid") != uid) continue;
    auto ordinal = OrdinalOf(name, NameOf(doc));
    if (!ordinal) continue;  // not one of the set's names: left alone
    s.all.push_back(&doc);
    by_ordinal[*ordinal] = &doc;
    const std::string rev = RevisionOfPod(doc);
    if (rev.size() > name.size() + 1) live_hashes.insert(rev.substr(name.size() + 1));
  }
  if (HasDeletionTimestamp(set)) return {};
  auto revisions = SyncRevisions(rest_, revisions_, set, "StatefulSet", live_hashes);
  if (!revisions.ok()) return revisions.error();
  if (revisions->namespace_terminating) return {};
  s.update_name = NameOf(revisions->update_revision);
  s.update_template = Member(Member(set, "spec"), "template");
  s.current_name = StringAt(Member(set, "status"), "currentRevision");
  for (const Json& r : revisions->owned) {
    if (NameOf(r) == s.current_name) s.current_template = TemplateOfRevision(r);
  }
  if (s.current_template.is_null()) {
    s.current_name = s.update_name;
    s.current_template = s.update_template;
  }
  s.slots.assign(s.replicas, nullptr);
  for (auto it = by_ordinal.rbegin(); it != by_ordinal.rend(); ++it) {
    if (it->first >= s.start && it->first < s.start + s.replicas) {
      s.slots[it->first - s.start] = it->second;
    } else {
      s.condemned.push_back(it->second);
    }
  }
  auto managed = ManageReplicas(s);
  std::optional<Error> error;
  if (!managed.ok()) {
    error = managed.error();
  } else if (*managed) {
    if (auto r = RollPods(s); !r.ok()) error = r.error();
  }
  if (auto r = WriteStatus(s); !r.ok()) return r.error();
  if (error) return *error;
  return {};
}

}  // namespace berth::controllers
