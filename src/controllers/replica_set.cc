#include "controllers/replica_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "controllers/pod_util.h"

namespace berth::controllers {

namespace {

constexpr std::string_view kMergePatch = "application/merge-patch+json";

UnixTime Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string PodPath(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
}

// The outcome of a write whose answer was lost is unknown: as upstream does on a timeout, the
// creation is counted, and the expectation waits for the informer (or the TTL).
bool OutcomeUnknown(const client::ClientError& e) {
  return (e.code == ErrorCode::kTimeout || e.code == ErrorCode::kUnavailable) && !e.never_sent;
}

const Json& PodDoc(const Pod& pod) {
  static const Json kNull;
  return pod.raw ? *pod.raw : kNull;
}

bool SameRefUid(const Json* a, const Json* b) {
  if (!a || !b) return a == b;
  return StringAt(*a, "uid") == StringAt(*b, "uid");
}

}  // namespace

ReplicaSetKind ReplicaSetKind::ReplicaSets() {
  return {"ReplicaSet", "apps/v1", "replicasets", false};
}

ReplicaSetKind ReplicaSetKind::ReplicationControllers() {
  return {"ReplicationController", "v1", "replicationcontrollers", true};
}

std::string ReplicaSetKind::CollectionPath(const std::string& ns) const {
  const std::string root = api_version == "v1" ? "/api/v1" : "/apis/" + api_version;
  return fmt::format("{}/namespaces/{}/{}", root, ns, plural);
}

std::string ReplicaSetKind::ObjectPath(const std::string& ns, const std::string& name) const {
  return CollectionPath(ns) + "/" + name;
}

Json PodFromTemplate(const ReplicaSetKind& kind, const Json& set) {
  const Json& tmpl = Member(Member(set, "spec"), "template");
  const Json& tmeta = Member(tmpl, "metadata");
  Json meta = Json::object();
  meta["generateName"] = NameOf(set) + "-";
  meta["namespace"] = NamespaceOf(set);
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const Json& v = Member(tmeta, field);
    if (!v.is_null()) meta[field] = v;
  }
  meta["ownerReferences"] = Json::array({NewControllerRef(kind.api_version, kind.kind, set)});
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", std::move(meta)}};
  const Json& spec = Member(tmpl, "spec");
  pod["spec"] = spec.is_null() ? Json::object() : spec;
  return pod;
}

ReplicaSetController::ReplicaSetController(ReplicaSetKind kind, client::RestClient* rest,
                                           SharedInformer* pods, SharedInformer* sets,
                                           ControllerOptions options)
    : kind_(std::move(kind)),
      rest_(rest),
      pods_(pods),
      sets_(sets),
      options_(std::move(options)),
      queue_(options_.clock),
      expectations_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  sets_->AddHandlers(
      EnqueueOnEvents(&queue_, [this](const std::string& key) { expectations_.Delete(key); }));
  client::InformerHandlers pod_handlers;
  pod_handlers.on_add = [this](const Object& o) { OnPodAdd(o); };
  pod_handlers.on_update = [this](const Object& a, const Object& b) { OnPodUpdate(a, b); };
  pod_handlers.on_delete = [this](const Object& o) { OnPodDelete(o); };
  // The census first: the handlers below enqueue syncs that read it.
  census_.Watch(pods_);
  pods_->AddHandlers(std::move(pod_handlers));
  pods_->AddOwnerIndexes();
  sets_->AddOwnerIndexes();
}

ReplicaSetController::~ReplicaSetController() { Stop(); }

void ReplicaSetController::Start() { workers_.Start(options_.workers); }

void ReplicaSetController::Stop() { workers_.Stop(); }

std::shared_ptr<const Json> ReplicaSetController::ResolveRef(const std::string& ns,
                                                             const Json* ref) const {
  if (!ref || StringAt(*ref, "kind") != kind_.kind) return nullptr;
  auto set = sets_->Get(ns + "/" + StringAt(*ref, "name"));
  if (!set) return nullptr;
  const Json& doc = DocOf(*set);
  if (UidOf(doc) != StringAt(*ref, "uid")) return nullptr;  // a different set of that name
  // The document is kept alive by the object's raw pointer.
  return std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, *set);
}

void ReplicaSetController::EnqueueMatchingSets(const Json& pod) {
  const std::string ns = NamespaceOf(pod);
  const Labels labels = LabelsOf(pod);
  for (const Object& o : sets_->List()) {
    const Json& set = DocOf(o);
    if (NamespaceOf(set) != ns) continue;
    const Json& sel = Member(Member(set, "spec"), "selector");
    CompiledSelector selector;
    if (kind_.set_selector) {
      selector = SetSelectorOf(sel);
    } else if (auto s = LabelSelectorOf(sel); s.ok()) {
      selector = *s;
    }
    if (selector.Matches(labels)) queue_.Add(KeyOf(set));
  }
}

void ReplicaSetController::OnPodAdd(const Object& obj) {
  const Json& pod = DocOf(obj);
  if (HasDeletionTimestamp(pod)) {
    OnPodDelete(obj);
    return;
  }
  if (const Json* ref = ControllerRefOf(pod)) {
    if (auto set = ResolveRef(NamespaceOf(pod), ref)) {
      const std::string key = KeyOf(*set);
      expectations_.CreationObserved(key);
      queue_.Add(key);
    }
    return;
  }
  EnqueueMatchingSets(pod);
}

void ReplicaSetController::OnPodUpdate(const Object& old_obj, const Object& new_obj) {
  const Json& old_pod = DocOf(old_obj);
  const Json& pod = DocOf(new_obj);
  const Json& old_labels = Member(Member(old_pod, "metadata"), "labels");
  const bool labels_changed = old_labels != Member(Member(pod, "metadata"), "labels");
  if (HasDeletionTimestamp(pod)) {
    OnPodDelete(new_obj);
    if (labels_changed) OnPodDelete(old_obj);
    return;
  }
  const Json* ref = ControllerRefOf(pod);
  const Json* old_ref = ControllerRefOf(old_pod);
  const bool ref_changed = !SameRefUid(ref, old_ref);
  if (ref_changed && old_ref) {
    if (auto set = ResolveRef(NamespaceOf(old_pod), old_ref)) queue_.Add(KeyOf(*set));
  }
  if (ref) {
    if (auto set = ResolveRef(NamespaceOf(pod), ref)) {
      const std::string key = KeyOf(*set);
      queue_.Add(key);
      const int64_t min_ready = IntAt(Member(*set, "spec"), "minReadySeconds");
      if (min_ready > 0 && !IsPodReady(old_pod) && IsPodReady(pod)) {
        queue_.AddAfter(key, std::chrono::seconds(min_ready + 1));
      }
    }
    return;
  }
  if (labels_changed || ref_changed) EnqueueMatchingSets(pod);
}

void ReplicaSetController::OnPodDelete(const Object& obj) {
  const Json& pod = DocOf(obj);
  const Json* ref = ControllerRefOf(pod);
  if (!ref) return;
  if (auto set = ResolveRef(NamespaceOf(pod), ref)) {
    const std::string key = KeyOf(*set);
    expectations_.DeletionObserved(key, KeyOf(pod));
    queue_.Add(key);
  }
}

VoidResult ReplicaSetController::PatchOwnerRefs(const Pod& pod, Json refs) {
  Json patch = {
      {"metadata",
       {{"ownerReferences", std::move(refs)}, {"resourceVersion", pod.metadata.resource_version}}}};
  auto r =
      rest_->Send("PATCH", PodPath(pod.metadata.namespace_, pod.metadata.name), patch, kMergePatch);
  if (!r.ok()) return r.error();
  return {};
}

Result<std::vector<const Pod*>> ReplicaSetController::ClaimPods(
    const Json& set, const CompiledSelector& selector, const std::vector<const Pod*>& candidates) {
  const std::string uid = UidOf(set);
  const bool deleting = HasDeletionTimestamp(set);
  std::vector<const Pod*> claimed, orphans;
  std::optional<Error> first_error;
  for (const Pod* p : candidates) {
    const OwnerReference* ref = ControllerOf(p->metadata);
    const bool matches = selector.Matches(p->metadata.labels);
    if (ref) {
      if (ref->uid != uid) continue;  // another controller's
      if (matches) {
        claimed.push_back(p);
      } else if (!deleting) {
        // Released: every reference to this set goes (as written, unknown fields and all).
        Json refs = Json::array();
        for (const Json& r : Member(Member(PodDoc(*p), "metadata"), "ownerReferences")) {
          if (StringAt(r, "uid") != uid) refs.push_back(r);
        }
        auto r = PatchOwnerRefs(*p, std::move(refs));
        if (!r.ok() && r.error().code != ErrorCode::kNotFound && !first_error) {
          first_error = r.error();
        }
      }
      continue;
    }
    if (deleting || !matches || p->metadata.deletion_timestamp) continue;
    orphans.push_back(p);
  }
  if (!orphans.empty()) {
    // As upstream's RecheckDeletionTimestamp: adopt only for a set that still exists, is this
    // one and is not being deleted, as the API server says now.
    auto fresh = rest_->Get(kind_.ObjectPath(NamespaceOf(set), NameOf(set)));
    if (!fresh.ok()) return fresh.error();
    if (UidOf(*fresh) != uid || HasDeletionTimestamp(*fresh)) {
      return Error{
          fmt::format("{} {} is gone or being deleted: not adopting pods", kind_.kind, KeyOf(set)),
          ErrorCode::kConflict};
    }
    for (const Pod* p : orphans) {
      Json refs = Member(Member(PodDoc(*p), "metadata"), "ownerReferences");
      if (!refs.is_array()) refs = Json::array();
      refs.push_back(NewControllerRef(kind_.api_version, kind_.kind, set));
      auto r = PatchOwnerRefs(*p, std::move(refs));
      if (r.ok()) {
        claimed.push_back(p);
      } else if (r.error().code != ErrorCode::kNotFound && !first_error) {
        first_error = r.error();
      }
    }
  }
  if (first_error) return *first_error;
  return claimed;
}

int ReplicaSetController::CreatePods(const Json& set, const std::string& key, int count,
                                     Error* first_error) {
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods", NamespaceOf(set));
  const std::string body = PodFromTemplate(kind_, set).dump();
  // Slow start: 1, 2, 4, ... creations at a time, stopping at the first failing batch, so a
  // set whose pods are all refused (quota, admission) costs a few requests, not hundreds.
  int counted = 0, remaining = count;
  for (int batch = std::min(remaining, 1); batch > 0; batch = std::min(2 * batch, remaining)) {
    std::vector<client::RestClient::EncodedWrite> writes(batch, {path, body});
    auto results = rest_->SendEncodedPipelined("POST", writes);
    int failed = 0;
    for (const auto& r : results) {
      if (r.ok() || OutcomeUnknown(r.error())) {
        ++counted;
      } else if (IsNamespaceTerminating(r.error())) {
        ++failed;  // nothing to retry: the set goes with its namespace
      } else {
        if (failed++ == 0 && first_error->message.empty()) *first_error = r.error();
      }
    }
    remaining -= batch;
    if (failed > 0) break;
  }
  return counted;
}

std::vector<const Json*> ReplicaSetController::RelatedPods(const Json& set,
                                                           std::vector<Object>* keep) const {
  // The pods of every set under the same controller (a Deployment's ReplicaSets), or of this
  // set alone.
  std::set<std::string> owners{UidOf(set)};
  const std::string ns = NamespaceOf(set);
  if (const Json* owner = ControllerRefOf(set)) {
    const std::string owner_uid = StringAt(*owner, "uid");
    for (const Object& o : sets_->ControlledBy(owner_uid)) {
      const Json& other = DocOf(o);
      if (NamespaceOf(other) == ns) owners.insert(UidOf(other));
    }
  }
  std::vector<const Json*> out;
  for (const std::string& uid : owners) {
    for (Object& o : pods_->ControlledBy(uid)) {
      const Json& pod = DocOf(o);
      if (NamespaceOf(pod) != ns) continue;
      out.push_back(&pod);
      keep->push_back(std::move(o));
    }
  }
  return out;
}

VoidResult ReplicaSetController::CreateReplicas(const Json& set, const std::string& key,
                                                int64_t missing) {
  const int want = static_cast<int>(std::min<int64_t>(missing, kBurstReplicas));
  expectations_.ExpectCreations(key, want);
  Error error;
  const int counted = CreatePods(set, key, want, &error);
  // Creations that did not happen will never be observed.
  for (int i = counted; i < want; ++i) expectations_.CreationObserved(key);
  if (counted < want && !error.message.empty()) return error;
  return {};
}

VoidResult ReplicaSetController::DeleteReplicas(const std::string& key,
                                                const std::vector<const Json*>& pods,
                                                const std::vector<const Json*>& related,
                                                int64_t surplus) {
  const size_t n = static_cast<size_t>(std::min<int64_t>(surplus, kBurstReplicas));
  auto victims = PodsToDelete(pods, related, n, options_.clock->Now());
  std::vector<std::string> keys;
  std::vector<client::RestClient::EncodedWrite> writes;
  for (const Json* p : victims) {
    keys.push_back(KeyOf(*p));
    writes.push_back({PodPath(NamespaceOf(*p), NameOf(*p)), ""});
  }
  expectations_.ExpectDeletions(key, keys);
  auto results = rest_->SendEncodedPipelined("DELETE", writes);
  std::optional<Error> first_error;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok() || OutcomeUnknown(results[i].error())) continue;
    // Not deleted (or already gone): no deletion event is coming for it from this request.
    expectations_.DeletionObserved(key, keys[i]);
    if (results[i].error().code != ErrorCode::kNotFound && !first_error) {
      first_error = results[i].error();
    }
  }
  if (first_error) return *first_error;
  return {};
}

std::optional<ReplicaSetController::Counts> ReplicaSetController::CountFromCensus(
    const SyncInput& in) const {
  const UnixTime now = Seconds(options_.clock->Now());
  if (!in.deleting) {
    for (const PodCensus::Group& g : census_.Groups("", in.ns)) {
      if (in.selector.Matches(g.labels)) return std::nullopt;  // orphans to adopt
    }
  }
  Counts c;
  for (const PodCensus::Group& g : census_.Groups(in.uid, in.ns)) {
    if (!in.selector.Matches(g.labels)) {
      if (!in.deleting) return std::nullopt;  // pods to release
      continue;
    }
    c.replicas += g.active;
    if (in.template_selector.Matches(g.labels)) c.fully_labeled += g.active;
    c.ready += g.ready;
    c.available += g.Available(in.min_ready, now);
  }
  return c;
}

ReplicaSetController::Counts ReplicaSetController::CountClaimed(
    const SyncInput& in, const std::vector<const Pod*>& claimed) const {
  const UnixTime now = Seconds(options_.clock->Now());
  Counts c;
  c.replicas = static_cast<int64_t>(claimed.size());
  for (const Pod* p : claimed) {
    if (in.template_selector.Matches(p->metadata.labels)) ++c.fully_labeled;
    if (!IsPodReady(*p)) continue;
    ++c.ready;
    if (in.min_ready == 0 || IsPodAvailable(PodDoc(*p), in.min_ready, now)) ++c.available;
  }
  return c;
}

std::vector<const Pod*> ReplicaSetController::ActivePods(const SyncInput& in,
                                                         std::vector<Object>* keep) const {
  // Both indexes list in key order, and the namespace's keys in name order, so the set's pods
  // come in the order a list of the namespace gives them (ranking breaks ties by position),
  // and orphans, adopted last, in theirs.
  *keep = pods_->ControlledBy(in.uid);
  std::vector<Object> orphans = pods_->Orphans(in.ns);
  keep->insert(keep->end(), std::make_move_iterator(orphans.begin()),
               std::make_move_iterator(orphans.end()));
  std::vector<const Pod*> active;
  active.reserve(keep->size());
  for (const Object& o : *keep) {
    const auto* pod = std::get_if<std::shared_ptr<const Pod>>(&o);
    if (!pod || !*pod || (*pod)->metadata.namespace_ != in.ns) continue;
    if (IsPodActive(**pod)) active.push_back(pod->get());
  }
  return active;
}

Result<Json> ReplicaSetController::WriteStatus(const Json& set, const Counts& counts,
                                               const std::optional<Error>& manage_error, int diff) {
  const UnixTime now = Seconds(options_.clock->Now());
  const Json& old_status = Member(set, "status");
  Json conditions = Json::array();
  const Json& old_conditions = Member(old_status, "conditions");
  const Json* failure = nullptr;
  if (old_conditions.is_array()) {
    for (const Json& c : old_conditions) {
      if (StringAt(c, "type") == "ReplicaFailure") {
        failure = &c;
      } else {
        conditions.push_back(c);
      }
    }
  }
  if (manage_error && !failure) {
    conditions.push_back({{"type", "ReplicaFailure"},
                          {"status", "True"},
                          {"lastTransitionTime", FormatTimestamp(now)},
                          {"reason", diff < 0 ? "FailedCreate" : "FailedDelete"},
                          {"message", manage_error->message}});
  } else if (manage_error && failure) {
    conditions.push_back(*failure);
  }
  Json status = {{"replicas", counts.replicas},
                 {"fullyLabeledReplicas", counts.fully_labeled},
                 {"readyReplicas", counts.ready},
                 {"availableReplicas", counts.available},
                 {"observedGeneration", IntAt(Member(set, "metadata"), "generation")}};
  if (!conditions.empty()) status["conditions"] = std::move(conditions);
  // The API server leaves zero counts out; compare as it stores them.
  auto same = [&](const Json& a, const Json& b) {
    for (const char* f : {"replicas", "fullyLabeledReplicas", "readyReplicas", "availableReplicas",
                          "observedGeneration"}) {
      if (IntAt(a, f) != IntAt(b, f)) return false;
    }
    const Json& ca = Member(a, "conditions");
    const Json& cb = Member(b, "conditions");
    return (ca.is_null() || ca.empty()) ? (cb.is_null() || cb.empty()) : ca == cb;
  };
  if (same(status, old_status)) return set;
  Json next = set;
  next["status"] = status;
  const std::string path = kind_.ObjectPath(NamespaceOf(set), NameOf(set)) + "/status";
  auto put = rest_->Put(path, next);
  if (put.ok() || put.error().code != ErrorCode::kConflict) return put;
  // Stale copy: once more on the server's current one, as upstream's updateReplicaSetStatus.
  auto fresh = rest_->Get(kind_.ObjectPath(NamespaceOf(set), NameOf(set)));
  if (!fresh.ok()) return fresh.error();
  (*fresh)["status"] = status;
  (*fresh)["status"]["observedGeneration"] = IntAt(Member(*fresh, "metadata"), "generation");
  return rest_->Put(path, *fresh);
}

VoidResult ReplicaSetController::Sync(const std::string& key) {
  auto obj = sets_->Get(key);
  if (!obj) {
    expectations_.Delete(key);
    return {};
  }
  auto holder =
      std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, *obj);
  if (!holder) return {};
  const Json& set = *holder;
  const bool needs_sync = expectations_.Satisfied(key);
  const Json& spec = Member(set, "spec");
  SyncInput in;
  in.uid = UidOf(set);
  in.ns = NamespaceOf(set);
  const Json& sel = Member(spec, "selector");
  if (kind_.set_selector) {
    in.selector = SetSelectorOf(sel);
  } else {
    auto s = LabelSelectorOf(sel);
    if (!s.ok()) {
      if (options_.log) options_.log(fmt::format("{} {}: {}", kind_.kind, key, s.error().message));
      return {};  // not retried: the object must change first
    }
    in.selector = *s;
  }
  in.template_selector = CompiledSelector::Everything();
  const Json& tmpl_labels = Member(Member(Member(spec, "template"), "metadata"), "labels");
  if (tmpl_labels.is_object() && !tmpl_labels.empty()) {
    in.template_selector = SetSelectorOf(tmpl_labels);
  }
  in.replicas = IntAt(spec, "replicas", 1);
  in.min_ready = IntAt(spec, "minReadySeconds");
  in.deleting = HasDeletionTimestamp(set);
  const bool manage = needs_sync && !in.deleting;
  // The census' counts unless pods must be picked: adopted, released, or deleted.
  std::optional<Counts> counts = CountFromCensus(in);
  std::vector<Object> keep;
  std::vector<const Json*> claimed;
  if (!counts || (manage && counts->replicas > in.replicas)) {
    auto pods = ClaimPods(set, in.selector, ActivePods(in, &keep));
    if (!pods.ok()) return pods.error();
    counts = CountClaimed(in, *pods);
    for (const Pod* p : *pods) claimed.push_back(&PodDoc(*p));
  }
  const int diff = static_cast<int>(counts->replicas - in.replicas);
  std::optional<Error> manage_error;
  if (manage && diff != 0) {
    VoidResult r;
    if (diff < 0) {
      r = CreateReplicas(set, key, -static_cast<int64_t>(diff));
    } else {
      std::vector<const Json*> related = RelatedPods(set, &keep);
      r = DeleteReplicas(key, claimed, related, diff);
    }
    if (!r.ok()) manage_error = r.error();
  }
  auto written = WriteStatus(set, *counts, manage_error, diff);
  if (!written.ok()) return written.error();
  if (manage_error) return *manage_error;
  const Json& status = Member(*written, "status");
  const int64_t min_ready = IntAt(Member(*written, "spec"), "minReadySeconds");
  if (min_ready > 0 && IntAt(status, "readyReplicas") == in.replicas &&
      IntAt(status, "availableReplicas") != in.replicas) {
    queue_.AddAfter(key, std::chrono::seconds(min_ready));
  }
  return {};
}

}  // namespace berth::controllers
