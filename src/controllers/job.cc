#include "controllers/job.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "controllers/job_util.h"
#include "controllers/pod_util.h"

namespace berth::controllers {

namespace {

constexpr size_t kMaxGeneratedNameLength = 58;  // 63 less the 5 random characters

UnixTime Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string JobPath(const std::string& ns, const std::string& name) {
  return fmt::format("/apis/batch/v1/namespaces/{}/jobs/{}", ns, name);
}

std::string PodPath(const std::string& ns, const std::string& name) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", ns, name);
}

bool OutcomeUnknown(const client::ClientError& e) {
  return (e.code == ErrorCode::kTimeout || e.code == ErrorCode::kUnavailable) && !e.never_sent;
}

std::string Phase(const Json& pod) { return StringAt(Member(pod, "status"), "phase"); }

// As upstream's pastBackoffLimitOnFailure: container restarts of running pods count as
// failures when the pods restart in place.
bool PastBackoffLimitOnFailure(const Json& job, const std::vector<const Json*>& pods) {
  const Json& spec = Member(job, "spec");
  if (StringAt(Member(Member(spec, "template"), "spec"), "restartPolicy") != "OnFailure")
    return false;
  int64_t restarts = 0;
  for (const Json* p : pods) {
    const std::string phase = Phase(*p);
    if (phase != "Running" && phase != "Pending") continue;
    for (const char* field : {"initContainerStatuses", "containerStatuses"}) {
      const Json& statuses = Member(Member(*p, "status"), field);
      if (!statuses.is_array()) continue;
      for (const Json& c : statuses) restarts += IntAt(c, "restartCount");
    }
  }
  const int64_t limit = IntAt(spec, "backoffLimit", 6);
  return limit == 0 ? restarts > 0 : restarts >= limit;
}

// Adds the JOB_COMPLETION_INDEX variable, from the index annotation, to every container.
void AddCompletionIndexEnv(Json& pod_spec) {
  const Json env = {
      {"name", "JOB_COMPLETION_INDEX"},
      {"valueFrom",
       {{"fieldRef",
         {{"fieldPath", fmt::format("metadata.annotations['{}']", kJobCompletionIndex)}}}}}};
  for (const char* list : {"initContainers", "containers"}) {
    Json& containers = pod_spec[list];
    if (!containers.is_array()) {
      if (containers.is_null()) pod_spec.erase(list);
      continue;
    }
    for (Json& c : containers) {
      Json& vars = c["env"];
      if (!vars.is_array()) vars = Json::array();
      const bool present = std::any_of(vars.begin(), vars.end(), [](const Json& v) {
        return StringAt(v, "name") == "JOB_COMPLETION_INDEX";
      });
      if (!present) vars.push_back(env);
    }
  }
}

}  // namespace

// What one sync knows and decides (upstream's syncJobCtx).
struct JobController::State {
  std::string key;
  Json job;  // the informer's copy, with the status being built
  UnixTime now = 0;
  bool indexed = false;
  int64_t completions = -1;  // -1: not set
  std::vector<const Json*> pods, active;
  int64_t active_count = 0, terminating = 0, ready = 0, succeeded = 0, failed = 0;
  std::set<int> succeeded_indexes;
  // SuccessCriteriaMet or FailureTarget, decided this sync or before.
  std::optional<Json> finished;
  bool suspend_changed = false;
  std::vector<Object> all;  // keeps the pods' documents alive
  Json old_status;
};

Json JobPodFromTemplate(const Json& job, int index) {
  const Json& spec = Member(job, "spec");
  const Json& tmpl = Member(spec, "template");
  const Json& tmeta = Member(tmpl, "metadata");
  const std::string name = NameOf(job);
  Json meta = Json::object();
  meta["namespace"] = NamespaceOf(job);
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const Json& v = Member(tmeta, field);
    if (!v.is_null()) meta[field] = v;
  }
  if (!meta["labels"].is_object()) meta["labels"] = Json::object();
  Json& labels = meta["labels"];
  if (!Member(spec, "manualSelector").is_boolean() || !spec["manualSelector"].get<bool>()) {
    // The API server names the Job in the template's labels; the UID it cannot know yet.
    for (std::string_view key : {kControllerUidLabel, std::string_view("controller-uid")}) {
      if (!labels.contains(key)) labels[std::string(key)] = UidOf(job);
    }
  }
  Json pod_spec = Member(tmpl, "spec");
  if (!pod_spec.is_object()) pod_spec = Json::object();
  if (index >= 0) {
    const std::string text = std::to_string(index);
    if (!meta["annotations"].is_object()) meta["annotations"] = Json::object();
    meta["annotations"][std::string(kJobCompletionIndex)] = text;
    labels[std::string(kJobCompletionIndex)] = text;
    pod_spec["hostname"] = fmt::format("{}-{}", name, index);
    AddCompletionIndexEnv(pod_spec);
    const std::string suffix = "-" + text + "-";
    std::string prefix = name + suffix;
    if (prefix.size() > kMaxGeneratedNameLength)
      prefix = name.substr(0, kMaxGeneratedNameLength - suffix.size()) + suffix;
    meta["generateName"] = prefix;
  } else {
    std::string prefix = name + "-";
    if (prefix.size() > kMaxGeneratedNameLength) prefix = name.substr(0, kMaxGeneratedNameLength);
    meta["generateName"] = prefix;
  }
  meta["ownerReferences"] = Json::array({NewControllerRef("batch/v1", "Job", job)});
  return Json{{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", std::move(meta)},
              {"spec", std::move(pod_spec)}};
}

JobController::JobController(client::RestClient* rest, SharedInformer* pods, SharedInformer* jobs,
                             ControllerOptions options)
    : rest_(rest),
      pods_(pods),
      jobs_(jobs),
      options_(std::move(options)),
      queue_(options_.clock),
      expectations_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  jobs_->AddHandlers(
      EnqueueOnEvents(&queue_, [this](const std::string& key) { expectations_.Delete(key); }));
  client::InformerHandlers h;
  h.on_add = [this](const Object& o) { OnPodEvent(o, true, false); };
  h.on_update = [this](const Object& old_obj, const Object& o) {
    // A pod that changes owner leaves its old Job to count again.
    if (ControllerRefOf(DocOf(old_obj)) && !ControllerRefOf(DocOf(o)))
      OnPodEvent(old_obj, false, false);
    OnPodEvent(o, false, false);
  };
  h.on_delete = [this](const Object& o) { OnPodEvent(o, false, true); };
  pods_->AddHandlers(std::move(h));
}

JobController::~JobController() { Stop(); }

void JobController::Start() { workers_.Start(options_.workers); }

void JobController::Stop() { workers_.Stop(); }

std::shared_ptr<const Json> JobController::ResolveJob(const Json& pod) const {
  const Json* ref = ControllerRefOf(pod);
  if (!ref || StringAt(*ref, "kind") != "Job") return nullptr;
  auto job = jobs_->Get(NamespaceOf(pod) + "/" + StringAt(*ref, "name"));
  if (!job || UidOf(DocOf(*job)) != StringAt(*ref, "uid")) return nullptr;
  return std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, *job);
}

void JobController::OnPodEvent(const Object& obj, bool added, bool deleted) {
  const Json& pod = DocOf(obj);
  auto job = ResolveJob(pod);
  if (!job) return;
  const std::string key = KeyOf(*job);
  if (deleted || HasDeletionTimestamp(pod)) {
    expectations_.DeletionObserved(key, KeyOf(pod));
  } else if (added) {
    expectations_.CreationObserved(key);
  }
  queue_.Add(key);
}

JobController::State JobController::Collect(const Json& job, const std::string& key) const {
  State s;
  s.key = key;
  s.job = job;
  s.old_status = Member(job, "status");
  if (!s.job["status"].is_object()) s.job["status"] = Json::object();
  s.now = Seconds(options_.clock->Now());
  const Json& spec = Member(job, "spec");
  s.indexed = StringAt(spec, "completionMode") == "Indexed";
  s.completions = IntAt(spec, "completions", -1);
  const std::string ns = NamespaceOf(job), uid = UidOf(job);
  s.all = pods_->List();
  int64_t failed = 0, succeeded = 0;
  const Json& status = Member(job, "status");
  if (s.indexed)
    s.succeeded_indexes = ParseIndexes(StringAt(status, "completedIndexes"),
                                       static_cast<int>(std::max<int64_t>(s.completions, 0)));
  for (const Object& o : s.all) {
    const Json& pod = DocOf(o);
    if (NamespaceOf(pod) != ns) continue;
    const Json* ref = ControllerRefOf(pod);
    if (!ref || StringAt(*ref, "uid") != uid) continue;
    s.pods.push_back(&pod);
    const std::string phase = Phase(pod);
    if (phase == "Succeeded") {
      ++succeeded;
      const int ix = CompletionIndexOf(pod);
      if (s.indexed && ix >= 0 && ix < s.completions) s.succeeded_indexes.insert(ix);
    } else if (phase == "Failed") {
      ++failed;
    } else if (HasDeletionTimestamp(pod)) {
      ++s.terminating;
    } else {
      s.active.push_back(&pod);
      if (IsPodReady(pod)) ++s.ready;
    }
  }
  s.active_count = static_cast<int64_t>(s.active.size());
  // Counts never go down: a finished pod deleted by hand stays counted.
  s.succeeded = s.indexed ? static_cast<int64_t>(s.succeeded_indexes.size())
                          : std::max(IntAt(status, "succeeded"), succeeded);
  s.failed = std::max(IntAt(status, "failed"), failed);
  return s;
}

void JobController::DecideFailure(State& s) {
  const Json& job = s.job;
  const Json& spec = Member(job, "spec");
  if (JobConditionTrue(job, "SuccessCriteriaMet")) {
    s.finished = *FindJobCondition(job, "SuccessCriteriaMet");
    return;
  }
  if (JobConditionTrue(job, "FailureTarget")) {
    s.finished = *FindJobCondition(job, "FailureTarget");
    return;
  }
  const bool suspended = Member(spec, "suspend").is_boolean() && spec["suspend"].get<bool>();
  if (s.failed > IntAt(spec, "backoffLimit", 6) || PastBackoffLimitOnFailure(job, s.pods)) {
    s.finished = NewJobCondition("FailureTarget", "True", "BackoffLimitExceeded",
                                 "Job has reached the specified backoff limit", s.now);
    return;
  }
  const Json& deadline = Member(spec, "activeDeadlineSeconds");
  auto start = ParseTimestamp(StringAt(Member(job, "status"), "startTime"));
  if (!deadline.is_number_integer() || suspended || !start.ok() || *start == 0) return;
  const Duration allowed = std::chrono::seconds(deadline.get<int64_t>());
  const Duration ran = options_.clock->Now() - TimePoint(std::chrono::seconds(*start));
  if (ran >= allowed) {
    s.finished = NewJobCondition("FailureTarget", "True", "DeadlineExceeded",
                                 "Job was active longer than specified deadline", s.now);
  } else {
    queue_.AddAfter(s.key, allowed - ran);
  }
}

int JobController::DeletePods(const State& s, const std::vector<const Json*>& victims, bool expect,
                              Error* first_error) {
  std::vector<std::string> keys;
  std::vector<client::RestClient::EncodedWrite> writes;
  for (const Json* p : victims) {
    keys.push_back(KeyOf(*p));
    writes.push_back({PodPath(NamespaceOf(*p), NameOf(*p)), ""});
  }
  if (expect) expectations_.ExpectDeletions(s.key, keys);
  auto results = rest_->SendEncodedPipelined("DELETE", writes);
  int deleted = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].ok() || OutcomeUnknown(results[i].error())) {
      ++deleted;
      continue;
    }
    if (expect) expectations_.DeletionObserved(s.key, keys[i]);
    if (results[i].error().code == ErrorCode::kNotFound) {
      ++deleted;
    } else if (first_error->message.empty()) {
      *first_error = results[i].error();
    }
  }
  return deleted;
}

int JobController::CreatePods(State& s, int count, std::vector<int> indexes, Error* first_error) {
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods", NamespaceOf(s.job));
  expectations_.ExpectCreations(s.key, count);
  int created = 0, attempted = 0;
  for (int batch = std::min(count, 1); batch > 0; batch = std::min(2 * batch, count - attempted)) {
    std::vector<client::RestClient::EncodedWrite> writes;
    for (int i = 0; i < batch; ++i) {
      const int index = s.indexed ? indexes[static_cast<size_t>(attempted + i)] : -1;
      writes.push_back({path, JobPodFromTemplate(s.job, index).dump()});
    }
    auto results = rest_->SendEncodedPipelined("POST", writes);
    attempted += batch;
    int failed = 0;
    for (const auto& r : results) {
      if (r.ok() || OutcomeUnknown(r.error())) {
        ++created;
        continue;
      }
      ++failed;
      expectations_.CreationObserved(s.key);
      // A namespace being deleted refuses every pod: nothing to retry.
      if (first_error->message.empty() && !IsNamespaceTerminating(r.error()))
        *first_error = r.error();
    }
    if (failed > 0) break;  // slow start: the rest waits for a later sync
  }
  for (int i = attempted; i < count; ++i) expectations_.CreationObserved(s.key);
  return created;
}

// Indexed Jobs first lose pods with an index out of range or repeated; then the pods least far
// along (unscheduled, pending, not ready), as upstream's activePodsForRemoval.
std::vector<const Json*> ActivePodsForRemoval(bool indexed, int64_t completions,
                                              std::vector<const Json*> active, size_t at_least,
                                              TimePoint now) {
  std::vector<const Json*> rm, left;
  if (indexed) {
    std::sort(active.begin(), active.end(), [](const Json* a, const Json* b) {
      return CompletionIndexOf(*a) < CompletionIndexOf(*b);
    });
    std::set<int> seen;
    for (const Json* p : active) {
      const int ix = CompletionIndexOf(*p);
      if (ix < 0 || ix >= completions || !seen.insert(ix).second) {
        rm.push_back(p);
      } else {
        left.push_back(p);
      }
    }
  } else {
    left = std::move(active);
  }
  if (rm.size() < at_least) {
    auto more = PodsToDelete(left, {}, at_least - rm.size(), now);
    rm.insert(rm.end(), more.begin(), more.end());
  }
  return rm;
}

VoidResult JobController::ManageJob(State& s) {
  const Json& spec = Member(s.job, "spec");
  const bool suspended = Member(spec, "suspend").is_boolean() && spec["suspend"].get<bool>();
  const int64_t parallelism = IntAt(spec, "parallelism", 1);
  Error error;
  if (suspended) {
    auto victims = ActivePodsForRemoval(s.indexed, s.completions, s.active, s.active.size(),
                                        options_.clock->Now());
    const int deleted = DeletePods(s, victims, true, &error);
    s.active_count -= deleted;
    s.terminating += deleted;
    s.ready = 0;
    if (!error.message.empty()) return error;
    return {};
  }
  int64_t want;
  if (s.completions < 0) {
    want = s.succeeded > 0 ? s.active_count : parallelism;
  } else {
    want = std::max<int64_t>(0, std::min(s.completions - s.succeeded, parallelism));
  }
  const int64_t surplus = s.active_count - want;
  auto victims = ActivePodsForRemoval(s.indexed, s.completions, s.active,
                                      static_cast<size_t>(std::max<int64_t>(surplus, 0)),
                                      options_.clock->Now());
  if (victims.size() > kMaxPodCreateDeletePerSync) victims.resize(kMaxPodCreateDeletePerSync);
  if (!victims.empty()) {
    const int deleted = DeletePods(s, victims, true, &error);
    s.active_count -= deleted;
    s.terminating += deleted;
    if (!error.message.empty()) return error;
    return {};
  }
  // podReplacementPolicy Failed waits for terminating pods to be gone.
  const int64_t terminating =
      StringAt(spec, "podReplacementPolicy") == "Failed" ? s.terminating : 0;
  int64_t diff = want - terminating - s.active_count;
  if (diff <= 0) return {};
  const Duration wait = BackoffRemaining(s.pods, options_.clock->Now());
  if (wait > Duration::zero()) {
    queue_.AddAfter(s.key, wait);
    return {};
  }
  diff = std::min<int64_t>(diff, kMaxPodCreateDeletePerSync);
  std::vector<int> indexes;
  if (s.indexed) {
    std::set<int> active_indexes;
    for (const Json* p : s.active) active_indexes.insert(CompletionIndexOf(*p));
    indexes = FirstPendingIndexes(s.succeeded_indexes, active_indexes, static_cast<int>(diff),
                                  static_cast<int>(s.completions));
    diff = static_cast<int64_t>(indexes.size());
  }
  s.active_count += CreatePods(s, static_cast<int>(diff), std::move(indexes), &error);
  if (!error.message.empty()) return error;
  return {};
}

// The Suspended condition, as upstream's ensureJobConditionStatus; resuming restarts the
// activeDeadlineSeconds clock.
void JobController::UpdateSuspended(State& s) const {
  const Json& spec = Member(s.job, "spec");
  const bool suspended = Member(spec, "suspend").is_boolean() && spec["suspend"].get<bool>();
  Json& status = s.job["status"];
  if (!status["conditions"].is_array()) status["conditions"] = Json::array();
  Json& conditions = status["conditions"];
  const char* want_status = suspended ? "True" : "False";
  const char* reason = suspended ? "JobSuspended" : "JobResumed";
  const char* message = suspended ? "Job suspended" : "Job resumed";
  for (Json& c : conditions) {
    if (StringAt(c, "type") != "Suspended") continue;
    if (StringAt(c, "status") == want_status) return;
    c = NewJobCondition("Suspended", want_status, reason, message, s.now);
    s.suspend_changed = true;
    if (!suspended) status["startTime"] = FormatTimestamp(s.now);
    return;
  }
  if (!suspended) return;
  conditions.push_back(NewJobCondition("Suspended", "True", reason, message, s.now));
  s.suspend_changed = true;
}

VoidResult JobController::Sync(const std::string& key) {
  auto obj = jobs_->Get(key);
  if (!obj) {
    expectations_.Delete(key);
    return {};
  }
  auto holder =
      std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, *obj);
  if (!holder || IsJobFinished(*holder)) return {};
  const bool satisfied = expectations_.Satisfied(key);
  State s = Collect(*holder, key);
  const Json& spec = Member(s.job, "spec");
  const bool suspended = Member(spec, "suspend").is_boolean() && spec["suspend"].get<bool>();
  Json& status = s.job["status"];
  if (!status.contains("startTime") && !suspended) status["startTime"] = FormatTimestamp(s.now);
  DecideFailure(s);
  std::optional<Error> manage_error;
  if (s.finished && StringAt(*s.finished, "type") == "FailureTarget") {
    // Every pod still running goes, and counts as failed.
    Error error;
    const int deleted = DeletePods(s, s.active, false, &error);
    if (deleted != static_cast<int>(s.active.size()) || !satisfied) s.finished.reset();
    s.active_count -= deleted;
    s.terminating += deleted;
    s.failed += deleted;
    s.ready = 0;
    if (!error.message.empty()) manage_error = error;
  } else if (!s.finished) {
    const bool manage = satisfied && !HasDeletionTimestamp(s.job);
    if (manage) {
      if (auto r = ManageJob(s); !r.ok()) manage_error = r.error();
    }
    const bool complete = s.completions < 0 ? s.succeeded > 0 && s.active_count == 0
                                            : s.succeeded >= s.completions && s.active_count == 0;
    if (complete) {
      s.finished = NewJobCondition("SuccessCriteriaMet", "True", "CompletionsReached",
                                   "Reached expected number of succeeded pods", s.now);
    } else if (manage) {
      UpdateSuspended(s);
    }
  }
  if (auto w = WriteStatus(s); !w.ok()) return w.error();
  if (manage_error) return *manage_error;
  return {};
}

VoidResult JobController::WriteStatus(State& s) {
  const Json& old_status = s.old_status;
  Json& status = s.job["status"];
  if (!status["conditions"].is_array()) status["conditions"] = Json::array();
  Json& conditions = status["conditions"];
  if (s.finished && !FindJobCondition(s.job, StringAt(*s.finished, "type"))) {
    conditions.push_back(*s.finished);
  }
  // The terminal condition once no pod is terminating (upstream's enactJobFinished).
  if (s.finished && s.terminating == 0) {
    const bool success = StringAt(*s.finished, "type") == "SuccessCriteriaMet";
    conditions.push_back(NewJobCondition(success ? "Complete" : "Failed", "True",
                                         StringAt(*s.finished, "reason"),
                                         StringAt(*s.finished, "message"), s.now));
    if (success) status["completionTime"] = FormatTimestamp(s.now);
  }
  if (conditions.empty()) status.erase("conditions");
  status["active"] = s.active_count;
  status["ready"] = s.ready;
  status["succeeded"] = s.succeeded;
  status["failed"] = s.failed;
  status["terminating"] = s.terminating;
  if (s.indexed) status["completedIndexes"] = FormatIndexes(s.succeeded_indexes);
  // The API server leaves zero counts and empty strings out: compare as it stores them.
  auto same = [&](const Json& a, const Json& b) {
    for (const char* f : {"active", "ready", "succeeded", "failed", "terminating"}) {
      if (IntAt(a, f) != IntAt(b, f)) return false;
    }
    for (const char* f : {"startTime", "completionTime", "completedIndexes"}) {
      if (StringAt(a, f) != StringAt(b, f)) return false;
    }
    const Json& ca = Member(a, "conditions");
    const Json& cb = Member(b, "conditions");
    return (ca.is_null() || ca.empty()) ? (cb.is_null() || cb.empty()) : ca == cb;
  };
  if (same(status, old_status)) return {};
  const std::string path = JobPath(NamespaceOf(s.job), NameOf(s.job)) + "/status";
  auto put = rest_->Put(path, s.job);
  if (put.ok() || put.error().code != ErrorCode::kConflict) {
    if (put.ok()) return {};
    return put.error();
  }
  // A stale copy: once more on the server's current one, as the ReplicaSet controller.
  auto fresh = rest_->Get(JobPath(NamespaceOf(s.job), NameOf(s.job)));
  if (!fresh.ok()) return fresh.error();
  if (UidOf(*fresh) != UidOf(s.job) || IsJobFinished(*fresh)) return {};
  (*fresh)["status"] = status;
  if (auto again = rest_->Put(path, *fresh); !again.ok()) return again.error();
  return {};
}

}  // namespace berth::controllers
