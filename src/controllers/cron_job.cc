#include "controllers/cron_job.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "controllers/job_util.h"
#include "controllers/object_util.h"

namespace berth::controllers {

namespace {

constexpr Duration kNextScheduleDelta = std::chrono::milliseconds(100);

int64_t Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string JobsPath(const std::string& ns) {
  return fmt::format("/apis/batch/v1/namespaces/{}/jobs", ns);
}

std::string CronJobPath(const std::string& ns, const std::string& name) {
  return fmt::format("/apis/batch/v1/namespaces/{}/cronjobs/{}", ns, name);
}

// RFC 3339 in `zone` ("Z" for a zero offset), as Go's time.RFC3339.
std::string Rfc3339In(int64_t t, const TimeZone& zone) {
  const int64_t off = zone.OffsetAt(t);
  std::string text = FormatTimestamp(t + off);
  if (off == 0) return text;
  text.pop_back();  // the "Z"
  const int64_t a = off < 0 ? -off : off;
  return text + fmt::format("{}{:02}:{:02}", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
}

// The schedule as upstream's formatSchedule gives it to the parser: spec.timeZone becomes a
// TZ= prefix unless the schedule names a zone itself.
std::string FormatSchedule(const Json& cronjob) {
  const Json& spec = Member(cronjob, "spec");
  const std::string schedule = StringAt(spec, "schedule");
  if (schedule.find("TZ") != std::string::npos) return schedule;
  const Json& tz = Member(spec, "timeZone");
  if (!tz.is_string()) return schedule;
  return fmt::format("TZ={} {}", tz.get<std::string>(), schedule);
}

bool JobSucceeded(const Json& job) { return JobConditionTrue(job, "Complete"); }

}  // namespace

ScheduleCheck MostRecentScheduleTime(const Json& cronjob, TimePoint now_tp,
                                     const CronSchedule& schedule, bool with_starting_deadline) {
  ScheduleCheck c;
  const int64_t now = Seconds(now_tp);
  c.earliest = CreatedAt(cronjob);
  const Json& status = Member(cronjob, "status");
  if (auto last = ParseTimestamp(StringAt(status, "lastScheduleTime")); last.ok() && *last != 0)
    c.earliest = *last;
  const Json& deadline = Member(Member(cronjob, "spec"), "startingDeadlineSeconds");
  if (with_starting_deadline && deadline.is_number_integer()) {
    c.earliest = std::max(c.earliest, now - deadline.get<int64_t>());
  }
  auto t1 = schedule.Next(c.earliest);
  if (!t1 || now < *t1) return c;
  auto t2 = schedule.Next(*t1);
  if (!t2 || now < *t2) {
    c.most_recent = t1;
    return c;
  }
  const int64_t between = *t2 - *t1;
  if (between < 1) {
    c.error =
        Error{"time difference between two schedules is less than 1 second", ErrorCode::kInvalid};
    return c;
  }
  // Jump close to now rather than walking every missed time (upstream's approximation).
  const int64_t missed = (now - *t1) / between + 1;
  std::optional<int64_t> t = schedule.Next(*t1 + (missed - 2) * between);
  for (; t && *t <= now; t = schedule.Next(*t)) c.most_recent = t;
  c.missed = true;
  c.many_missed = missed > 100;
  return c;
}

Duration NextScheduleDelay(const Json& cronjob, TimePoint now, const CronSchedule& schedule) {
  ScheduleCheck c = MostRecentScheduleTime(cronjob, now, schedule, false);
  int64_t from;
  if (c.error) {
    from = Seconds(now);
  } else if (c.most_recent) {
    from = *c.most_recent;
  } else {
    from = c.missed ? Seconds(now) : c.earliest;
  }
  auto next = schedule.Next(from);
  if (!next) return std::chrono::hours(24 * 365);  // a time that never comes: look again later
  return TimePoint(std::chrono::seconds(*next)) + kNextScheduleDelta - now;
}

std::string CronJobJobName(const Json& cronjob, int64_t scheduled) {
  return fmt::format("{}-{}", NameOf(cronjob), scheduled / 60);
}

Json JobFromCronJob(const Json& cronjob, int64_t scheduled, const TimeZone& annotation_zone) {
  const Json& tmpl = Member(Member(cronjob, "spec"), "jobTemplate");
  const Json& tmeta = Member(tmpl, "metadata");
  Json meta = {
      {"name", CronJobJobName(cronjob, scheduled)},
      {"namespace", NamespaceOf(cronjob)},
      {"labels", Member(tmeta, "labels").is_object() ? tmeta["labels"] : Json::object()},
      {"annotations",
       Member(tmeta, "annotations").is_object() ? tmeta["annotations"] : Json::object()},
      {"ownerReferences", Json::array({NewControllerRef("batch/v1", "CronJob", cronjob)})}};
  meta["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] =
      Rfc3339In(scheduled, annotation_zone);
  Json spec = Member(tmpl, "spec");
  if (!spec.is_object()) spec = Json::object();
  return Json{{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", std::move(meta)},
              {"spec", std::move(spec)}};
}

// What one sync reads and changes.
struct CronJobController::State {
  std::string key;
  Json cronjob;  // with the status being built
  std::vector<Object> all;
  std::vector<const Json*> jobs;  // controlled by this CronJob
  bool update = false;
  std::optional<Duration> requeue;
};

CronJobController::CronJobController(client::RestClient* rest, SharedInformer* jobs,
                                     SharedInformer* cronjobs, ControllerOptions options)
    : rest_(rest),
      jobs_(jobs),
      cronjobs_(cronjobs),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  cronjobs_->AddHandlers(EnqueueOnEvents(&queue_));
  client::InformerHandlers h;
  h.on_add = [this](const Object& o) { OnJobEvent(o); };
  h.on_update = [this](const Object& old_obj, const Object& o) {
    OnJobEvent(old_obj);
    OnJobEvent(o);
  };
  h.on_delete = [this](const Object& o) { OnJobEvent(o); };
  jobs_->AddHandlers(std::move(h));
}

CronJobController::~CronJobController() { Stop(); }

void CronJobController::Start() { workers_.Start(options_.workers); }

void CronJobController::Stop() { workers_.Stop(); }

void CronJobController::OnJobEvent(const Object& obj) {
  const Json& job = DocOf(obj);
  const Json* ref = ControllerRefOf(job);
  if (!ref || StringAt(*ref, "kind") != "CronJob") return;
  const std::string key = NamespaceOf(job) + "/" + StringAt(*ref, "name");
  auto cj = cronjobs_->Get(key);
  if (cj && UidOf(DocOf(*cj)) == StringAt(*ref, "uid")) queue_.Add(key);
}

bool CronJobController::DeleteJob(State& s, const std::string& name, const std::string& uid) {
  const Json options = {
      {"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"propagationPolicy", "Background"}};
  auto r = rest_->Delete(JobsPath(NamespaceOf(s.cronjob)) + "/" + name, options);
  if (!r.ok() && r.error().code != ErrorCode::kNotFound) {
    if (options_.log)
      options_.log(fmt::format("cronjob {}: deleting job {}: {}", s.key, name, r.error().message));
    return false;
  }
  Json& active = s.cronjob["status"]["active"];
  if (active.is_array()) {
    Json kept = Json::array();
    for (const Json& a : active)
      if (StringAt(a, "uid") != uid) kept.push_back(a);
    active = std::move(kept);
  }
  s.update = true;
  return true;
}

// Brings status.active and lastSuccessfulTime up to date with the Jobs (upstream's first half
// of syncCronJob).
VoidResult CronJobController::Reconcile(State& s) {
  Json& status = s.cronjob["status"];
  if (!status["active"].is_array()) status["active"] = Json::array();
  Json& active = status["active"];
  auto in_active = [&](const std::string& uid) {
    return std::any_of(active.begin(), active.end(),
                       [&](const Json& a) { return StringAt(a, "uid") == uid; });
  };
  std::set<std::string> children;
  for (const Json* j : s.jobs) {
    const std::string uid = UidOf(*j);
    children.insert(uid);
    if (in_active(uid) && IsJobFinished(*j)) {
      Json kept = Json::array();
      for (const Json& a : active)
        if (StringAt(a, "uid") != uid) kept.push_back(a);
      active = std::move(kept);
      s.update = true;
    }
    if (JobSucceeded(*j)) {
      const std::string done = StringAt(Member(*j, "status"), "completionTime");
      auto at = ParseTimestamp(done);
      auto last = ParseTimestamp(StringAt(status, "lastSuccessfulTime"));
      if (at.ok() && *at != 0 && (!last.ok() || *at > *last)) {
        status["lastSuccessfulTime"] = done;
        s.update = true;
      }
    }
  }
  // A Job in the list that the cache does not show: gone for good only if the server says so.
  Json kept = Json::array();
  for (const Json& a : active) {
    if (children.count(StringAt(a, "uid"))) {
      kept.push_back(a);
      continue;
    }
    auto r = rest_->Get(JobsPath(StringAt(a, "namespace")) + "/" + StringAt(a, "name"));
    if (r.ok()) {
      kept.push_back(a);
    } else if (r.error().code == ErrorCode::kNotFound) {
      s.update = true;
    } else {
      return r.error();
    }
  }
  active = std::move(kept);
  return {};
}

// Runs the most recent scheduled time, if one is due (the second half of syncCronJob).
VoidResult CronJobController::Schedule(State& s) {
  const Json& cj = s.cronjob;
  const Json& spec = Member(cj, "spec");
  if (HasDeletionTimestamp(cj)) return {};
  const Json& tz = Member(spec, "timeZone");
  TimeZone annotation_zone;
  if (tz.is_string()) {
    auto zone = TimeZone::Load(tz.get<std::string>());
    if (!zone.ok()) {
      if (options_.log)
        options_.log(fmt::format("cronjob {}: invalid timeZone: {}", s.key, zone.error().message));
      return {};
    }
    annotation_zone = *zone;
  }
  if (Member(spec, "suspend").is_boolean() && spec["suspend"].get<bool>()) return {};
  auto local = TimeZone::Load("");
  auto sched = CronSchedule::Parse(FormatSchedule(cj), local.ok() ? *local : TimeZone());
  if (!sched.ok()) {
    // Not retried: the spec must change first.
    if (options_.log)
      options_.log(fmt::format("cronjob {}: unparseable schedule {:?}: {}", s.key,
                               StringAt(spec, "schedule"), sched.error().message));
    return {};
  }
  const TimePoint now = options_.clock->Now();
  ScheduleCheck check = MostRecentScheduleTime(cj, now, *sched, true);
  if (check.error) {
    if (options_.log)
      options_.log(fmt::format("cronjob {}: invalid schedule: {}", s.key, check.error->message));
    return {};
  }
  s.requeue = NextScheduleDelay(cj, now, *sched);
  if (!check.most_recent) return {};
  const int64_t scheduled = *check.most_recent;
  const Json& deadline = Member(spec, "startingDeadlineSeconds");
  if (deadline.is_number_integer() && scheduled + deadline.get<int64_t>() < Seconds(now)) {
    return {};  // missed its starting window
  }
  const std::string name = CronJobJobName(cj, scheduled);
  Json& status = s.cronjob["status"];
  Json& active = status["active"];
  auto last = ParseTimestamp(StringAt(status, "lastScheduleTime"));
  const bool named_active = std::any_of(active.begin(), active.end(),
                                        [&](const Json& a) { return StringAt(a, "name") == name; });
  if (named_active || (last.ok() && *last == scheduled)) return {};
  const std::string policy = StringAt(spec, "concurrencyPolicy");
  if (policy == "Forbid" && !active.empty()) return {};
  if (policy == "Replace") {
    const Json running = active;
    for (const Json& a : running) {
      if (!DeleteJob(s, StringAt(a, "name"), StringAt(a, "uid"))) {
        return Error{fmt::format("could not replace job {}", StringAt(a, "name")),
                     ErrorCode::kUnavailable};
      }
    }
  }
  auto created =
      rest_->Post(JobsPath(NamespaceOf(cj)), JobFromCronJob(cj, scheduled, annotation_zone));
  Json job;
  if (created.ok()) {
    job = std::move(created).value();
  } else if (created.error().code == ErrorCode::kAlreadyExists) {
    // Created before a restart, or by someone else: listed here only if it is ours.
    auto existing = rest_->Get(JobsPath(NamespaceOf(cj)) + "/" + name);
    if (!existing.ok()) return existing.error();
    const Json* ref = ControllerRefOf(*existing);
    if (!ref || StringAt(*ref, "uid") != UidOf(cj)) return {};
    const std::string uid = UidOf(*existing);
    if (std::any_of(active.begin(), active.end(),
                    [&](const Json& a) { return StringAt(a, "uid") == uid; }))
      return {};
    job = std::move(existing).value();
  } else if (IsNamespaceTerminating(created.error())) {
    // Every later create would be refused as well: nothing to retry or report.
    return {};
  } else {
    return created.error();
  }
  active.push_back({{"kind", "Job"},
                    {"namespace", NamespaceOf(job)},
                    {"name", NameOf(job)},
                    {"uid", UidOf(job)},
                    {"apiVersion", "batch/v1"},
                    {"resourceVersion", StringAt(Member(job, "metadata"), "resourceVersion")}});
  status["lastScheduleTime"] = FormatTimestamp(scheduled);
  s.update = true;
  s.requeue = NextScheduleDelay(s.cronjob, now, *sched);
  return {};
}

// Deletes the oldest finished Jobs beyond the history limits.
void CronJobController::CleanupFinishedJobs(State& s) {
  const Json& spec = Member(s.cronjob, "spec");
  std::map<std::string, std::vector<const Json*>> finished;
  for (const Json* j : s.jobs) {
    if (JobConditionTrue(*j, "Complete"))
      finished["successfulJobsHistoryLimit"].push_back(j);
    else if (JobConditionTrue(*j, "Failed"))
      finished["failedJobsHistoryLimit"].push_back(j);
  }
  for (auto& [limit_field, jobs] : finished) {
    const Json& limit = Member(spec, limit_field);
    if (!limit.is_number_integer()) continue;
    const int64_t surplus = static_cast<int64_t>(jobs.size()) - limit.get<int64_t>();
    if (surplus <= 0) continue;
    // Oldest start first; never-started last; ties by name (upstream's byJobStartTime).
    std::sort(jobs.begin(), jobs.end(), [](const Json* a, const Json* b) {
      const std::string sa = StringAt(Member(*a, "status"), "startTime");
      const std::string sb = StringAt(Member(*b, "status"), "startTime");
      if (sa.empty() != sb.empty()) return sb.empty();
      if (sa != sb) return sa < sb;
      return NameOf(*a) < NameOf(*b);
    });
    for (int64_t i = 0; i < surplus; ++i) DeleteJob(s, NameOf(*jobs[i]), UidOf(*jobs[i]));
  }
}

VoidResult CronJobController::Sync(const std::string& key) {
  auto obj = cronjobs_->Get(key);
  if (!obj) return {};
  State s;
  s.key = key;
  s.cronjob = DocOf(*obj);
  if (!s.cronjob["status"].is_object()) s.cronjob["status"] = Json::object();
  const std::string ns = NamespaceOf(s.cronjob), uid = UidOf(s.cronjob);
  s.all = jobs_->List();
  for (const Object& o : s.all) {
    const Json& j = DocOf(o);
    const Json* ref = ControllerRefOf(j);
    if (NamespaceOf(j) == ns && ref && StringAt(*ref, "uid") == uid) s.jobs.push_back(&j);
  }
  if (auto r = Reconcile(s); !r.ok()) return r;
  VoidResult scheduled = Schedule(s);
  CleanupFinishedJobs(s);
  if (s.update) {
    Json& status = s.cronjob["status"];
    if (status["active"].empty()) status.erase("active");
    auto put = rest_->Put(CronJobPath(ns, NameOf(s.cronjob)) + "/status", s.cronjob);
    if (!put.ok()) return put.error();
  }
  if (!scheduled.ok()) return scheduled;
  if (s.requeue) queue_.AddAfter(key, *s.requeue);
  return {};
}

}  // namespace berth::controllers
