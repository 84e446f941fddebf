#include "queue/scheduling_queue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "queue/scheduling_queue_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

std::vector<std::string> Names(const std::vector<PodInfoPtr>& pods) {
  std::vector<std::string> out;
  for (const auto& p : pods) out.push_back(p->pod->metadata.name);
  return out;
}

class SchedulingQueueTest : public ::testing::Test {
 protected:
  SchedulingQueueTest()
      : clock_(TimePoint{} + std::chrono::hours(1000)),
        queue_(&ByPriority, &GatesPreEnqueue, &clock_, seconds(1), seconds(10)) {}

  // Pops the head, which must be `name`, without blocking.
  QueuedPodInfo PopExpect(const std::string& name) {
    auto p = queue_.Pop(false);
    if (!p) {
      ADD_FAILURE() << "queue empty, expected " << name;
      return {};
    }
    EXPECT_EQ(p->pod().metadata.name, name);
    return *p;
  }

  std::vector<std::string> DrainActive() {
    std::vector<std::string> out;
    while (auto p = queue_.Pop(false)) {
      out.push_back(p->pod().metadata.name);
      queue_.Done(p->pod().metadata.uid);
    }
    return out;
  }

  // Fails `qpi` as rejected by `plugin` (empty: an error) in the current cycle.
  void Fail(QueuedPodInfo qpi, const std::string& plugin = "") {
    if (!plugin.empty()) qpi.unschedulable_plugins.insert(plugin);
    queue_.AddUnschedulableIfNotPresent(std::move(qpi), queue_.scheduling_cycle());
  }

  FakeClock clock_;
  SchedulingQueue queue_;
};

// Pods without a UID (manifests, tests) are told apart by namespace/name.
TEST_F(SchedulingQueueTest, PodsWithoutUidAreKeyedByNamespaceAndName) {
  auto without_uid = [](const std::string& ns, int priority) {
    Pod pod = *MakePod().Name("web").Namespace(ns).Priority(priority).Obj();
    pod.metadata.uid.clear();
    return PodInfo::Create(std::make_shared<const Pod>(std::move(pod)));
  };
  queue_.Add(without_uid("a", 1));
  queue_.Add(without_uid("b", 2));
  queue_.Add(without_uid("a", 3));  // already queued: ignored
  EXPECT_EQ(queue_.counts().active, 2u);
  queue_.Update(without_uid("a", 9));  // now ahead of b's
  queue_.Delete(*without_uid("b", 2)->pod);
  auto head = queue_.Pop(false);
  ASSERT_TRUE(head.has_value());
  EXPECT_EQ(head->pod().metadata.namespace_, "a");
  EXPECT_EQ(head->pod().Priority(), 9);
  EXPECT_FALSE(queue_.Pop(false).has_value());
}

TEST_F(SchedulingQueueTest, PopsByLessThenInsertionOrder) {
  queue_.Add(MakePod().Name("low").Priority(1).Info());
  queue_.Add(MakePod().Name("high-a").Priority(5).Info());
  queue_.Add(MakePod().Name("high-b").Priority(5).Info());
  queue_.Add(MakePod().Name("lowest").Priority(0).Info());
  // Same priority and same timestamp: insertion order decides.
  EXPECT_THAT(DrainActive(), ElementsAre("high-a", "high-b", "low", "lowest"));
}

TEST_F(SchedulingQueueTest, EqualPodsStayInInsertionOrder) {
  SchedulingQueue fifo([](const QueuedPodInfo&, const QueuedPodInfo&) { return false; }, nullptr,
                       &clock_, seconds(1), seconds(10));
  for (const char* n : {"c", "a", "d", "b"}) fifo.Add(MakePod().Name(n).Info());
  std::vector<std::string> order;
  while (auto p = fifo.Pop(false)) order.push_back(p->pod().metadata.name);
  EXPECT_THAT(order, ElementsAre("c", "a", "d", "b"));
}

TEST_F(SchedulingQueueTest, EarlierTimestampFirstAtEqualPriority) {
  queue_.Add(MakePod().Name("later").Info(), clock_.Now() + seconds(5));
  queue_.Add(MakePod().Name("earlier").Info(), clock_.Now());
  EXPECT_THAT(DrainActive(), ElementsAre("earlier", "later"));
}

TEST_F(SchedulingQueueTest, AddIgnoresQueuedAndInFlightPods) {
  queue_.Add(MakePod().Name("p").Info());
  queue_.Add(MakePod().Name("p").Info());
  EXPECT_EQ(queue_.counts().active, 1u);
  QueuedPodInfo qpi = PopExpect("p");
  EXPECT_EQ(qpi.attempts, 1);
  queue_.Add(MakePod().Name("p").Info());  // in flight
  EXPECT_EQ(queue_.counts().active, 0u);
  EXPECT_FALSE(queue_.Pop(false).has_value());
}

TEST_F(SchedulingQueueTest, PopCountsAttemptsAndCycles) {
  queue_.Add(MakePod().Name("p").Info());
  EXPECT_EQ(queue_.scheduling_cycle(), 0);
  QueuedPodInfo qpi = PopExpect("p");
  EXPECT_EQ(queue_.scheduling_cycle(), 1);
  EXPECT_EQ(qpi.attempts, 1);
  EXPECT_EQ(qpi.initial_attempt_timestamp, clock_.Now());
  const TimePoint first_entry = qpi.initial_attempt_timestamp;
  Fail(qpi);
  clock_.Advance(seconds(1));
  queue_.FlushBackoffQCompleted();
  QueuedPodInfo again = PopExpect("p");
  EXPECT_EQ(again.attempts, 2);
  EXPECT_EQ(queue_.scheduling_cycle(), 2);
  // The SLI start is the first time the pod entered activeQ.
  EXPECT_EQ(again.initial_attempt_timestamp, first_entry);
}

// initial × 2^(attempts-1), capped: 1, 2, 4, 8, 10, 10 seconds.
TEST_F(SchedulingQueueTest, BackoffDoublesUpToTheMaximum) {
  queue_.Add(MakePod().Name("p").Info());
  std::vector<int64_t> backoffs;
  for (int attempt = 1; attempt <= 6; ++attempt) {
    QueuedPodInfo qpi = PopExpect("p");
    ASSERT_EQ(qpi.attempts, attempt);
    Fail(qpi);  // error path: straight to backoffQ
    EXPECT_EQ(queue_.counts().backoff, 1u);
    auto expiry = queue_.NextBackoffExpiry();
    ASSERT_TRUE(expiry.has_value());
    backoffs.push_back(std::chrono::duration_cast<seconds>(*expiry - clock_.Now()).count());
    // Not a nanosecond early.
    clock_.Set(*expiry - std::chrono::nanoseconds(1));
    queue_.FlushBackoffQCompleted();
    EXPECT_EQ(queue_.counts().active, 0u);
    clock_.Set(*expiry);
    queue_.FlushBackoffQCompleted();
    EXPECT_EQ(queue_.counts().active, 1u);
    EXPECT_FALSE(queue_.NextBackoffExpiry().has_value());
  }
  EXPECT_THAT(backoffs, ElementsAre(1, 2, 4, 8, 10, 10));
}

TEST_F(SchedulingQueueTest, BackoffHonoursConfiguredBounds) {
  SchedulingQueue q(&ByPriority, nullptr, &clock_, seconds(3), seconds(7));
  q.Add(MakePod().Name("p").Info());
  std::vector<int64_t> backoffs;
  for (int attempt = 1; attempt <= 4; ++attempt) {
    auto qpi = q.Pop(false);
    ASSERT_TRUE(qpi.has_value());
    q.AddUnschedulableIfNotPresent(*qpi, q.scheduling_cycle());
    auto expiry = q.NextBackoffExpiry();
    ASSERT_TRUE(expiry.has_value());
    backoffs.push_back(std::chrono::duration_cast<seconds>(*expiry - clock_.Now()).count());
    clock_.Set(*expiry);
    q.FlushBackoffQCompleted();
  }
  EXPECT_THAT(backoffs, ElementsAre(3, 6, 7, 7));
}

TEST_F(SchedulingQueueTest, BackoffQueueFlushesInExpiryOrder) {
  queue_.Add(MakePod().Name("a").Info());
  queue_.Add(MakePod().Name("b").Info());
  QueuedPodInfo a = PopExpect("a");
  QueuedPodInfo b = PopExpect("b");
  // b has failed before: its backoff is longer.
  b.attempts = 3;  // 4 s
  Fail(a);         // 1 s
  Fail(b);
  EXPECT_EQ(queue_.counts().backoff, 2u);
  EXPECT_EQ(*queue_.NextBackoffExpiry(), clock_.Now() + seconds(1));
  clock_.Advance(seconds(2));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.counts().active, 1u);
  EXPECT_EQ(queue_.counts().backoff, 1u);
  EXPECT_EQ(*queue_.NextBackoffExpiry(), clock_.Now() + seconds(2));
  PopExpect("a");
  clock_.Advance(seconds(2));
  queue_.FlushBackoffQCompleted();
  PopExpect("b");
}

TEST_F(SchedulingQueueTest, RejectedPodWaitsInTheUnschedulablePool) {
  queue_.Add(MakePod().Name("p").Info());
  QueuedPodInfo qpi = PopExpect("p");
  Fail(qpi, "NodeResourcesFit");
  auto c = queue_.counts();
  EXPECT_EQ(c.unschedulable, 1u);
  EXPECT_EQ(c.backoff, 0u);
  EXPECT_EQ(c.active, 0u);
  // No backoff expiry drives it: only a cluster change or the leftover flush moves it.
  clock_.Advance(seconds(30));
  queue_.FlushBackoffQCompleted();
  EXPECT_FALSE(queue_.Pop(false).has_value());
}

TEST_F(SchedulingQueueTest, ErrorGoesToBackoffNotToTheUnschedulablePool) {
  queue_.Add(MakePod().Name("p").Info());
  QueuedPodInfo qpi = PopExpect("p");
  Fail(qpi);  // no rejector plugins
  auto c = queue_.counts();
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
}

TEST_F(SchedulingQueueTest, MoveRequestDuringTheCycleSendsTheRejectedPodToBackoff) {
  queue_.Add(MakePod().Name("p").Info());
  QueuedPodInfo qpi = PopExpect("p");
  const int64_t cycle = queue_.scheduling_cycle();
  queue_.MoveAllToActiveOrBackoffQueue();  // e.g. a node was added while p was scheduled
  queue_.AddUnschedulableIfNotPresent(
      [&] {
        QueuedPodInfo q = qpi;
        q.unschedulable_plugins.insert("NodeResourcesFit");
        return q;
      }(),
      cycle);
  auto c = queue_.counts();
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
}

TEST_F(SchedulingQueueTest, MoveRequestBeforeTheCycleDoesNotCount) {
  queue_.Add(MakePod().Name("p").Info());
  queue_.MoveAllToActiveOrBackoffQueue();  // before p's cycle started
  QueuedPodInfo qpi = PopExpect("p");
  Fail(qpi, "NodeResourcesFit");
  EXPECT_EQ(queue_.counts().unschedulable, 1u);
}

TEST_F(SchedulingQueueTest, PendingPluginSendsThePodBackToActive) {
  queue_.Add(MakePod().Name("p").Info());
  QueuedPodInfo qpi = PopExpect("p");
  qpi.pending_plugins.insert("SomePlugin");
  queue_.AddUnschedulableIfNotPresent(qpi, queue_.scheduling_cycle());
  EXPECT_EQ(queue_.counts().active, 1u);
}

TEST_F(SchedulingQueueTest, MoveAllSendsExpiredPodsToActiveAndOthersToBackoff) {
  queue_.Add(MakePod().Name("old").Info());
  queue_.Add(MakePod().Name("fresh").Info());
  QueuedPodInfo old_pod = PopExpect("old");
  Fail(old_pod, "X");  // backoff 1 s from now
  clock_.Advance(seconds(5));
  QueuedPodInfo fresh = PopExpect("fresh");
  Fail(fresh, "X");  // backoff 1 s from now (5 s later)
  EXPECT_EQ(queue_.counts().unschedulable, 2u);

  clock_.Advance(std::chrono::milliseconds(500));
  queue_.MoveAllToActiveOrBackoffQueue();
  auto c = queue_.counts();
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_EQ(c.active, 1u);
  EXPECT_EQ(c.backoff, 1u);
  PopExpect("old");
  clock_.Advance(std::chrono::milliseconds(500));
  queue_.FlushBackoffQCompleted();
  PopExpect("fresh");
}

// Decides by the plugin that rejected the pod: "Node" pods move on node events only, and
// "Pending" answers kImmediately.
class ByPluginDecider final : public RequeueDecider {
 public:
  EventInterest InterestOf(const QueuedPodInfo& pod) const override {
    EventInterest interest{};
    if (pod.unschedulable_plugins.count("Node")) interest[int(EventResource::kNode)] = kAllActions;
    if (pod.unschedulable_plugins.count("Any")) interest.fill(kAllActions);
    return interest;
  }
  Strategy Decide(const QueuedPodInfo& pod, const ClusterEvent& event, const EventObject&,
                  const EventObject& new_object) const override {
    ++calls;
    if (event.resource == EventResource::kWildCard) return Strategy::kAfterBackoff;
    const Node* node = ObjectAs<Node>(new_object);
    // A hint that looks at the object: only nodes named like the pod help it.
    if (node && node->metadata.name != pod.pod().metadata.name) return Strategy::kSkip;
    return Strategy::kAfterBackoff;
  }
  mutable int calls = 0;
};

Ptr<Node> NodeNamed(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->metadata.name = name;
  return n;
}

TEST_F(SchedulingQueueTest, EventsMoveOnlyThePodsTheirHintsSelect) {
  ByPluginDecider decider;
  queue_.SetRequeueDecider(&decider);
  queue_.Add(MakePod().Name("a").Info());
  queue_.Add(MakePod().Name("b").Info());
  queue_.Add(MakePod().Name("c").Info());
  Fail(PopExpect("a"), "Node");
  Fail(PopExpect("b"), "Node");
  Fail(PopExpect("c"), "Other");  // no interest in anything
  clock_.Advance(seconds(2));

  // Outside every pod's interest: the decider is not even asked.
  queue_.OnClusterEvent({EventResource::kService, kAdd}, {}, {});
  EXPECT_EQ(decider.calls, 0);
  EXPECT_EQ(queue_.counts().unschedulable, 3u);

  queue_.OnClusterEvent({EventResource::kNode, kAdd}, {}, NodeNamed("b"));
  EXPECT_EQ(decider.calls, 2);  // a and b, not c
  EXPECT_EQ(queue_.counts().unschedulable, 2u);
  EXPECT_THAT(DrainActive(), ElementsAre("b"));

  // A wildcard moves everyone.
  queue_.MoveAllToActiveOrBackoffQueue();
  EXPECT_EQ(queue_.counts().unschedulable, 0u);
}

TEST_F(SchedulingQueueTest, EventsDuringTheCycleAreReplayedThroughTheHints) {
  ByPluginDecider decider;
  queue_.SetRequeueDecider(&decider);
  queue_.Add(MakePod().Name("p").Info());
  queue_.Add(MakePod().Name("q").Info());

  // A node event that does not help p arrives while p is scheduled: p waits in the pool.
  QueuedPodInfo p = PopExpect("p");
  queue_.OnClusterEvent({EventResource::kNode, kAdd}, {}, NodeNamed("other"));
  Fail(p, "Node");
  EXPECT_EQ(queue_.counts().unschedulable, 1u);

  // One that helps q arrives while q is scheduled: q goes to backoffQ instead of the pool.
  QueuedPodInfo q = PopExpect("q");
  queue_.OnClusterEvent({EventResource::kNode, kAdd}, {}, NodeNamed("q"));
  Fail(q, "Node");
  auto c = queue_.counts();
  EXPECT_EQ(c.unschedulable, 1u);
  EXPECT_EQ(c.backoff, 1u);
}

// An event is kept while a pod in flight has not seen it, and dropped once the last such pod
// is done, in whichever order the pods finish.
TEST_F(SchedulingQueueTest, InFlightEventsLastAsLongAsThePodsThatMissedThem) {
  for (bool first_popped_finishes_first : {true, false}) {
    SCOPED_TRACE(first_popped_finishes_first);
    queue_.Add(MakePod().Name("a").Info());
    queue_.Add(MakePod().Name("b").Info());
    QueuedPodInfo a = PopExpect("a");
    queue_.OnClusterEvent({EventResource::kNode, kAdd}, {}, NodeNamed("x"));  // a missed it
    QueuedPodInfo b = PopExpect("b");
    queue_.OnClusterEvent({EventResource::kNode, kAdd}, {}, NodeNamed("y"));  // both did
    EXPECT_EQ(queue_.in_flight_events(), 2u);
    if (first_popped_finishes_first) {
      queue_.Done(a.pod().metadata.uid);
      EXPECT_EQ(queue_.in_flight_events(), 1u);  // b still needs y
      queue_.Done(b.pod().metadata.uid);
    } else {
      queue_.Done(b.pod().metadata.uid);
      EXPECT_EQ(queue_.in_flight_events(), 2u);  // a still needs x and y
      queue_.Done(a.pod().metadata.uid);
    }
    EXPECT_EQ(queue_.in_flight_events(), 0u);
  }
}

TEST_F(SchedulingQueueTest, IncomingPodsAreReportedByQueueAndEvent) {
  ByPluginDecider decider;
  queue_.SetRequeueDecider(&decider);
  std::vector<std::string> incoming;
  queue_.SetIncomingPodHook([&](std::string_view queue, std::string_view event) {
    incoming.push_back(std::string(queue) + "/" + std::string(event));
  });
  queue_.Add(MakePod().Name("a").Info());
  queue_.Add(MakePod().Name("g").SchedulingGate("example.com/wait").Info());
  Fail(PopExpect("a"), "Node");
  queue_.OnClusterEvent({EventResource::kNode, kAdd}, {}, NodeNamed("a"));
  clock_.Advance(seconds(2));
  queue_.FlushBackoffQCompleted();
  EXPECT_THAT(incoming,
              ElementsAre("active/PodAdd", "gated/PodAdd", "unschedulable/ScheduleAttemptFailure",
                          "backoff/NodeAdd", "active/BackoffComplete"));
}

TEST_F(SchedulingQueueTest, UnschedulablePodsAreCountedByPlugin) {
  queue_.Add(MakePod().Name("a").Info());
  queue_.Add(MakePod().Name("b").Info());
  queue_.Add(MakePod().Name("g").SchedulingGate("example.com/wait").Info());
  QueuedPodInfo a = PopExpect("a");
  a.unschedulable_plugins = {"NodeResourcesFit", "TaintToleration"};
  queue_.AddUnschedulableIfNotPresent(a, queue_.scheduling_cycle());
  Fail(PopExpect("b"), "NodeResourcesFit");
  std::vector<std::string> counts;
  for (const auto& c : queue_.UnschedulableByPlugin())
    counts.push_back(c.plugin + "/" + c.profile + "=" + std::to_string(c.pods));
  EXPECT_THAT(counts, ElementsAre("NodeResourcesFit/default-scheduler=2",
                                  "SchedulingGates/default-scheduler=1",
                                  "TaintToleration/default-scheduler=1"));
}

TEST(EventLabelTest, NamesEventsAsKubeSchedulerDoes) {
  EXPECT_EQ(EventLabel({EventResource::kNode, kAdd}), "NodeAdd");
  EXPECT_EQ(EventLabel({EventResource::kNode, kUpdateNodeTaint}), "NodeTaintChange");
  EXPECT_EQ(EventLabel({EventResource::kPod, kDelete}), "AssignedPodDelete");
  EXPECT_EQ(EventLabel({EventResource::kPod, kUpdatePodLabel}), "PodLabelChange");
  EXPECT_EQ(EventLabel({EventResource::kPersistentVolumeClaim, kUpdateOther}),
            "PersistentVolumeClaimUpdate");
  EXPECT_EQ(EventLabel({EventResource::kWildCard, kAllActions}), "WildCard");
}

TEST_F(SchedulingQueueTest, LeftoverFlushMovesPodsThatWaitedTooLong) {
  queue_.Add(MakePod().Name("p").Info());
  Fail(PopExpect("p"), "X");
  const auto max_wait = std::chrono::minutes(5);
  clock_.Advance(max_wait);
  queue_.FlushUnschedulableLeftover(max_wait);  // exactly 5 min: not longer
  EXPECT_EQ(queue_.counts().unschedulable, 1u);
  clock_.Advance(seconds(1));
  queue_.FlushUnschedulableLeftover(max_wait);
  EXPECT_EQ(queue_.counts().unschedulable, 0u);
  EXPECT_THAT(DrainActive(), ElementsAre("p"));
}

// A leftover flush that moved pods is a move request like any other: a pod rejected in the
// cycle it overlapped goes to backoffQ, not back to the pool.
TEST_F(SchedulingQueueTest, LeftoverFlushCountsAsAMoveRequest) {
  queue_.Add(MakePod().Name("old").Info());
  queue_.Add(MakePod().Name("current").Info());
  Fail(PopExpect("old"), "X");
  clock_.Advance(std::chrono::minutes(6));
  QueuedPodInfo current = PopExpect("current");
  const int64_t cycle = queue_.scheduling_cycle();
  queue_.FlushUnschedulableLeftover(std::chrono::minutes(5));
  current.unschedulable_plugins.insert("X");
  queue_.AddUnschedulableIfNotPresent(current, cycle);
  auto c = queue_.counts();
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_EQ(c.active, 1u);   // "old", its backoff long over
  EXPECT_EQ(c.backoff, 1u);  // "current"
}

TEST_F(SchedulingQueueTest, ActivateSkipsTheUnschedulablePoolAndTheBackoff) {
  std::vector<std::string> incoming;
  queue_.SetIncomingPodHook([&](std::string_view q, std::string_view ev) {
    incoming.push_back(std::string(q) + "/" + std::string(ev));
  });
  queue_.Add(MakePod().Name("rejected").Info());
  queue_.Add(MakePod().Name("failed").Info());
  Fail(PopExpect("rejected"), "NodeResourcesFit");
  Fail(PopExpect("failed"));  // an error: backoff
  ASSERT_EQ(queue_.counts().unschedulable, 1u);
  ASSERT_EQ(queue_.counts().backoff, 1u);

  incoming.clear();
  queue_.Activate(*MakePod().Name("rejected").Info()->pod);
  queue_.Activate(*MakePod().Name("failed").Info()->pod);
  queue_.Activate(*MakePod().Name("unknown").Info()->pod);  // not queued: ignored
  auto c = queue_.counts();
  EXPECT_EQ(c.active, 2u);
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_EQ(c.backoff, 0u);
  EXPECT_THAT(incoming, ElementsAre("active/ForceActivate", "active/ForceActivate"));
  // Activating an active pod again changes nothing.
  queue_.Activate(*MakePod().Name("rejected").Info()->pod);
  EXPECT_THAT(DrainActive(), UnorderedElementsAre("rejected", "failed"));
}

TEST_F(SchedulingQueueTest, ActivateDuringTheCycleSendsTheRejectedPodToActive) {
  queue_.Add(MakePod().Name("p").Info());
  QueuedPodInfo qpi = PopExpect("p");
  queue_.Activate(qpi.pod());  // in flight: remembered
  Fail(qpi, "NodeResourcesFit");
  EXPECT_EQ(queue_.counts().active, 1u);
  EXPECT_EQ(queue_.counts().unschedulable, 0u);
  // Remembered once only: the next rejection waits in the pool.
  Fail(PopExpect("p"), "NodeResourcesFit");
  EXPECT_EQ(queue_.counts().unschedulable, 1u);
  // A pod whose attempt ended (bound) forgets the request.
  queue_.Add(MakePod().Name("q").Info());
  QueuedPodInfo q = PopExpect("q");
  queue_.Activate(q.pod());
  queue_.Done(q.pod().metadata.uid);
  queue_.Add(MakePod().Name("q").Info());
  Fail(PopExpect("q"), "NodeResourcesFit");
  EXPECT_EQ(queue_.counts().unschedulable, 2u);
}

TEST_F(SchedulingQueueTest, ActivateLeavesAGatedPodGated) {
  queue_.Add(MakePod().Name("g").SchedulingGate("example.com/gate").Info());
  queue_.Activate(*MakePod().Name("g").SchedulingGate("example.com/gate").Info()->pod);
  EXPECT_EQ(queue_.counts().gated, 1u);
  EXPECT_FALSE(queue_.Pop(false).has_value());
}

TEST_F(SchedulingQueueTest, GatedPodsStayOutOfActiveUntilTheGateIsRemoved) {
  auto gated = MakePod().Name("g").SchedulingGate("example.com/gate");
  queue_.Add(gated.Info());
  queue_.Add(MakePod().Name("free").Info());
  auto c = queue_.counts();
  EXPECT_EQ(c.gated, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_EQ(c.active, 1u);
  EXPECT_THAT(DrainActive(), ElementsAre("free"));

  // Cluster changes and the leftover flush do not release a gated pod.
  clock_.Advance(std::chrono::minutes(10));
  queue_.MoveAllToActiveOrBackoffQueue();
  queue_.FlushUnschedulableLeftover(std::chrono::minutes(5));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.counts().gated, 1u);
  EXPECT_FALSE(queue_.Pop(false).has_value());

  // An update that keeps the gate keeps it gated.
  queue_.Update(MakePod().Name("g").SchedulingGate("example.com/gate").Label("x", "y").Info());
  EXPECT_EQ(queue_.counts().gated, 1u);
  EXPECT_FALSE(queue_.Pop(false).has_value());

  // Removing the gate lets it in at once (it never failed, so there is no backoff).
  queue_.Update(MakePod().Name("g").Label("x", "y").Info());
  c = queue_.counts();
  EXPECT_EQ(c.gated, 0u);
  EXPECT_EQ(c.active, 1u);
  QueuedPodInfo qpi = PopExpect("g");
  EXPECT_EQ(qpi.attempts, 1);
  EXPECT_TRUE(qpi.gating_plugin.empty());
}

TEST_F(SchedulingQueueTest, UpdateOfAnUnschedulablePod) {
  queue_.Add(MakePod().Name("p").Info());
  Fail(PopExpect("p"), "X");
  clock_.Advance(seconds(3));

  // A status-only change does not move it.
  queue_.Update(MakePod().Name("p").NominatedNodeName("n1").Info());
  EXPECT_EQ(queue_.counts().unschedulable, 1u);

  // A spec change may make it schedulable: it moves (backoff already over -> active).
  queue_.Update(MakePod().Name("p").Label("tier", "web").Info());
  EXPECT_EQ(queue_.counts().unschedulable, 0u);
  QueuedPodInfo qpi = PopExpect("p");
  EXPECT_EQ(qpi.pod().metadata.labels.at("tier"), "web");
}

TEST_F(SchedulingQueueTest, UpdateKeepsActiveAndBackoffPodsWhereTheyAre) {
  queue_.Add(MakePod().Name("backing-off").Info());
  queue_.Add(MakePod().Name("active").Info());
  Fail(PopExpect("backing-off"));  // error: backoffQ
  queue_.Update(MakePod().Name("backing-off").Label("v", "2").Info());
  queue_.Update(MakePod().Name("active").Label("v", "2").Info());
  auto c = queue_.counts();
  EXPECT_EQ(c.active, 1u);
  EXPECT_EQ(c.backoff, 1u);
  QueuedPodInfo qpi = PopExpect("active");
  EXPECT_EQ(qpi.pod().metadata.labels.at("v"), "2");
}

TEST_F(SchedulingQueueTest, DeleteRemovesThePodFromEverySubQueue) {
  queue_.Add(MakePod().Name("backoff").Info());
  queue_.Add(MakePod().Name("unsched").Info());
  Fail(PopExpect("backoff"));
  Fail(PopExpect("unsched"), "X");
  queue_.Add(MakePod().Name("active").Info());
  queue_.Add(MakePod().Name("gated").SchedulingGate("g").Info());
  queue_.Add(MakePod().Name("nominated").NominatedNodeName("n1").Info());
  auto c = queue_.counts();
  EXPECT_EQ(c.active, 2u);  // "active" and "nominated"
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.unschedulable, 1u);
  EXPECT_EQ(c.gated, 1u);
  EXPECT_TRUE(queue_.HasNominatedPods());

  for (const char* n : {"active", "backoff", "unsched", "gated", "nominated"})
    queue_.Delete(*MakePod().Name(n).Obj());
  c = queue_.counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated, 0u);
  EXPECT_FALSE(queue_.HasNominatedPods());
  EXPECT_THAT(queue_.NominatedPodsForNode("n1"), IsEmpty());
  EXPECT_FALSE(queue_.NextBackoffExpiry().has_value());
  // A deleted pod can come back as a new pod.
  queue_.Add(MakePod().Name("unsched").Info());
  EXPECT_EQ(queue_.counts().active, 1u);
}

TEST_F(SchedulingQueueTest, NominatorFollowsAddsUpdatesAndDeletes) {
  EXPECT_FALSE(queue_.HasNominatedPods());
  // A pending pod that already carries status.nominatedNodeName.
  queue_.Add(MakePod().Name("a").Priority(5).NominatedNodeName("n1").Info());
  EXPECT_TRUE(queue_.HasNominatedPods());
  EXPECT_THAT(Names(queue_.NominatedPodsForNode("n1")), ElementsAre("a"));

  // A fresh nomination (preemption) moves it.
  queue_.AddNominatedPod(MakePod().Name("a").Priority(5).Info(), "n2");
  EXPECT_THAT(queue_.NominatedPodsForNode("n1"), IsEmpty());
  EXPECT_THAT(Names(queue_.NominatedPodsForNode("n2")), ElementsAre("a"));

  queue_.AddNominatedPod(MakePod().Name("b").Info(), "n2");
  EXPECT_THAT(Names(queue_.NominatedPodsForNode("n2")), UnorderedElementsAre("a", "b"));
  EXPECT_THAT(Names(queue_.NominatedPods("n2")), UnorderedElementsAre("a", "b"));

  // The pod object's nominatedNodeName is followed on update; clearing it un-nominates.
  queue_.Update(MakePod().Name("b").NominatedNodeName("n3").Info());
  EXPECT_THAT(Names(queue_.NominatedPodsForNode("n3")), ElementsAre("b"));
  queue_.Update(MakePod().Name("b").Info());
  EXPECT_THAT(queue_.NominatedPodsForNode("n3"), IsEmpty());
  EXPECT_THAT(Names(queue_.NominatedPodsForNode("n2")), ElementsAre("a"));

  queue_.DeleteNominatedPodIfExists(*MakePod().Name("a").Obj());
  queue_.DeleteNominatedPodIfExists(*MakePod().Name("never").Obj());
  EXPECT_FALSE(queue_.HasNominatedPods());
  EXPECT_THAT(queue_.NominatedPodsForNode("n2"), IsEmpty());
}

TEST_F(SchedulingQueueTest, PopBlocksUntilAPodArrives) {
  auto popped = std::async(std::launch::async, [&] { return queue_.Pop(true); });
  EXPECT_EQ(popped.wait_for(std::chrono::milliseconds(30)), std::future_status::timeout);
  queue_.Add(MakePod().Name("late").Info());
  ASSERT_EQ(popped.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  auto p = popped.get();
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pod().metadata.name, "late");
}

TEST_F(SchedulingQueueTest, CloseWakesABlockedPop) {
  auto popped = std::async(std::launch::async, [&] { return queue_.Pop(true); });
  EXPECT_EQ(popped.wait_for(std::chrono::milliseconds(30)), std::future_status::timeout);
  queue_.Close();
  ASSERT_EQ(popped.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_FALSE(popped.get().has_value());
  // Closed: Pop never blocks again.
  EXPECT_FALSE(queue_.Pop(true).has_value());
}

TEST_F(SchedulingQueueTest, WakeEndsOneBlockingPopWithoutClosing) {
  // Woken before it waits: the next blocking Pop returns at once, the one after waits again.
  queue_.Wake();
  EXPECT_FALSE(queue_.Pop(true).has_value());
  EXPECT_FALSE(queue_.closed());
  // A pod waiting is popped whether or not a wake is pending.
  queue_.Wake();
  queue_.Add(MakePod().Name("a").Info());
  auto a = queue_.Pop(true);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->pod().metadata.name, "a");
  EXPECT_FALSE(queue_.Pop(true).has_value());  // the pending wake
  queue_.Add(MakePod().Name("b").Info());
  EXPECT_EQ(queue_.Pop(true)->pod().metadata.name, "b");
}

// A change outside the ClusterEvent enum (a DRA object) moves only the pods its decision picks.
TEST_F(SchedulingQueueTest, OtherEventMovesThePodsItsDecisionPicks) {
  queue_.Add(MakePod().Name("a").Info());
  queue_.Add(MakePod().Name("b").Info());
  QueuedPodInfo a = PopExpect("a");
  QueuedPodInfo b = PopExpect("b");
  Fail(a, "DynamicResources");
  Fail(b, "DynamicResources");
  ASSERT_EQ(queue_.counts().unschedulable, 2u);
  queue_.OnOtherEvent("ResourceClaimChange", [](const QueuedPodInfo& p) {
    return p.pod().metadata.name == "b" ? RequeueDecider::Strategy::kImmediately
                                        : RequeueDecider::Strategy::kSkip;
  });
  EXPECT_EQ(queue_.counts().unschedulable, 1u);
  PopExpect("b");
  EXPECT_FALSE(queue_.Pop(false).has_value());
}

// A gated pod is let through PreEnqueue again only when its gating plugin's hints say the event
// may help (DecideGated), not on every event the plugin registered.
class GatedByNodeDecider final : public RequeueDecider {
 public:
  EventInterest InterestOf(const QueuedPodInfo&) const override { return {}; }
  Strategy Decide(const QueuedPodInfo&, const ClusterEvent&, const EventObject&,
                  const EventObject&) const override {
    return Strategy::kSkip;
  }
  EventInterest GatingInterestOf(const QueuedPodInfo&) const override {
    EventInterest interest{};
    interest[int(EventResource::kNode)] = kAllActions;
    return interest;
  }
  Strategy DecideGated(const QueuedPodInfo&, const ClusterEvent&, const EventObject&,
                       const EventObject& new_object) const override {
    const Node* node = ObjectAs<Node>(new_object);
    return node && node->metadata.name == "opens" ? Strategy::kImmediately : Strategy::kSkip;
  }
};

TEST(SchedulingQueueGatedHintTest, AGatedPodSkipsPreEnqueueWhenTheHintSaysSo) {
  FakeClock clock{TimePoint{std::chrono::seconds(1000)}};
  int pre_enqueue_calls = 0;
  bool open = false;
  SchedulingQueue queue(
      ByPriority,
      [&](const Pod&) {
        ++pre_enqueue_calls;
        if (open) return Status::Success();
        Status s = Status::Unresolvable("waiting");
        s.WithPlugin("Gate");
        return s;
      },
      &clock, std::chrono::seconds(1), std::chrono::seconds(10));
  GatedByNodeDecider decider;
  queue.SetRequeueDecider(&decider);
  queue.Add(MakePod().Name("p").Info());
  ASSERT_EQ(queue.counts().gated, 1u);
  ASSERT_EQ(pre_enqueue_calls, 1);
  auto node = [](const char* name) {
    auto n = std::make_shared<Node>();
    n->metadata.name = name;
    return n;
  };
  queue.OnClusterEvent({EventResource::kNode, kAdd}, {}, node("other"));
  EXPECT_EQ(pre_enqueue_calls, 1);  // the hint said no: PreEnqueue is not asked again
  EXPECT_EQ(queue.counts().gated, 1u);
  open = true;
  queue.OnClusterEvent({EventResource::kNode, kAdd}, {}, node("opens"));
  EXPECT_EQ(pre_enqueue_calls, 2);
  EXPECT_EQ(queue.counts().active, 1u);
}

TEST(SchedulingQueueGroupTest, PopGroupMembersTakesTheGroupsQueuedMembersButNotGatedOnes) {
  FakeClock clock{TimePoint{std::chrono::seconds(1000)}};
  SchedulingQueue queue(ByPriority, GatesPreEnqueue, &clock, std::chrono::seconds(1),
                        std::chrono::seconds(10));
  auto member = [](const char* name) { return MakePod().Name(name).SchedulingGroup("pg"); };
  queue.Add(member("a").Info());
  queue.Add(member("b").Info());
  queue.Add(member("c").Info());
  queue.Add(member("gated").SchedulingGate("example.com/wait").Info());
  queue.Add(MakePod().Name("other").SchedulingGroup("other-pg").Info());
  queue.Add(MakePod().Name("plain").Info());
  // "b" and "c" failed earlier and wait in the pool; "d" arrives in activeQ.
  std::optional<QueuedPodInfo> first = queue.Pop(false);
  ASSERT_TRUE(first);
  ASSERT_EQ(first->pod().metadata.name, "a");
  for (const char* name : {"b", "c"}) {
    std::optional<QueuedPodInfo> q = queue.Pop(false);
    ASSERT_TRUE(q);
    ASSERT_EQ(q->pod().metadata.name, name);
    q->unschedulable_plugins.insert("NodeResourcesFit");
    queue.AddUnschedulableIfNotPresent(*q, queue.scheduling_cycle());
  }
  queue.Add(member("d").Info());
  ASSERT_EQ(queue.counts().unschedulable, 2u);
  const int64_t cycle = queue.scheduling_cycle();
  std::vector<QueuedPodInfo> rest = queue.PopGroupMembers(first->pod());
  std::vector<std::string> names;
  for (const auto& q : rest) names.push_back(q.pod().metadata.name);
  EXPECT_THAT(names, UnorderedElementsAre("b", "c", "d"));
  for (const auto& q : rest) EXPECT_GE(q.attempts, 1) << q.pod().metadata.name;
  EXPECT_EQ(queue.scheduling_cycle(), cycle);  // one cycle for the group
  SchedulingQueue::Counts counts = queue.counts();
  EXPECT_EQ(counts.gated, 1u);
  EXPECT_EQ(counts.unschedulable, 0u);
  EXPECT_EQ(counts.active, 2u);  // "other" and "plain"
  // In flight: a second pull finds nothing, and they come back through the usual door.
  EXPECT_TRUE(queue.PopGroupMembers(first->pod()).empty());
  queue.AddUnschedulableIfNotPresent(rest[0], queue.scheduling_cycle());
  EXPECT_EQ(queue.counts().unschedulable + queue.counts().backoff, 1u);
}

}  // namespace
}  // namespace berth
