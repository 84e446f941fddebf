// The CronJob controller: its schedule arithmetic alone, then against the embedded API server
// with a FakeClock set from the CronJob's creation time.
#include "controllers/cron_job.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <thread>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server.h"
#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"
#include "controllers/job_util.h"

namespace berth::controllers {
namespace {

constexpr int64_t kT0 = 1'800'000'000;  // a whole minute: 1800000000 / 60 = 30000000

Json CronJobDoc(const std::string& schedule, int64_t created) {
  return Json{{"apiVersion", "batch/v1"},
              {"kind", "CronJob"},
              {"metadata",
               {{"name", "tick"},
                {"namespace", "default"},
                {"uid", "cj-uid"},
                {"creationTimestamp", FormatTimestamp(created)}}},
              {"spec",
               {{"schedule", schedule},
                {"jobTemplate",
                 {{"metadata", {{"labels", {{"team", "a"}}}}},
                  {"spec", {{"template", {{"spec", {{"restartPolicy", "Never"}}}}}}}}}}}};
}

TimePoint At(int64_t s) { return TimePoint(std::chrono::seconds(s)); }

TEST(CronJobScheduleTest, MostRecentTimeAndMissedTimes) {
  auto every_minute = CronSchedule::Parse("* * * * *");
  ASSERT_TRUE(every_minute.ok());
  Json cj = CronJobDoc("* * * * *", kT0 + 10);
  EXPECT_FALSE(MostRecentScheduleTime(cj, At(kT0 + 59), *every_minute, true).most_recent);
  auto one = MostRecentScheduleTime(cj, At(kT0 + 65), *every_minute, true);
  EXPECT_EQ(one.most_recent, kT0 + 60);
  EXPECT_FALSE(one.missed);
  // An hour later only the latest time runs.
  auto late = MostRecentScheduleTime(cj, At(kT0 + 3600 + 30), *every_minute, true);
  EXPECT_EQ(late.most_recent, kT0 + 3600);
  EXPECT_TRUE(late.missed);
  EXPECT_FALSE(late.many_missed);
  EXPECT_TRUE(MostRecentScheduleTime(cj, At(kT0 + 200 * 60), *every_minute, true).many_missed);
  // The last schedule time counts from there; the next sync is 100 ms after the next time.
  cj["status"]["lastScheduleTime"] = FormatTimestamp(kT0 + 60);
  EXPECT_FALSE(MostRecentScheduleTime(cj, At(kT0 + 90), *every_minute, true).most_recent);
  EXPECT_EQ(NextScheduleDelay(cj, At(kT0 + 90), *every_minute),
            std::chrono::seconds(30) + std::chrono::milliseconds(100));
  // startingDeadlineSeconds: nothing older than the deadline is considered.
  auto hourly = CronSchedule::Parse("@hourly");
  Json h = CronJobDoc("@hourly", kT0 - 7200);
  h["spec"]["startingDeadlineSeconds"] = 60;
  EXPECT_FALSE(MostRecentScheduleTime(h, At(kT0 + 120), *hourly, true).most_recent);
  EXPECT_EQ(MostRecentScheduleTime(h, At(kT0 + 120), *hourly, false).most_recent, kT0);
  EXPECT_EQ(MostRecentScheduleTime(h, At(kT0 + 30), *hourly, true).most_recent, kT0);
}

TEST(CronJobScheduleTest, JobsAreNamedByTheirMinuteAndCarryTheTemplate) {
  Json cj = CronJobDoc("* * * * *", kT0);
  EXPECT_EQ(CronJobJobName(cj, kT0 + 60), "tick-30000001");
  Json job = JobFromCronJob(cj, kT0, TimeZone());
  EXPECT_EQ(job["metadata"]["name"], "tick-30000000");
  EXPECT_EQ(job["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            "2027-01-15T08:00:00Z");
  EXPECT_EQ(job["spec"]["template"]["spec"]["restartPolicy"], "Never");
  const Json* ref = ControllerRefOf(job);
  ASSERT_NE(ref, nullptr);
  EXPECT_EQ(StringAt(*ref, "kind"), "CronJob");
  EXPECT_EQ(StringAt(*ref, "uid"), "cj-uid");
  auto tokyo = TimeZone::Load("Asia/Tokyo");
  if (tokyo.ok()) {
    EXPECT_EQ(
        JobFromCronJob(
            cj, kT0,
            *tokyo)["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
        "2027-01-15T17:00:00+09:00");
  }
}

class CronJobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-cronjob-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    jobs_ = std::make_unique<SharedInformer>(rest_, "/apis/batch/v1/jobs", "Job", nullptr);
    cronjobs_ =
        std::make_unique<SharedInformer>(rest_, "/apis/batch/v1/cronjobs", "CronJob", nullptr);
    controller_ = std::make_unique<CronJobController>(rest_, jobs_.get(), cronjobs_.get(),
                                                      ControllerOptions{&clock_, 1, nullptr});
    jobs_->Start();
    cronjobs_->Start();
    WaitFor([&] { return jobs_->HasSynced() && cronjobs_->HasSynced(); });
  }
  void TearDown() override {
    jobs_->Stop();
    cronjobs_->Stop();
    controller_.reset();
    api_.Stop();
  }
  // Creates the CronJob and sets the clock to its creation time, whole minute `+ offset`.
  void Create(const std::string& policy, int history = 3) {
    Json cj = CronJobDoc("* * * * *", 0);
    cj["metadata"].erase("uid");
    cj["metadata"].erase("creationTimestamp");
    cj["spec"]["concurrencyPolicy"] = policy;
    cj["spec"]["successfulJobsHistoryLimit"] = history;
    auto r = rest_->Post("/apis/batch/v1/namespaces/default/cronjobs", cj);
    ASSERT_TRUE(r.ok()) << r.error().message;
    created_ = CreatedAt(*r);
    clock_.Set(At(created_ - created_ % 60));
  }
  Json Stored() {
    auto r = rest_->Get("/apis/batch/v1/namespaces/default/cronjobs/tick");
    return r.ok() ? *r : Json();
  }
  void SyncAt(int64_t minute_offset) {
    clock_.Set(At(created_ - created_ % 60 + minute_offset * 60 + 1));
    const std::string rv = StringAt(Stored()["metadata"], "resourceVersion");
    const size_t jobs = JobNames().size();
    WaitFor([&] {
      auto c = cronjobs_->Get("default/tick");
      return c && StringAt(Member(DocOf(*c), "metadata"), "resourceVersion") == rv &&
             jobs_->List().size() == jobs;
    });
    auto r = controller_->Sync("default/tick");
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  std::set<std::string> JobNames() {
    auto r = rest_->Get("/apis/batch/v1/namespaces/default/jobs");
    std::set<std::string> out;
    if (r.ok())
      for (const Json& j : (*r)["items"]) out.insert(NameOf(j));
    return out;
  }
  std::string JobAt(int64_t minute_offset) {
    return fmt::format("tick-{}", (created_ - created_ % 60) / 60 + minute_offset);
  }
  void Complete(const std::string& name) {
    auto job = rest_->Get("/apis/batch/v1/namespaces/default/jobs/" + name);
    ASSERT_TRUE(job.ok());
    const std::string now = FormatTimestamp(
        std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch()).count());
    (*job)["status"] = {{"startTime", now},
                        {"completionTime", now},
                        {"succeeded", 1},
                        {"conditions", {NewJobCondition("Complete", "True", "", "", 0)}}};
    (*job)["status"]["conditions"][0]["lastTransitionTime"] = now;
    ASSERT_TRUE(
        rest_->Put("/apis/batch/v1/namespaces/default/jobs/" + name + "/status", *job).ok());
    WaitFor([&] {
      auto j = jobs_->Get("default/" + name);
      return j && IsJobFinished(DocOf(*j));
    });
  }
  std::vector<std::string> Active() {
    std::vector<std::string> out;
    const Json cronjob = Stored();
    for (const Json& a : Member(cronjob["status"], "active")) out.push_back(a["name"]);
    return out;
  }

  TestApiServer api_;
  FakeClock clock_;
  int64_t created_ = 0;
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> jobs_, cronjobs_;
  std::unique_ptr<CronJobController> controller_;
};

TEST_F(CronJobControllerTest, RunsEachMinuteOnceAndForbidsOverlap) {
  Create("Forbid");
  SyncAt(0);
  EXPECT_TRUE(JobNames().empty());  // the creation minute itself has passed
  SyncAt(1);
  EXPECT_EQ(JobNames(), std::set<std::string>{JobAt(1)});
  EXPECT_EQ(Active(), std::vector<std::string>{JobAt(1)});
  Json status = Stored()["status"];
  EXPECT_EQ(StringAt(status, "lastScheduleTime"), FormatTimestamp(created_ - created_ % 60 + 60));
  SyncAt(1);  // the same minute again: nothing new
  EXPECT_EQ(JobNames().size(), 1u);
  SyncAt(2);  // Forbid: the running Job blocks the next run
  EXPECT_EQ(JobNames().size(), 1u);
  Complete(JobAt(1));
  SyncAt(3);
  EXPECT_EQ(JobNames(), (std::set<std::string>{JobAt(1), JobAt(3)}));
  EXPECT_EQ(Active(), std::vector<std::string>{JobAt(3)});
  EXPECT_FALSE(StringAt(Stored()["status"], "lastSuccessfulTime").empty());
}

TEST_F(CronJobControllerTest, ACronJobInATerminatingNamespaceStopsCreatingWithoutAnError) {
  // As against kube-apiserver: the namespace stays Terminating with the CronJob in it, and every
  // Job create is refused.
  api_.server().namespace_deleter().Stop();
  CreateNamespace(*rest_, "leaving");
  Json cj = CronJobDoc("* * * * *", 0);
  cj["metadata"].erase("uid");
  cj["metadata"].erase("creationTimestamp");
  cj["metadata"]["namespace"] = "leaving";
  auto r = rest_->Post("/apis/batch/v1/namespaces/leaving/cronjobs", cj);
  ASSERT_TRUE(r.ok()) << r.error().message;
  const int64_t created = CreatedAt(*r);
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/leaving").ok());
  WaitFor([&] { return cronjobs_->Get("leaving/tick").has_value(); });
  clock_.Set(At(created - created % 60 + 61));

  auto synced = controller_->Sync("leaving/tick");
  EXPECT_TRUE(synced.ok()) << synced.error().message;
  auto jobs = rest_->Get("/apis/batch/v1/namespaces/leaving/jobs");
  ASSERT_TRUE(jobs.ok());
  EXPECT_TRUE((*jobs)["items"].empty());
}

TEST_F(CronJobControllerTest, ReplaceDeletesTheRunningJobAndHistoryIsTrimmed) {
  Create("Replace", 1);
  SyncAt(1);
  SyncAt(2);
  EXPECT_EQ(JobNames(), std::set<std::string>{JobAt(2)});
  EXPECT_EQ(Active(), std::vector<std::string>{JobAt(2)});
  Complete(JobAt(2));
  SyncAt(3);
  Complete(JobAt(3));
  SyncAt(4);
  // One successful Job is kept (the newest), and the one just started runs.
  EXPECT_EQ(JobNames(), (std::set<std::string>{JobAt(3), JobAt(4)}));
}

}  // namespace
}  // namespace berth::controllers
