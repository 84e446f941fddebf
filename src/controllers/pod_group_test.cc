// The PodGroup status controller: upstream's phase table (scheduler-plugins'
// pkg/controllers/podgroup_controller_test.go) on the status function, then the controller
// against the embedded API server, before and after the PodGroup CRD exists.
#include "controllers/pod_group.h"

#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "client/api_server_test_util.h"

namespace berth::controllers {
namespace {

Json MakePod(const std::string& name, const std::string& group, const std::string& phase,
             const Json& owners = nullptr, const std::string& ns = "default") {
  Json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", name}, {"namespace", ns}, {"labels", {{kPodGroupLabel, group}}}}},
      {"spec", {{"containers", {{{"name", "c"}, {"image", "busybox"}}}}}},
      {"status", {{"phase", phase}}}};
  if (!owners.is_null()) pod["metadata"]["ownerReferences"] = owners;
  return pod;
}

Json MakeGroup(const std::string& name, int min_member, const std::string& phase,
               UnixTime created) {
  Json status = {{"occupiedBy", "test"}, {"scheduleStartTime", FormatTimestamp(1'800'000'000)}};
  if (!phase.empty()) status["phase"] = phase;
  return {
      {"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
      {"kind", "PodGroup"},
      {"metadata",
       {{"name", name}, {"namespace", "default"}, {"creationTimestamp", FormatTimestamp(created)}}},
      {"spec", {{"minMember", min_member}}},
      {"status", status}};
}

Json Next(const Json& group, const std::vector<Json>& pods) {
  std::vector<const Json*> docs;
  for (const Json& p : pods) docs.push_back(&p);
  return NextPodGroupStatus(group, docs);
}

struct PhaseCase {
  const char* name;
  int min_member;
  std::vector<std::string> pods;
  std::string pod_phase;
  std::string pod_next_phase;  // "": unchanged
  std::string previous;
  std::string desired;
  bool created_72h_ago = false;
};

// Upstream's harness: the PodGroup and the first two pods exist; each pod in turn gets its next
// phase and the group is reconciled once.
std::string RunUpstreamHarness(const PhaseCase& c) {
  const UnixTime now = 1'800'000'000;
  Json group = MakeGroup("pg", c.min_member, c.previous, c.created_72h_ago ? now - 72 * 3600 : now);
  std::vector<Json> pods;
  for (size_t i = 0; i < c.pods.size() && i < 2; ++i)
    pods.push_back(MakePod(c.pods[i], "pg", c.pod_phase));
  for (size_t i = 0; i < c.pods.size(); ++i) {
    if (i < pods.size() && !c.pod_next_phase.empty()) pods[i]["status"]["phase"] = c.pod_next_phase;
    group["status"] = Next(group, pods);
  }
  return StringAt(group["status"], "phase");
}

TEST(PodGroupStatusTest, UpstreamPhaseTable) {
  const std::vector<PhaseCase> cases = {
      {"Group running", 2, {"pod1", "pod2"}, "Running", "", "Scheduling", "Running"},
      {"Group running, more than min member",
       2,
       {"pod11", "pod21", "pod31", "pod41"},
       "Running",
       "",
       "Scheduling",
       "Running"},
      {"Group failed", 2, {"pod1", "pod2"}, "Failed", "", "Scheduling", "Failed"},
      {"Group finished", 2, {"pod1", "pod2"}, "Succeeded", "", "Scheduling", "Finished"},
      {"Group status convert from pending to prescheduling",
       2,
       {"pod1", "pod2"},
       "Pending",
       "",
       "Pending",
       "Scheduling"},
      {"Group status convert from scheduling to finished",
       2,
       {"pod1", "pod2"},
       "Pending",
       "Succeeded",
       "Scheduling",
       "Finished"},
      {"Group status keeps pending", 3, {"pod1", "pod2"}, "Running", "", "Pending", "Pending"},
      {"Group status convert from pending to finished",
       2,
       {"pod1", "pod2"},
       "Pending",
       "Succeeded",
       "Pending",
       "Finished"},
      {"Group should not enqueue, created too long",
       2,
       {"pod1", "pod2"},
       "Running",
       "",
       "Pending",
       "Pending",
       true},
      {"Group min member more than Pod number",
       3,
       {"pod91", "pod92"},
       "Pending",
       "",
       "Pending",
       "Pending"},
      {"Group status convert from running to pending",
       4,
       {"pod101", "pod102"},
       "Pending",
       "",
       "Running",
       "Pending"},
  };
  for (const PhaseCase& c : cases) EXPECT_EQ(RunUpstreamHarness(c), c.desired) << c.name;
}

TEST(PodGroupStatusTest, NewGroupIsPendingAndFinalPhasesStay) {
  Json group = MakeGroup("pg", 1, "", 1'800'000'000);
  std::vector<Json> pods = {MakePod("a", "pg", "Running")};
  EXPECT_EQ(Next(group, pods)["phase"], "Pending");
  for (const char* final_phase : {"Finished", "Failed"}) {
    group["status"]["phase"] = final_phase;
    EXPECT_EQ(Next(group, pods), group["status"]) << final_phase;
  }
}

TEST(PodGroupStatusTest, CountsAreWrittenOnlyOutsidePendingAndZeroCountsAreDropped) {
  Json group = MakeGroup("pg", 3, "Pending", 1'800'000'000);
  std::vector<Json> pods = {MakePod("a", "pg", "Running"), MakePod("b", "pg", "Succeeded")};
  Json status = Next(group, pods);
  EXPECT_FALSE(status.contains("running"));
  group["status"] = {{"phase", "Running"}, {"running", 3}, {"failed", 1}};
  pods.push_back(MakePod("c", "pg", "Pending"));
  status = Next(group, pods);
  EXPECT_EQ(status["phase"], "Scheduling");
  EXPECT_EQ(status["running"], 1);
  EXPECT_EQ(status["succeeded"], 1);
  EXPECT_FALSE(status.contains("failed"));
}

// Upstream's TestFillGroupStatusOccupied.
TEST(PodGroupStatusTest, OccupiedByNamesTheFirstPodsOwnersSorted) {
  Json group = MakeGroup("pg", 2, "Pending", 1'800'000'000);
  Json one = Json::array({{{"name", "new-occupied"}}});
  std::vector<Json> pods = {MakePod("pod1", "pg", "Pending", one),
                            MakePod("pod2", "pg", "Pending", one)};
  EXPECT_EQ(Next(group, pods)["occupiedBy"], "default/new-occupied");
  Json two = Json::array({{{"name", "new-occupied-2"}}, {{"name", "new-occupied-1"}}});
  pods = {MakePod("pod1", "pg", "Pending", two), MakePod("pod2", "pg", "Pending", two)};
  EXPECT_EQ(Next(group, pods)["occupiedBy"], "default/new-occupied-1,default/new-occupied-2");
  // Without owner references the previous value stays, as upstream.
  pods = {MakePod("pod1", "pg", "Pending"), MakePod("pod2", "pg", "Pending")};
  EXPECT_EQ(Next(group, pods)["occupiedBy"], "test");
}

TEST(PodGroupStatusTest, TimedOutOnlyWhenStartedMoreThan48HoursAfterCreation) {
  const UnixTime start = 1'800'000'000;
  Json group = MakeGroup("pg", 2, "Scheduling", start - 48 * 3600);
  EXPECT_FALSE(PodGroupTimedOut(group));  // exactly 48 hours
  group["metadata"]["creationTimestamp"] = FormatTimestamp(start - 48 * 3600 - 1);
  EXPECT_TRUE(PodGroupTimedOut(group));
  group["status"]["running"] = 1;
  EXPECT_FALSE(PodGroupTimedOut(group));
  group["status"].erase("running");
  group["status"].erase("scheduleStartTime");
  EXPECT_FALSE(PodGroupTimedOut(group));
}

// A PodGroup CRD as scheduler-plugins' (status subresource, preserved fields).
Json PodGroupCrd() {
  return Json::parse(R"({
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {"name": "podgroups.scheduling.x-k8s.io"},
    "spec": {"group": "scheduling.x-k8s.io", "scope": "Namespaced",
      "names": {"plural": "podgroups", "singular": "podgroup", "kind": "PodGroup",
                "listKind": "PodGroupList", "shortNames": ["pg", "pgs"]},
      "versions": [{"name": "v1alpha1", "served": true, "storage": true,
        "subresources": {"status": {}},
        "schema": {"openAPIV3Schema": {"type": "object", "properties": {
          "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
          "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}})");
}

class PodGroupControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.Start("berth-podgroup-test");
    if (HasFatalFailure()) return;
    rest_ = api_.rest();
    auto log = [this](const std::string& line) {
      std::lock_guard lock(log_mu_);
      log_.push_back(line);
    };
    pods_ = std::make_unique<SharedInformer>(rest_, "/api/v1/pods", "Pod", log);
    groups_ = std::make_unique<SharedInformer>(rest_, kPodGroupsPath, "PodGroup", log, true);
    controller_ = std::make_unique<PodGroupController>(rest_, pods_.get(), groups_.get(),
                                                       ControllerOptions{&clock_, 1, log});
    pods_->Start();
    groups_->Start();
    WaitFor([&] { return pods_->HasSynced() && groups_->HasSynced(); });
  }
  void TearDown() override {
    pods_->Stop();
    groups_->Stop();
    controller_.reset();
    api_.Stop();
  }
  void WaitFor(const std::function<bool()>& done) {
    for (int i = 0; i < 2000 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    ASSERT_TRUE(done());
  }
  void ApplyCrd() {
    auto r = rest_->Post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", PodGroupCrd());
    ASSERT_TRUE(r.ok()) << r.error().message;
    WaitFor([&] { return rest_->Get(std::string(kPodGroupsPath)).ok(); });
  }
  void CreateGroup(const std::string& name, int min_member) {
    Json g = {{"apiVersion", "scheduling.x-k8s.io/v1alpha1"},
              {"kind", "PodGroup"},
              {"metadata", {{"name", name}}},
              {"spec", {{"minMember", min_member}}}};
    auto r = rest_->Post(GroupsPath(), g);
    ASSERT_TRUE(r.ok()) << r.error().message;
    WaitFor([&] { return groups_->Get("default/" + name).has_value(); });
  }
  void CreatePod(const Json& pod) {
    const std::string ns = NamespaceOf(pod);
    auto r = rest_->Post("/api/v1/namespaces/" + ns + "/pods", pod);
    ASSERT_TRUE(r.ok()) << r.error().message;
    WaitFor([&] { return pods_->Get(ns + "/" + NameOf(pod)).has_value(); });
  }
  // Plays the kubelet: the pod's phase becomes `phase`.
  void SetPhase(const std::string& name, const std::string& phase) {
    auto pod = rest_->Get("/api/v1/namespaces/default/pods/" + name);
    ASSERT_TRUE(pod.ok());
    (*pod)["status"] = {{"phase", phase}};
    auto r = rest_->Put("/api/v1/namespaces/default/pods/" + name + "/status", *pod);
    ASSERT_TRUE(r.ok()) << r.error().message;
    WaitFor([&] {
      auto o = pods_->Get("default/" + name);
      return o && StringAt(Member(DocOf(*o), "status"), "phase") == phase;
    });
  }
  static std::string GroupsPath() {
    return "/apis/scheduling.x-k8s.io/v1alpha1/namespaces/default/podgroups";
  }
  Json StoredGroup(const std::string& name) {
    auto r = rest_->Get(GroupsPath() + "/" + name);
    return r.ok() ? *r : Json();
  }
  // Syncs once the informer shows the group as stored; returns the stored status after.
  Json Sync(const std::string& name) {
    const std::string rv = StringAt(StoredGroup(name)["metadata"], "resourceVersion");
    WaitFor([&] {
      auto g = groups_->Get("default/" + name);
      return g && StringAt(Member(DocOf(*g), "metadata"), "resourceVersion") == rv;
    });
    auto r = controller_->Sync("default/" + name);
    EXPECT_TRUE(r.ok()) << r.error().message;
    return StoredGroup(name)["status"];
  }
  std::vector<std::string> Log() {
    std::lock_guard lock(log_mu_);
    return log_;
  }

  TestApiServer api_;
  FakeClock clock_{TimePoint(std::chrono::seconds(1'800'000'000))};
  client::RestClient* rest_ = nullptr;
  std::mutex log_mu_;
  std::vector<std::string> log_;
  std::unique_ptr<SharedInformer> pods_, groups_;
  std::unique_ptr<PodGroupController> controller_;
};

TEST_F(PodGroupControllerTest, IdleWithoutTheCrdThenFollowsTheGroupOnceApplied) {
  // No CRD: the informer reads as synced and empty, a sync does nothing, nothing is logged.
  CreatePod(MakePod("a", "trainer", "Pending"));
  EXPECT_TRUE(groups_->List().empty());
  WaitFor([&] { return controller_->queue().Len() == 1; });  // the label named its group
  EXPECT_TRUE(controller_->Sync("default/trainer").ok());
  EXPECT_TRUE(Log().empty()) << Log().front();

  ApplyCrd();
  CreateGroup("trainer", 2);
  EXPECT_EQ(StringAt(Sync("trainer"), "phase"), "Pending");
  EXPECT_EQ(StringAt(Sync("trainer"), "phase"), "Pending");  // one of two pods
  CreatePod(MakePod("b", "trainer", "Pending", Json::array({{{"name", "job-x"}}})));
  // A pod of the same label in another namespace is not a member.
  ASSERT_TRUE(
      rest_
          ->Post("/api/v1/namespaces",
                 {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "other"}}}})
          .ok());
  CreatePod(MakePod("c", "trainer", "Running", nullptr, "other"));
  Json status = Sync("trainer");
  EXPECT_EQ(StringAt(status, "phase"), "Scheduling");
  // The first pod by name ("a") has no owners: occupiedBy is not written.
  EXPECT_FALSE(status.contains("occupiedBy"));
  SetPhase("a", "Running");
  status = Sync("trainer");
  EXPECT_EQ(StringAt(status, "phase"), "Scheduling");
  EXPECT_EQ(IntAt(status, "running"), 1);
  SetPhase("b", "Running");
  status = Sync("trainer");
  EXPECT_EQ(StringAt(status, "phase"), "Running");
  EXPECT_EQ(IntAt(status, "running"), 2);
  SetPhase("a", "Succeeded");
  SetPhase("b", "Succeeded");
  status = Sync("trainer");
  EXPECT_EQ(StringAt(status, "phase"), "Finished");
  EXPECT_EQ(IntAt(status, "succeeded"), 2);
  EXPECT_FALSE(status.contains("running"));
  // Final: a pod deleted afterwards changes nothing.
  ASSERT_TRUE(rest_->Delete("/api/v1/namespaces/default/pods/a").ok());
  WaitFor([&] { return !pods_->Get("default/a").has_value(); });
  EXPECT_EQ(StringAt(Sync("trainer"), "phase"), "Finished");
  EXPECT_TRUE(Log().empty()) << Log().front();
}

TEST_F(PodGroupControllerTest, OccupiedByAndAStaleCacheNeverWritesBack) {
  ApplyCrd();
  Json owners = Json::array({{{"name", "rs-1"}}});
  CreatePod(MakePod("a", "gang", "Pending", owners));
  CreatePod(MakePod("b", "gang", "Pending", owners));
  CreateGroup("gang", 2);
  EXPECT_EQ(StringAt(Sync("gang"), "phase"), "Pending");
  Json status = Sync("gang");
  EXPECT_EQ(StringAt(status, "phase"), "Scheduling");
  EXPECT_EQ(StringAt(status, "occupiedBy"), "default/rs-1");

  // Someone else moves the group on; a sync from the cache before it shows that write must not
  // overwrite it (the patch is conditional on the resourceVersion the cache holds).
  groups_->Stop();
  Json patch = {{"status", {{"phase", "Failed"}}}};
  auto r = rest_->Patch(GroupsPath() + "/gang/status", patch, "application/merge-patch+json");
  ASSERT_TRUE(r.ok()) << r.error().message;
  SetPhase("a", "Running");
  SetPhase("b", "Running");
  ASSERT_TRUE(controller_->Sync("default/gang").ok());
  EXPECT_EQ(StringAt(StoredGroup("gang")["status"], "phase"), "Failed");
}

}  // namespace
}  // namespace berth::controllers
