#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/async_pod_deleter.h"
#include "framework/in_memory_cluster.h"
#include "framework/parallelizer.h"
#include "plugins/defaultpreemption/plugin.h"
#include "plugins/defaultpreemption/plugin_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using defaultpreemption_test::Env;
using defaultpreemption_test::FakeWaitingPod;
using defaultpreemption_test::kHigh;
using defaultpreemption_test::kLarge;
using defaultpreemption_test::kLow;
using defaultpreemption_test::kMedium;
using defaultpreemption_test::kMid;
using defaultpreemption_test::kNeg;
using defaultpreemption_test::kSmall;
using defaultpreemption_test::kVeryHigh;
using defaultpreemption_test::kVeryLarge;
using defaultpreemption_test::N;
using defaultpreemption_test::Req;
using defaultpreemption_test::Running;
using defaultpreemption_test::Statuses;
using preemption::Candidate;
using preemption::CompiledPdb;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

// ---------------------------------------------------------------- candidate choice

TEST(DefaultPreemptionTest, SelectBestCandidate) {
  struct Case {
    std::string name;
    std::vector<std::string> node_names;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    std::vector<std::string> want;  // any of these
  };
  const UnixTime t0 = 100;  // a common start time
  const std::vector<Case> cases = {
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge, t0), Running("p2", "node2", kMid, kLarge, t0)},
       {"node1", "node2"}},
      {"node with min highest priority pod is picked",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, t0), Running("p1.2", "node1", kMid, kLarge, t0),
        Running("p2.1", "node2", kMid, kMedium, t0), Running("p2.2", "node2", kLow, kMedium, t0),
        Running("p3.1", "node3", kLow, kMedium, t0), Running("p3.2", "node3", kLow, kMedium, t0)},
       {"node3"}},
      {"when highest priorities are the same, minimum sum of priorities is picked",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, t0), Running("p1.2", "node1", kMid, kLarge, t0),
        Running("p2.1", "node2", kMid, kLarge, t0), Running("p2.2", "node2", kLow, kMedium, t0),
        Running("p3.1", "node3", kMid, kMedium, t0), Running("p3.2", "node3", kMid, kMedium, t0)},
       {"node2"}},
      {"when highest priority and sum are the same, minimum number of pods is picked",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall, t0), Running("p1.2", "node1", kNeg, kSmall, t0),
        Running("p1.3", "node1", kMid, kSmall, t0), Running("p1.4", "node1", kNeg, kSmall, t0),
        Running("p2.1", "node2", kMid, kLarge, t0), Running("p2.2", "node2", kNeg, kMedium, t0),
        Running("p3.1", "node3", kMid, kMedium, t0), Running("p3.2", "node3", kNeg, kSmall, t0),
        Running("p3.3", "node3", kLow, kSmall, t0)},
       {"node2"}},
      {"sum of adjusted priorities is considered",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall, t0), Running("p1.2", "node1", kNeg, kSmall, t0),
        Running("p1.3", "node1", kNeg, kSmall, t0), Running("p2.1", "node2", kMid, kLarge, t0),
        Running("p2.2", "node2", kNeg, kMedium, t0), Running("p3.1", "node3", kMid, kMedium, t0),
        Running("p3.2", "node3", kNeg, kSmall, t0), Running("p3.3", "node3", kLow, kSmall, t0)},
       {"node2"}},
      {"non-overlapping lowest high priority, sum priorities, and number of pods",
       {"node1", "node2", "node3", "node4"},
       MakePod().Name("p").Priority(kVeryHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall, t0), Running("p1.2", "node1", kLow, kSmall, t0),
        Running("p1.3", "node1", kLow, kSmall, t0), Running("p2.1", "node2", kHigh, kLarge, t0),
        Running("p3.1", "node3", kMid, kMedium, t0), Running("p3.2", "node3", kLow, kSmall, t0),
        Running("p3.3", "node3", kLow, kSmall, t0), Running("p3.4", "node3", kLow, kMedium, t0),
        Running("p4.1", "node4", kMid, kMedium, t0), Running("p4.2", "node4", kMid, kSmall, t0),
        Running("p4.3", "node4", kMid, kSmall, t0), Running("p4.4", "node4", kNeg, kSmall, t0)},
       {"node1"}},
      {"same priority, same number of victims, different start time for each node's pod",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, 2), Running("p1.2", "node1", kMid, kMedium, 2),
        Running("p2.1", "node2", kMid, kMedium, 3), Running("p2.2", "node2", kMid, kMedium, 3),
        Running("p3.1", "node3", kMid, kMedium, 1), Running("p3.2", "node3", kMid, kMedium, 1)},
       {"node2"}},
      {"same priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, 4), Running("p1.2", "node1", kMid, kMedium, 2),
        Running("p2.1", "node2", kMid, kMedium, 5), Running("p2.2", "node2", kMid, kMedium, 1),
        Running("p3.1", "node3", kMid, kMedium, 3), Running("p3.2", "node3", kMid, kMedium, 6)},
       {"node3"}},
      {"different priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kLow, kMedium, 4), Running("p1.2", "node1", kMid, kMedium, 2),
        Running("p2.1", "node2", kMid, kMedium, 6), Running("p2.2", "node2", kLow, kMedium, 1),
        Running("p3.1", "node3", kLow, kMedium, 3), Running("p3.2", "node3", kMid, kMedium, 5)},
       {"node2"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Ptr<Node>> nodes;
    for (const auto& n : c.node_names) nodes.push_back(N(n));
    Env env(nodes, c.pods, c.pod);
    auto got = env.DryRunAll(0, static_cast<int32_t>(nodes.size()), {});
    const int best = preemption::PickOneNodeForPreemption(got.candidates);
    ASSERT_GE(best, 0);
    EXPECT_NE(std::find(c.want.begin(), c.want.end(), got.candidates[best].node_name), c.want.end())
        << got.candidates[best].node_name;
  }
}

// The sample conformance case: the node whose most important victim is least important wins.
TEST(DefaultPreemptionTest, LowestHighestVictimPriorityEndToEnd) {
  const Req node_res = {{"cpu", "500m"}, {"memory", "500Mi"}, {"pods", "32"}};
  const Req r200 = {{"cpu", "200m"}, {"memory", "200Mi"}};
  const Req r300 = {{"cpu", "300m"}, {"memory", "300Mi"}};
  Env env(
      {N("node1", node_res), N("node2", node_res), N("node3", node_res)},
      {Running("p1-1", "node1", 100, r200, 1704067200),
       Running("p1-2", "node1", 100, r300, 1704067200),
       Running("p2-1", "node2", 100, r200, 1704067200),
       Running("p2-2", "node2", 0, r200, 1704067200), Running("p3-1", "node3", 0, r200, 1704067200),
       Running("p3-2", "node3", 0, r200, 1704067200)},
      MakePod().Name("p").Priority(1000).Req({{"cpu", "500m"}, {"memory", "500Mi"}}).Obj());
  PostFilterResult result;
  Status s = env.plugin.PostFilter(env.state, *env.pod,
                                   Statuses({{"node1", Code::kUnschedulable},
                                             {"node2", Code::kUnschedulable},
                                             {"node3", Code::kUnschedulable}}),
                                   &result);
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  ASSERT_TRUE(result.nominating.has_value());
  EXPECT_EQ(result.nominating->node_name, "node3");
  std::vector<std::string> victims = result.victims;
  std::sort(victims.begin(), victims.end());
  EXPECT_EQ(victims, (std::vector<std::string>{"default/p3-1", "default/p3-2"}));
}

// ---------------------------------------------------------------- side effects

TEST(DefaultPreemptionTest, PrepareCandidateEvictsAndClearsLowerNominations) {
  auto waiting = Running("waiting", "node1", kLow, kSmall);
  auto doomed = Running("doomed", "node1", kLow, kMedium);
  auto already =
      MakePod().Name("already").Priority(kLow).Node("node1").Req(kSmall).Terminating().Obj();
  auto nominated_low = MakePod().Name("nom-low").Priority(kLow).NominatedNodeName("node1").Obj();
  auto nominated_high =
      MakePod().Name("nom-high").Priority(kVeryHigh).NominatedNodeName("node1").Obj();
  Env env({N("node1")}, {waiting, doomed, already, nominated_low, nominated_high},
          MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj());
  FakeWaitingPod* w = env.handle.AddWaitingPod(waiting);
  env.handle.fake_nominator().pods["node1"] = {PodInfo::Create(nominated_low),
                                               PodInfo::Create(nominated_high)};

  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(waiting), PodInfo::Create(doomed), PodInfo::Create(already)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());

  auto& cluster = env.handle.cluster();
  EXPECT_EQ(w->rejected_by, "DefaultPreemption");
  EXPECT_EQ(w->rejection, "preempted");
  EXPECT_NE(cluster.GetPod("default", "waiting"), nullptr);  // rejected, not deleted
  EXPECT_EQ(cluster.GetPod("default", "doomed"), nullptr);
  EXPECT_NE(cluster.GetPod("default", "already"), nullptr);  // already terminating
  EXPECT_EQ(cluster.write_counts().deletes, 1);
  EXPECT_EQ(cluster.GetPod("default", "nom-low")->status.nominated_node_name, "");
  EXPECT_EQ(cluster.GetPod("default", "nom-high")->status.nominated_node_name, "node1");
}

// The daemon's writer queues deletions: one that fails later makes the preemptor try again at
// once (nothing else would move it out of the unschedulable pool). DeletePodThen's answers are
// held in `held` until the test gives them.
class QueuedDeletions final : public ClusterWriter, public AsyncPodDeleter {
 public:
  explicit QueuedDeletions(ClusterWriter& base) : base_(base) {}
  VoidResult Bind(const Pod& pod, std::string_view node) override { return base_.Bind(pod, node); }
  VoidResult DeletePod(const Pod& pod, std::function<void(const Error&)> on_failure) override {
    queued.push_back({pod.metadata.name, std::move(on_failure)});
    return {};
  }
  void DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) override {
    held.push_back({pod, std::move(done)});
  }
  // Deletes the oldest held victim through the base writer and answers.
  void Release() {
    auto [pod, done] = std::move(held.front());
    held.erase(held.begin());
    ASSERT_TRUE(base_.DeletePod(pod, nullptr).ok());
    done(nullptr);
  }
  VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node) override {
    return base_.SetNominatedNodeName(pod, node);
  }
  VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& c) override {
    return base_.SetPodScheduledCondition(pod, c);
  }
  VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv) override {
    return base_.BindVolume(pvc, pv);
  }
  VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc, std::string_view node) override {
    return base_.RequestProvisioning(pvc, node);
  }
  std::vector<std::pair<std::string, std::function<void(const Error&)>>> queued;
  std::vector<std::pair<Pod, std::function<void(const Error*)>>> held;

 private:
  ClusterWriter& base_;
};

// SchedulerAsyncPreemption off.
TEST(DefaultPreemptionTest, AFailedQueuedDeletionActivatesThePreemptor) {
  auto a = Running("a", "node1", kLow, kMedium);
  auto b = Running("b", "node1", kLow, kMedium);
  Env env({N("node1")}, {a, b}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(), {}, {},
          1, std::nullopt, false, /*async_preemption=*/false);
  QueuedDeletions queued(env.handle.cluster());
  env.handle.SetWriter(&queued);
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a), PodInfo::Create(b)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());
  ASSERT_EQ(queued.queued.size(), 2u);
  EXPECT_TRUE(env.handle.activated.empty());  // queued, not failed yet

  queued.queued[1].second(Error{"pods \"b\" is forbidden", ErrorCode::kForbidden});
  EXPECT_THAT(env.handle.activated, ElementsAre("p"));
  ASSERT_EQ(env.handle.logged.size(), 1u);
  EXPECT_THAT(env.handle.logged[0], HasSubstr("preempting for pod default/p failed"));
  EXPECT_THAT(env.handle.logged[0], HasSubstr("forbidden"));
}

// SchedulerAsyncPreemption (upstream's TestIsPodRunningPreemption and prepareCandidateAsync):
// the preemptor is gated while its victims go; the last victim is asked for once the others
// are gone, and the preemption is over as soon as that victim is terminating or gone.
TEST(DefaultPreemptionTest, AsyncPreemptionGatesThePreemptorUntilItsLastVictimGoes) {
  auto a = Running("a", "node1", kLow, kMedium);
  auto b = Running("b", "node1", kLow, kMedium);
  Env env({N("node1")}, {a, b}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj());
  QueuedDeletions queued(env.handle.cluster());
  env.handle.SetWriter(&queued);
  const Pod& p = *env.pod->pod;
  EXPECT_TRUE(env.plugin.PreEnqueue(p).IsSuccess());
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a), PodInfo::Create(b)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, p).IsSuccess());
  ASSERT_EQ(queued.held.size(), 1u);  // the last victim waits for the first
  EXPECT_EQ(queued.held[0].first.metadata.name, "a");
  EXPECT_TRUE(env.plugin.IsPodRunningPreemption(p));
  Status gated = env.plugin.PreEnqueue(p);
  EXPECT_EQ(gated.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(gated.Message(), "waiting for the preemption for this pod to be finished");

  queued.Release();
  ASSERT_EQ(queued.held.size(), 1u);
  EXPECT_EQ(queued.held[0].first.metadata.name, "b");
  EXPECT_TRUE(env.plugin.IsPodRunningPreemption(p));  // "b" is still there

  // "b" starts terminating before the writer answers: the preemption is over.
  auto terminating = std::make_shared<Pod>(*env.handle.cluster().GetPod("default", "b"));
  terminating->metadata.deletion_timestamp = 1;
  env.handle.cluster().UpdatePod(terminating);
  EXPECT_FALSE(env.plugin.IsPodRunningPreemption(p));
  EXPECT_TRUE(env.plugin.PreEnqueue(p).IsSuccess());
  queued.Release();
  EXPECT_FALSE(env.plugin.IsPodRunningPreemption(p));
  EXPECT_TRUE(env.handle.activated.empty());
  EXPECT_EQ(env.plugin.EventsToRegister().size(), 1u);
}

// A victim's deletion fails after a reload replaced the profile that started the preemption:
// the report goes through the scheduler's services, never the replaced profile's Handle.
TEST(DefaultPreemptionTest, AFailureAfterAReloadReportsWithoutTheHandle) {
  auto a = Running("a", "node1", kLow, kMedium);
  auto b = Running("b", "node1", kLow, kMedium);
  Env env({N("node1")}, {a, b}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj());
  env.handle.detached = std::make_shared<defaultpreemption_test::TestHandle::DetachedCalls>();
  QueuedDeletions queued(env.handle.cluster());
  env.handle.SetWriter(&queued);
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a), PodInfo::Create(b)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());
  ASSERT_EQ(queued.held.size(), 1u);

  env.handle.retired = true;
  auto [victim, done] = std::move(queued.held.front());
  queued.held.clear();
  const Error refused{"pods \"a\" is forbidden", ErrorCode::kForbidden};
  done(&refused);
  EXPECT_TRUE(queued.held.empty());  // the last victim is spared
  EXPECT_THAT(env.handle.detached->activated, ElementsAre("p"));
  ASSERT_EQ(env.handle.detached->logged.size(), 1u);
  EXPECT_THAT(env.handle.detached->logged[0], HasSubstr("preempting for pod default/p failed"));
  EXPECT_TRUE(env.handle.activated.empty());
  EXPECT_TRUE(env.handle.logged.empty());
}

// Gate off: no gating, no registration.
TEST(DefaultPreemptionTest, SyncPreemptionNeverGates) {
  auto a = Running("a", "node1", kLow, kMedium);
  Env env({N("node1")}, {a}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(), {}, {}, 1,
          std::nullopt, false, /*async_preemption=*/false);
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());
  EXPECT_EQ(env.handle.cluster().GetPod("default", "a"), nullptr);
  EXPECT_FALSE(env.plugin.IsPodRunningPreemption(*env.pod->pod));
  EXPECT_TRUE(env.plugin.EventsToRegister().empty());
}

// Nominated pods of at least the preemptor's priority keep their room during the dry run.

}  // namespace
}  // namespace berth
