// SchedulerAsyncPreemption end to end in the scheduler: the victims' deletions are held by the
// writer, the scheduling cycle goes on meanwhile, the preemptor is not popped again until its
// preemption is over, and it then binds where it made room.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "config/feature_gates.h"
#include "config/load.h"
#include "framework/async_pod_deleter.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

// The in-memory twin, except that victims' deletions asked through DeletePodThen wait until
// the test releases them (as the daemon's victim writers answer later).
class HeldDeletionsClient final : public ClusterClient, public AsyncPodDeleter {
 public:
  explicit HeldDeletionsClient(InMemoryCluster* cluster) : c_(cluster) {}

  Ptr<Pod> GetPod(std::string_view ns, std::string_view name) const override {
    return c_->GetPod(ns, name);
  }
  std::vector<Ptr<Pod>> ListPods() const override { return c_->ListPods(); }
  Ptr<Node> GetNode(std::string_view name) const override { return c_->GetNode(name); }
  std::vector<Ptr<Node>> ListNodes() const override { return c_->ListNodes(); }
  Ptr<Namespace> GetNamespace(std::string_view name) const override {
    return c_->GetNamespace(name);
  }
  std::vector<Ptr<Namespace>> ListNamespaces() const override { return c_->ListNamespaces(); }
  std::vector<Ptr<Service>> ListServices(std::string_view ns) const override {
    return c_->ListServices(ns);
  }
  std::vector<Ptr<ReplicationController>> ListReplicationControllers(
      std::string_view ns) const override {
    return c_->ListReplicationControllers(ns);
  }
  std::vector<Ptr<ReplicaSet>> ListReplicaSets(std::string_view ns) const override {
    return c_->ListReplicaSets(ns);
  }
  std::vector<Ptr<StatefulSet>> ListStatefulSets(std::string_view ns) const override {
    return c_->ListStatefulSets(ns);
  }
  Ptr<PersistentVolumeClaim> GetPVC(std::string_view ns, std::string_view name) const override {
    return c_->GetPVC(ns, name);
  }
  Ptr<PersistentVolume> GetPV(std::string_view name) const override { return c_->GetPV(name); }
  std::vector<Ptr<PersistentVolume>> ListPVs() const override { return c_->ListPVs(); }
  Ptr<StorageClass> GetStorageClass(std::string_view name) const override {
    return c_->GetStorageClass(name);
  }
  Ptr<CSINode> GetCSINode(std::string_view node_name) const override {
    return c_->GetCSINode(node_name);
  }
  std::vector<Ptr<PodDisruptionBudget>> ListPDBs() const override { return c_->ListPDBs(); }
  Ptr<PriorityClass> GetPriorityClass(std::string_view name) const override {
    return c_->GetPriorityClass(name);
  }

  VoidResult Bind(const Pod& pod, std::string_view node) override { return c_->Bind(pod, node); }
  VoidResult DeletePod(const Pod& pod, std::function<void(const Error&)> on_failure) override {
    ++sync_deletes_;
    return c_->DeletePod(pod, std::move(on_failure));
  }
  void DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) override {
    std::lock_guard lock(mu_);
    held_.emplace_back(pod, std::move(done));
  }
  VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node) override {
    return c_->SetNominatedNodeName(pod, node);
  }
  VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) override {
    return c_->SetPodScheduledCondition(pod, cond);
  }
  VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv) override {
    return c_->BindVolume(pvc, pv);
  }
  VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc, std::string_view node) override {
    return c_->RequestProvisioning(pvc, node);
  }

  // Names of the pods whose deletion is held, oldest first.
  std::vector<std::string> Held() const {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& [pod, done] : held_) out.push_back(pod.metadata.name);
    return out;
  }
  // Answers the oldest held deletion: deletes the pod, or fails with `error`.
  void ReleaseOldest(const Error* error = nullptr) {
    std::pair<Pod, std::function<void(const Error*)>> next;
    {
      std::lock_guard lock(mu_);
      ASSERT_FALSE(held_.empty());
      next = std::move(held_.front());
      held_.pop_front();
    }
    if (!error) {
      VoidResult r = c_->DeletePod(next.first, nullptr);
      ASSERT_TRUE(r.ok()) << r.error().message;
    }
    next.second(error);
  }
  int sync_deletes() const { return sync_deletes_; }

 private:
  InMemoryCluster* c_;
  mutable std::mutex mu_;
  std::deque<std::pair<Pod, std::function<void(const Error*)>>> held_;
  int sync_deletes_ = 0;
};

class AsyncPreemptionTest : public ::testing::Test {
 protected:
  explicit AsyncPreemptionTest(std::string gates = "")
      : clock_(TimePoint{} + std::chrono::hours(1000)), client_(&cluster_) {
    std::vector<std::string> warnings;
    if (!gates.empty()) EXPECT_TRUE(gates_.Set(gates, &warnings).ok());
    registry_ = InTreeRegistry(gates_);
    config_ = config::DefaultConfiguration(registry_);
    SchedulerOptions so;
    so.config = &config_;
    so.registry = &registry_;
    so.client = &client_;
    so.clock = &clock_;
    so.inline_binding = true;
    auto s = Scheduler::Create(so);
    EXPECT_TRUE(s.ok()) << s.error().message;
    sched_ = std::move(s).value();
    cluster_.SetEventHandler(sched_.get());

    // n1 holds two low-priority pods; n2 has room for a small pod only.
    cluster_.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
    cluster_.AddNode(MakeNode().Name("n2").Capacity({{"cpu", "1"}, {"memory", "4Gi"}}).Obj());
    cluster_.AddPod(MakePod()
                        .Name("older")
                        .UID("older")
                        .Node("n1")
                        .Priority(0)
                        .StartTime(1000)
                        .Req({{"cpu", "1"}})
                        .Obj());
    cluster_.AddPod(MakePod()
                        .Name("newer")
                        .UID("newer")
                        .Node("n1")
                        .Priority(0)
                        .StartTime(2000)
                        .Req({{"cpu", "1"}})
                        .Obj());
  }

  std::string NodeOf(const std::string& name) {
    auto p = cluster_.GetPod("default", name);
    return p ? p->spec.node_name : "<gone>";
  }

  // Swaps in a fresh generation of the same configuration (new DefaultPreemption instances),
  // then frees the old one, as a reload between two cycles does.
  void Reload() {
    std::promise<ReloadResult> applied;
    ReloadRequest request;
    request.config = std::make_shared<const config::SchedulerConfiguration>(config_);
    request.done = [&applied](const ReloadResult& r) { applied.set_value(r); };
    sched_->RequestReload(std::move(request));
    EXPECT_FALSE(sched_->ScheduleOne(false));  // applies it; nothing is active
    auto result = applied.get_future();
    ASSERT_EQ(result.wait_for(std::chrono::seconds(0)), std::future_status::ready);
    ReloadResult r = result.get();
    ASSERT_FALSE(r.error.has_value()) << r.error->message;
    EXPECT_EQ(r.kept, std::vector<std::string>{"default-scheduler"});
    EXPECT_FALSE(sched_->ScheduleOne(false));  // frees the retired generation
  }

  // The preemptor fails its first attempt and preempts both pods on n1.
  void Preempt() {
    cluster_.AddPod(MakePod().Name("boss").UID("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
    ASSERT_TRUE(sched_->ScheduleOne(false));
    ASSERT_EQ(cluster_.GetPod("default", "boss")->status.nominated_node_name, "n1");
  }

  FakeClock clock_;
  InMemoryCluster cluster_;
  HeldDeletionsClient client_;
  config::FeatureGates gates_;
  Registry registry_;
  config::SchedulerConfiguration config_;
  std::unique_ptr<Scheduler> sched_;
};

// The first victims go at once, the last one only after them; the scheduling cycle goes on
// (another pod binds) while the preemptor, even activated, is not popped; once the last victim
// is gone the preemptor binds on the node it emptied.
TEST_F(AsyncPreemptionTest, CycleGoesOnAndThePreemptorWaitsForItsVictims) {
  Preempt();
  // Victims are deleted least important last: the newer pod waits for the older one.
  EXPECT_THAT(client_.Held(), ::testing::ElementsAre("older"));
  EXPECT_NE(cluster_.GetPod("default", "older"), nullptr);
  EXPECT_EQ(sched_->queue().counts().unschedulable, 1u);

  cluster_.AddPod(MakePod().Name("small").UID("small").Priority(0).Req({{"cpu", "1"}}).Obj());
  ASSERT_TRUE(sched_->ScheduleOne(false));
  EXPECT_EQ(NodeOf("small"), "n2");

  // Whatever moves it, the preemptor is kept out of the active queue meanwhile.
  sched_->queue().Activate(*cluster_.GetPod("default", "boss"));
  EXPECT_EQ(sched_->queue().counts().gated, 1u);
  EXPECT_FALSE(sched_->ScheduleOne(false));

  client_.ReleaseOldest();  // "older" goes; "newer"'s deletion starts
  EXPECT_EQ(cluster_.GetPod("default", "older"), nullptr);
  EXPECT_THAT(client_.Held(), ::testing::ElementsAre("newer"));
  EXPECT_EQ(sched_->queue().counts().gated, 1u);
  EXPECT_FALSE(sched_->ScheduleOne(false));

  // The last victim's deletion event lets the preemptor through, before the writer answers.
  client_.ReleaseOldest();
  EXPECT_EQ(sched_->queue().counts().gated, 0u);
  EXPECT_EQ(sched_->queue().counts().active, 1u);
  ASSERT_TRUE(sched_->ScheduleOne(false));
  EXPECT_EQ(NodeOf("boss"), "n1");
  EXPECT_EQ(client_.sync_deletes(), 0);
}

// A victim whose deletion fails: the last one is spared, and the preemptor is tried again at
// once (it would otherwise wait for a deletion event that will not come).
TEST_F(AsyncPreemptionTest, FailedDeletionSparesTheLastVictimAndActivatesThePreemptor) {
  Preempt();
  const Error refused{"admission webhook refused", ErrorCode::kUnknown};
  client_.ReleaseOldest(&refused);
  EXPECT_TRUE(client_.Held().empty());
  EXPECT_NE(cluster_.GetPod("default", "older"), nullptr);
  EXPECT_NE(cluster_.GetPod("default", "newer"), nullptr);
  EXPECT_EQ(sched_->queue().counts().active, 1u);
}

// The writer answers on a thread of its own (as the daemon's victim writers do) while the
// scheduling thread goes on with other pods: the preemptor still ends on the node it emptied,
// and the other pods keep off the room it is waiting for.
TEST_F(AsyncPreemptionTest, AnswersFromAnotherThreadWhileOtherPodsAreScheduled) {
  Preempt();
  std::thread writer([this] {
    client_.ReleaseOldest();
    client_.ReleaseOldest();
  });
  for (int i = 0; i < 5; ++i) {
    cluster_.AddPod(MakePod()
                        .Name("small-" + std::to_string(i))
                        .UID("small-" + std::to_string(i))
                        .Priority(0)
                        .Req({{"cpu", "100m"}})
                        .Obj());
    sched_->ScheduleOne(false);
  }
  writer.join();
  // The victims' deletions moved the preemptor on (NodeResourcesFit's hint), to wait out its
  // backoff.
  clock_.Advance(std::chrono::seconds(2));
  sched_->queue().FlushBackoffQCompleted();
  while (sched_->ScheduleOne(false)) {
  }
  EXPECT_EQ(NodeOf("boss"), "n1");
  for (int i = 0; i < 5; ++i) EXPECT_EQ(NodeOf("small-" + std::to_string(i)), "n2");
  EXPECT_EQ(sched_->queue().counts().gated, 0u);
}

// A reload replaces the profile whose DefaultPreemption started the preemption: the new
// instance still keeps the preemptor gated until its victims are gone, so no second preemption
// starts for it meanwhile.
TEST_F(AsyncPreemptionTest, AReloadKeepsThePreemptorGatedUntilItsVictimsGo) {
  Preempt();
  Reload();
  sched_->queue().Activate(*cluster_.GetPod("default", "boss"));
  EXPECT_EQ(sched_->queue().counts().gated, 1u);
  EXPECT_FALSE(sched_->ScheduleOne(false));
  EXPECT_THAT(client_.Held(), ::testing::ElementsAre("older"));

  client_.ReleaseOldest();
  EXPECT_THAT(client_.Held(), ::testing::ElementsAre("newer"));
  EXPECT_EQ(sched_->queue().counts().gated, 1u);
  EXPECT_FALSE(sched_->ScheduleOne(false));

  client_.ReleaseOldest();
  EXPECT_EQ(sched_->queue().counts().gated, 0u);
  ASSERT_TRUE(sched_->ScheduleOne(false));
  EXPECT_EQ(NodeOf("boss"), "n1");
  EXPECT_TRUE(client_.Held().empty());
}

// A deletion that fails after the reload freed the profile that asked for it: the report goes
// through the scheduler's services (the preemptor is tried again at once), not the freed Handle.
TEST_F(AsyncPreemptionTest, AFailureAfterAReloadActivatesThePreemptor) {
  Preempt();
  Reload();
  const Error refused{"admission webhook refused", ErrorCode::kUnknown};
  client_.ReleaseOldest(&refused);
  EXPECT_TRUE(client_.Held().empty());
  EXPECT_NE(cluster_.GetPod("default", "newer"), nullptr);
  EXPECT_EQ(sched_->queue().counts().active, 1u);
  EXPECT_EQ(sched_->queue().counts().gated, 0u);
}

// With the gate off, PostFilter asks for the deletions itself, one after another.
class SyncPreemptionTest : public AsyncPreemptionTest {
 protected:
  SyncPreemptionTest() : AsyncPreemptionTest("SchedulerAsyncPreemption=false") {}
};

TEST_F(SyncPreemptionTest, VictimsAreDeletedInsideTheCycle) {
  Preempt();
  EXPECT_TRUE(client_.Held().empty());
  EXPECT_EQ(client_.sync_deletes(), 2);
  EXPECT_EQ(cluster_.GetPod("default", "older"), nullptr);
  EXPECT_EQ(cluster_.GetPod("default", "newer"), nullptr);
}

}  // namespace
}  // namespace berth
