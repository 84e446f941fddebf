// The Job and ttl-after-finished controllers against the embedded API server. The test plays
// the kubelet (writes pod phases) and drives syncs itself after waiting for the informers to
// show what the previous step wrote; time is a FakeClock.
#include "controllers/job.h"

#include <gtest/gtest.h>

#include <thread>

#include "client/api_server_test_util.h"
#include "controllers/controller_test_util.h"
#include "controllers/job_util.h"
#include "controllers/ttl_after_finished.h"

namespace berth::controllers {
namespace {

constexpr char kJob[] = "default/work";

class JobControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-job-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", nullptr);
    jobs_ = std::make_unique<SharedInformer>(rest_, "/apis/batch/v1/jobs", "Job", nullptr);
    ControllerOptions o{&clock_, 1, nullptr};
    controller_ = std::make_unique<JobController>(rest_, pods_.get(), jobs_.get(), o);
    ttl_ = std::make_unique<TtlAfterFinishedController>(rest_, jobs_.get(), o);
    pods_->Start();
    jobs_->Start();
    WaitFor([&] { return pods_->HasSynced() && jobs_->HasSynced(); });
  }
  void TearDown() override {
    pods_->Stop();
    jobs_->Stop();
    controller_.reset();
    ttl_.reset();
    api_.Stop();
  }
  UnixTime Now() const {
    return std::chrono::duration_cast<std::chrono::seconds>(clock_.Now().time_since_epoch())
        .count();
  }
  void CreateJob(const Json& spec_fields) {
    Json job = {{"apiVersion", "batch/v1"},
                {"kind", "Job"},
                {"metadata", {{"name", "work"}, {"namespace", "default"}}},
                {"spec",
                 {{"template",
                   {{"spec",
                     {{"restartPolicy", "Never"},
                      {"containers", {{{"name", "c"}, {"image", "busybox"}}}}}}}}}}};
    job["spec"].update(spec_fields);
    auto r = rest_->Post("/apis/batch/v1/namespaces/default/jobs", job);
    ASSERT_TRUE(r.ok()) << r.error().message;
    WaitFor([&] { return jobs_->Get(kJob).has_value(); });
  }
  // Syncs once the informers show the Job's latest status and expectations are met.
  void SyncJob() {
    auto stored = StoredJob();
    const std::string rv = StringAt(stored["metadata"], "resourceVersion");
    WaitFor([&] {
      auto j = jobs_->Get(kJob);
      return j && StringAt(Member(DocOf(*j), "metadata"), "resourceVersion") == rv &&
             controller_->expectations().Satisfied(kJob);
    });
    auto r = controller_->Sync(kJob);
    ASSERT_TRUE(r.ok()) << r.error().message;
  }
  Json StoredJob() {
    auto r = rest_->Get("/apis/batch/v1/namespaces/default/jobs/work");
    return r.ok() ? *r : Json();
  }
  std::vector<Json> Pods(bool live_only = false) {
    std::vector<Json> out;
    for (const Object& o : pods_->List()) {
      const Json& p = DocOf(o);
      const std::string phase = StringAt(Member(p, "status"), "phase");
      if (live_only && (phase == "Succeeded" || phase == "Failed")) continue;
      out.push_back(p);
    }
    return out;
  }
  // Plays the kubelet: the pod ends in `phase` now.
  void Finish(const Json& pod, const std::string& phase) {
    Json p = pod;
    const std::string at = FormatTimestamp(Now());
    p["status"] = {
        {"phase", phase},
        {"containerStatuses",
         {{{"name", "c"},
           {"state",
            {{"terminated", {{"exitCode", phase == "Succeeded" ? 0 : 1}, {"finishedAt", at}}}}}}}}};
    auto r = rest_->Put("/api/v1/namespaces/default/pods/" + NameOf(p) + "/status", p);
    ASSERT_TRUE(r.ok()) << r.error().message;
    const std::string key = KeyOf(p);
    WaitFor([&] {
      auto o = pods_->Get(key);
      return o && StringAt(Member(DocOf(*o), "status"), "phase") == phase;
    });
  }
  void WaitForPods(size_t live) {
    WaitFor([&] { return Pods(true).size() == live; });
  }
  static std::vector<std::string> ConditionTypes(const Json& job) {
    std::vector<std::string> out;
    for (const Json& c : Member(Member(job, "status"), "conditions")) out.push_back(c["type"]);
    return out;
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'800'000'000))};
  client::RestClient* rest_ = nullptr;
  std::unique_ptr<SharedInformer> pods_, jobs_;
  std::unique_ptr<JobController> controller_;
  std::unique_ptr<TtlAfterFinishedController> ttl_;
};

TEST_F(JobControllerTest, IndexedJobRunsEachIndexOnceAndCompletes) {
  CreateJob({{"completions", 3}, {"parallelism", 2}, {"completionMode", "Indexed"}});
  SyncJob();
  WaitForPods(2);
  const std::string uid = StoredJob()["metadata"]["uid"];
  std::map<std::string, Json> by_index;
  for (const Json& p : Pods()) {
    const std::string ix = p["metadata"]["annotations"][std::string(kJobCompletionIndex)];
    by_index[ix] = p;
    EXPECT_EQ(p["metadata"]["labels"][std::string(kJobCompletionIndex)], ix);
    EXPECT_EQ(p["metadata"]["generateName"], "work-" + ix + "-");
    EXPECT_EQ(p["spec"]["hostname"], "work-" + ix);
    EXPECT_EQ(p["metadata"]["labels"][std::string(kJobNameLabel)], "work");
    EXPECT_EQ(p["metadata"]["labels"][std::string(kControllerUidLabel)], uid);
    EXPECT_EQ(p["spec"]["containers"][0]["env"][0]["name"], "JOB_COMPLETION_INDEX");
    const Json* ref = ControllerRefOf(p);
    ASSERT_NE(ref, nullptr);
    EXPECT_EQ(StringAt(*ref, "kind"), "Job");
    EXPECT_EQ(StringAt(*ref, "uid"), uid);
  }
  ASSERT_EQ(by_index.size(), 2u);
  ASSERT_TRUE(by_index.count("0") && by_index.count("1"));
  Json status = StoredJob()["status"];
  EXPECT_EQ(IntAt(status, "active"), 2);
  EXPECT_FALSE(StringAt(status, "startTime").empty());

  // Index 1 finishes: the next pod is index 2, not a second 1.
  Finish(by_index["1"], "Succeeded");
  SyncJob();
  WaitForPods(2);
  std::set<std::string> live;
  for (const Json& p : Pods(true))
    live.insert(p["metadata"]["annotations"][std::string(kJobCompletionIndex)]);
  EXPECT_EQ(live, (std::set<std::string>{"0", "2"}));
  EXPECT_EQ(StringAt(StoredJob()["status"], "completedIndexes"), "1");

  for (const Json& p : Pods(true)) Finish(p, "Succeeded");
  SyncJob();
  Json job = StoredJob();
  status = job["status"];
  EXPECT_EQ(IntAt(status, "succeeded"), 3);
  EXPECT_EQ(IntAt(status, "active"), 0);
  EXPECT_EQ(StringAt(status, "completedIndexes"), "0-2");
  EXPECT_EQ(StringAt(status, "completionTime"), FormatTimestamp(Now()));
  EXPECT_EQ(ConditionTypes(job), (std::vector<std::string>{"SuccessCriteriaMet", "Complete"}));
  EXPECT_EQ(StringAt(*FindJobCondition(job, "Complete"), "reason"), "CompletionsReached");
  EXPECT_TRUE(IsJobFinished(job));
}

TEST_F(JobControllerTest, FailedPodsAreReplacedAfterBackoffUntilTheLimit) {
  CreateJob({{"backoffLimit", 1}});
  SyncJob();
  WaitForPods(1);
  Finish(Pods(true)[0], "Failed");
  SyncJob();
  // The first failure holds the replacement back 10 s.
  EXPECT_EQ(IntAt(StoredJob()["status"], "failed"), 1);
  EXPECT_EQ(Pods(true).size(), 0u);
  EXPECT_EQ(controller_->queue().Delayed(), 1u);
  clock_.Advance(std::chrono::seconds(9));
  ASSERT_TRUE(controller_->Sync(kJob).ok());
  EXPECT_EQ(Pods(true).size(), 0u);
  clock_.Advance(std::chrono::seconds(1));
  ASSERT_TRUE(controller_->Sync(kJob).ok());
  WaitForPods(1);

  Finish(Pods(true)[0], "Failed");
  SyncJob();
  Json job = StoredJob();
  EXPECT_EQ(IntAt(job["status"], "failed"), 2);
  EXPECT_EQ(ConditionTypes(job), (std::vector<std::string>{"FailureTarget", "Failed"}));
  const Json* failed = FindJobCondition(job, "Failed");
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(StringAt(*failed, "reason"), "BackoffLimitExceeded");
  EXPECT_TRUE(StringAt(job["status"], "completionTime").empty());
}

TEST_F(JobControllerTest, BackoffDoublesPerFailureSinceTheLastSuccess) {
  const TimePoint now = clock_.Now();
  auto pod = [&](const char* phase, int finished_ago) {
    return Json{
        {"metadata", {{"creationTimestamp", FormatTimestamp(0)}}},
        {"status",
         {{"phase", phase},
          {"containerStatuses",
           {{{"state",
              {{"terminated",
                {{"finishedAt", FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                                    now.time_since_epoch())
                                                    .count() -
                                                finished_ago)}}}}}}}}}}};
  };
  Json f1 = pod("Failed", 100), f2 = pod("Failed", 5), ok = pod("Succeeded", 50);
  EXPECT_EQ(BackoffRemaining({}, now), Duration::zero());
  // Two failures since the success 50 s ago would wait 20 s; the first is before it: 10 - 5.
  EXPECT_EQ(BackoffRemaining({&f1, &ok, &f2}, now), std::chrono::seconds(5));
  EXPECT_EQ(BackoffRemaining({&f1, &f2}, now), std::chrono::seconds(15));
  std::vector<Json> many(10, pod("Failed", 1));
  std::vector<const Json*> refs;
  for (const Json& p : many) refs.push_back(&p);
  EXPECT_EQ(BackoffRemaining(refs, now), std::chrono::minutes(6) - std::chrono::seconds(1));
}

TEST_F(JobControllerTest, ActiveDeadlineFailsTheJobAndStopsItsPods) {
  CreateJob({{"activeDeadlineSeconds", 30}, {"parallelism", 2}, {"completions", 4}});
  SyncJob();
  WaitForPods(2);
  EXPECT_EQ(controller_->queue().Delayed(), 1u);  // woken at the deadline
  clock_.Advance(std::chrono::seconds(30));
  SyncJob();
  // Unscheduled pods are deleted at once: nothing is left terminating.
  WaitForPods(0);
  SyncJob();
  Json job = StoredJob();
  const Json* failed = FindJobCondition(job, "Failed");
  ASSERT_NE(failed, nullptr) << job.dump();
  EXPECT_EQ(StringAt(*failed, "reason"), "DeadlineExceeded");
  EXPECT_TRUE(JobConditionTrue(job, "FailureTarget"));
  EXPECT_EQ(IntAt(job["status"], "failed"), 2);
  EXPECT_EQ(IntAt(job["status"], "active"), 0);
}

TEST_F(JobControllerTest, SuspendedJobRunsNothingUntilResumed) {
  CreateJob({{"suspend", true}});
  SyncJob();
  EXPECT_EQ(Pods().size(), 0u);
  Json job = StoredJob();
  EXPECT_TRUE(JobConditionTrue(job, "Suspended"));
  EXPECT_TRUE(StringAt(job["status"], "startTime").empty());
  auto r = rest_->Patch("/apis/batch/v1/namespaces/default/jobs/work",
                        {{"spec", {{"suspend", false}}}}, "application/merge-patch+json");
  ASSERT_TRUE(r.ok());
  SyncJob();
  WaitForPods(1);
  job = StoredJob();
  const Json* c = FindJobCondition(job, "Suspended");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(StringAt(*c, "status"), "False");
  EXPECT_EQ(StringAt(*c, "reason"), "JobResumed");
  EXPECT_EQ(StringAt(job["status"], "startTime"), FormatTimestamp(Now()));
}

TEST_F(JobControllerTest, FinishedJobIsDeletedAfterItsTtl) {
  CreateJob({{"ttlSecondsAfterFinished", 100}});
  SyncJob();
  WaitForPods(1);
  Finish(Pods(true)[0], "Succeeded");
  SyncJob();
  ASSERT_TRUE(IsJobFinished(StoredJob()));
  WaitFor([&] {
    auto j = jobs_->Get(kJob);
    return j && IsJobFinished(DocOf(*j));
  });
  ASSERT_TRUE(ttl_->Sync(kJob).ok());
  EXPECT_FALSE(StoredJob().is_null());
  EXPECT_EQ(ttl_->queue().Delayed(), 1u);
  clock_.Advance(std::chrono::seconds(100));
  ASSERT_TRUE(ttl_->Sync(kJob).ok());
  EXPECT_TRUE(StoredJob().is_null());
}

TEST(JobUtilTest, CompletedIndexesRoundTrip) {
  EXPECT_EQ(FormatIndexes({}), "");
  EXPECT_EQ(FormatIndexes({0, 1, 2, 4, 6, 7}), "0-2,4,6-7");
  EXPECT_EQ(ParseIndexes("0-2,4,6-7", 10), (std::set<int>{0, 1, 2, 4, 6, 7}));
  // Indexes at or beyond completions are dropped.
  EXPECT_EQ(ParseIndexes("1,3-9", 5), (std::set<int>{1, 3, 4}));
  EXPECT_EQ(FirstPendingIndexes({0, 2}, {1}, 2, 6), (std::vector<int>{3, 4}));
}

}  // namespace
}  // namespace berth::controllers
