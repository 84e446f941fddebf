#include "controllers/pod_group.h"

#include <fmt/format.h>

#include <algorithm>

#include "controllers/events.h"

namespace berth::controllers {
namespace {

constexpr char kPending[] = "Pending";
constexpr char kScheduling[] = "Scheduling";
constexpr char kRunning[] = "Running";
constexpr char kFinished[] = "Finished";
constexpr char kFailed[] = "Failed";
constexpr char kPodGroupIndex[] = "pod-group";
constexpr std::string_view kMergePatch = "application/merge-patch+json";
constexpr UnixTime kReconcileLimitSeconds = 48 * 3600;

// The status fields upstream writes, with Go's omitempty: a zero count or an empty string is
// no field at all (so a merge patch that clears one sends null).
void SetOrErase(Json& status, const char* field, int64_t value) {
  if (value == 0) {
    status.erase(field);
  } else {
    status[field] = value;
  }
}

void SetOrErase(Json& status, const char* field, const std::string& value) {
  if (value.empty()) {
    status.erase(field);
  } else {
    status[field] = value;
  }
}

// "<namespace>/<owner name>" of each of the pod's owner references, sorted, joined by ",".
std::string OccupiedBy(const Json& pod) {
  const Json& refs = Member(Member(pod, "metadata"), "ownerReferences");
  if (!refs.is_array()) return "";
  std::vector<std::string> owners;
  for (const Json& ref : refs) owners.push_back(NamespaceOf(pod) + "/" + StringAt(ref, "name"));
  std::sort(owners.begin(), owners.end());
  return fmt::format("{}", fmt::join(owners, ","));
}

// The merge patch that turns status `from` into `to` (fields `to` lacks are set to null).
Json StatusPatch(const Json& from, const Json& to) {
  Json patch = Json::object();
  if (from.is_object()) {
    for (auto it = from.begin(); it != from.end(); ++it)
      if (!to.contains(it.key())) patch[it.key()] = nullptr;
  }
  for (auto it = to.begin(); it != to.end(); ++it) {
    const Json& old = Member(from, it.key());
    if (old != *it) patch[it.key()] = *it;
  }
  return patch;
}

std::string GroupKeyOf(const Json& pod) {
  const std::string group = StringAt(Member(Member(pod, "metadata"), "labels"), kPodGroupLabel);
  if (group.empty()) return "";
  return NamespaceOf(pod) + "/" + group;
}

}  // namespace

bool PodGroupTimedOut(const Json& group) {
  const Json& status = Member(group, "status");
  const std::string phase = StringAt(status, "phase");
  if (phase != kPending && phase != kScheduling) return false;
  if (IntAt(status, "running") != 0) return false;
  auto started = ParseTimestamp(StringAt(status, "scheduleStartTime"));
  // An unset scheduleStartTime is Go's zero time, long before any creation.
  if (!started.ok()) return false;
  return *started - CreatedAt(group) > kReconcileLimitSeconds;
}

Json NextPodGroupStatus(const Json& group, const std::vector<const Json*>& pods) {
  Json status = Member(group, "status");
  if (!status.is_object()) status = Json::object();
  const std::string phase = StringAt(status, "phase");
  if (phase == kFinished || phase == kFailed || PodGroupTimedOut(group)) return status;
  const int64_t min_member = IntAt(Member(group, "spec"), "minMember");
  const auto count = static_cast<int64_t>(pods.size());
  if (phase.empty()) {
    status["phase"] = kPending;
    return status;
  }
  if (phase == kPending) {
    if (count >= min_member) {
      status["phase"] = kScheduling;
      // Upstream leaves occupiedBy as it was when the first pod has no owner references.
      if (!pods.empty()) {
        const std::string occupied = OccupiedBy(*pods.front());
        if (!occupied.empty()) status["occupiedBy"] = occupied;
      }
    }
    return status;
  }
  int64_t running = 0, succeeded = 0, failed = 0;
  for (const Json* pod : pods) {
    const std::string pod_phase = StringAt(Member(*pod, "status"), "phase");
    if (pod_phase == "Running") ++running;
    if (pod_phase == "Succeeded") ++succeeded;
    if (pod_phase == "Failed") ++failed;
  }
  SetOrErase(status, "running", running);
  SetOrErase(status, "succeeded", succeeded);
  SetOrErase(status, "failed", failed);
  std::string next = phase;
  if (count < min_member) {
    next = kPending;
  } else {
    next = succeeded + running < min_member ? kScheduling : kRunning;
    if (failed != 0 && failed + running + succeeded >= min_member) next = kFailed;
    if (succeeded >= min_member) next = kFinished;
  }
  SetOrErase(status, "phase", next);
  return status;
}

PodGroupController::PodGroupController(client::RestClient* rest, SharedInformer* pods,
                                       SharedInformer* groups, ControllerOptions options)
    : rest_(rest),
      pods_(pods),
      groups_(groups),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  groups_->AddHandlers(EnqueueOnEvents(&queue_));
  pods_->AddIndex(kPodGroupIndex, [](const Object& o) -> std::vector<std::string> {
    std::string key = GroupKeyOf(DocOf(o));
    if (key.empty()) return {};
    return {std::move(key)};
  });
  client::InformerHandlers h;
  h.on_add = [this](const Object& o) { EnqueueGroupOf(o); };
  h.on_update = [this](const Object& old_pod, const Object& new_pod) {
    // A pod relabelled leaves one group and joins another: both are counted again.
    EnqueueGroupOf(old_pod);
    EnqueueGroupOf(new_pod);
  };
  h.on_delete = [this](const Object& o) { EnqueueGroupOf(o); };
  pods_->AddHandlers(std::move(h));
}

PodGroupController::~PodGroupController() { Stop(); }

void PodGroupController::Start() { workers_.Start(options_.workers); }

void PodGroupController::Stop() { workers_.Stop(); }

void PodGroupController::EnqueueGroupOf(const Object& pod) {
  std::string key = GroupKeyOf(DocOf(pod));
  if (!key.empty()) queue_.Add(key);
}

VoidResult PodGroupController::Sync(const std::string& key) {
  auto obj = groups_->Get(key);
  if (!obj) return {};
  const Json& group = DocOf(*obj);
  if (PodGroupTimedOut(group)) {
    // As upstream, on every sync of such a group (the recorder there aggregates repeats).
    RecordEvent(EventSource{rest_, options_.clock, "PodGroupController", options_.log}, group,
                "scheduling.x-k8s.io/v1alpha1", "PodGroup", "Warning", "Timeout",
                "schedule time longer than 48 hours");
    return {};
  }
  // The members' documents stay alive with `members` (the informer's objects are shared).
  const std::vector<Object> members = pods_->ByIndex(kPodGroupIndex, key);
  std::vector<const Json*> pods;
  pods.reserve(members.size());
  for (const Object& o : members) pods.push_back(&DocOf(o));
  const Json& old_status = Member(group, "status");
  const Json status = NextPodGroupStatus(group, pods);
  Json patch = StatusPatch(old_status, status);
  if (patch.empty()) return {};
  const auto [ns, name] = SplitKey(key);
  const Json body = {
      {"metadata", {{"resourceVersion", StringAt(Member(group, "metadata"), "resourceVersion")}}},
      {"status", std::move(patch)}};
  auto r = rest_->Send(
      "PATCH",
      fmt::format("/apis/scheduling.x-k8s.io/v1alpha1/namespaces/{}/podgroups/{}/status", ns, name),
      body, kMergePatch);
  if (r.ok()) return {};
  // Conflict: the informer has a newer PodGroup on its way, whose update queues the key again.
  // Not found: deleted meanwhile (or its CRD was).
  if (r.error().code == ErrorCode::kConflict || r.error().code == ErrorCode::kNotFound) return {};
  return r.error();
}

}  // namespace berth::controllers
