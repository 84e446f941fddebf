// SchedulerPopFromBackoffQ (KEP-5142), after kube-scheduler's backoff_queue_test.go and the
// PopFromBackoffQ cases of scheduling_queue_test.go: backoffQ ordered by 1 s windows then the
// QueueSort, popped when activeQ is empty, the error backoffQ apart.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "queue/scheduling_queue.h"
#include "queue/scheduling_queue_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using testing::MakePod;

class PopFromBackoffQTest : public ::testing::TestWithParam<bool> {
 public:
  // Aligned with the ordering window, as upstream's fake clock.
  PopFromBackoffQTest()
      : base_(TimePoint{} + std::chrono::hours(1000)),
        clock_(base_),
        queue_(&ByPriority, &GatesPreEnqueue, &clock_, seconds(1), seconds(10)) {
    queue_.SetPopFromBackoffQ(GetParam());
  }

  // Puts `name` in backoffQ after one attempt that failed at base + `at`, rejected by a plugin
  // (or, with `error`, failed with an error: the error backoffQ).
  void Backoff(const std::string& name, int priority, Duration at, bool error = false) {
    clock_.Set(base_ + at);
    queue_.Add(MakePod().Name(name).UID(name).Priority(priority).Info());
    auto qpi = queue_.Pop(false);
    ASSERT_TRUE(qpi.has_value());
    ASSERT_EQ(qpi->pod().metadata.name, name);
    if (!error) qpi->unschedulable_plugins.insert("plugin");
    queue_.AddUnschedulableIfNotPresent(*qpi, queue_.scheduling_cycle());
    // The plugin's event arrives at once: to backoffQ, since the pod is backing off.
    if (!error) queue_.MoveAllToActiveOrBackoffQueue();
    ASSERT_EQ(queue_.counts().unschedulable, 0u);
  }

  std::vector<std::string> DrainActive() {
    std::vector<std::string> out;
    while (queue_.counts().active > 0) {
      auto p = queue_.Pop(false);
      out.push_back(p->pod().metadata.name);
      queue_.Done(p->pod().metadata.uid);
    }
    return out;
  }

  TimePoint base_;
  FakeClock clock_;
  SchedulingQueue queue_;
};

using PopFromBackoffQOn = PopFromBackoffQTest;
using PopFromBackoffQOff = PopFromBackoffQTest;
INSTANTIATE_TEST_SUITE_P(Gate, PopFromBackoffQOn, ::testing::Values(true));
INSTANTIATE_TEST_SUITE_P(Gate, PopFromBackoffQOff, ::testing::Values(false));

// The pods of TestBackoffQueueOrdering (initial backoff 1 s, failed at the given offsets).
void AddOrderingPods(PopFromBackoffQTest* t) {
  t->Backoff("pod5", 1, -seconds(3));
  t->Backoff("pod3", 1, -seconds(2));
  t->Backoff("pod4", 2, -seconds(2));
  t->Backoff("pod2", 2, -seconds(2) + milliseconds(1));
  t->Backoff("pod1", 1, -seconds(1));
  t->Backoff("pod0", 1, seconds(0));
}

// "Pods with the same window are ordered by priority if PopFromBackoffQ is enabled": at the
// window's start, the pods whose expiry lies in an earlier window complete, window by window,
// each by priority; pod1 (expiry in the current window) and pod0 still wait.
TEST_P(PopFromBackoffQOn, TestBackoffQueueOrdering) {
  AddOrderingPods(this);
  clock_.Set(base_);
  EXPECT_EQ(queue_.counts().backoff, 6u);
  // activeQ is empty: Pop takes backoffQ's head in its order, completed or not.
  std::vector<std::string> popped;
  while (auto p = queue_.Pop(false)) popped.push_back(p->pod().metadata.name);
  EXPECT_THAT(popped, ElementsAre("pod5", "pod4", "pod2", "pod3", "pod1", "pod0"));
}

// popAllBackoffCompleted with the gate: whole windows before the current one complete.
TEST_P(PopFromBackoffQOn, TestBackoffQueue_popAllBackoffCompleted) {
  AddOrderingPods(this);
  clock_.Set(base_ + milliseconds(999));
  queue_.FlushBackoffQCompleted();
  EXPECT_EQ(queue_.counts().backoff, 2u);  // pod1's window is the current one; pod0's is next
  EXPECT_THAT(DrainActive(), ElementsAre("pod4", "pod2", "pod5", "pod3"));
  // pod1 completes when the next window starts.
  EXPECT_EQ(queue_.NextBackoffExpiry(), base_ + seconds(1));
  clock_.Set(base_ + seconds(1));
  queue_.FlushBackoffQCompleted();
  EXPECT_THAT(DrainActive(), ElementsAre("pod1"));
}

// "Pods priority doesn't matter if PopFromBackoffQ is disabled": exact expiry decides; Pop
// never takes a pod from backoffQ.
TEST_P(PopFromBackoffQOff, TestBackoffQueueOrdering) {
  AddOrderingPods(this);
  clock_.Set(base_ - seconds(1));
  EXPECT_FALSE(queue_.Pop(false).has_value());
  queue_.FlushBackoffQCompleted();
  // pod5 (expired 2 s ago) and pod3, pod4 (expiring now) are done; pod2, 1 ms later, is not.
  EXPECT_EQ(queue_.counts().backoff, 3u);
  EXPECT_EQ(queue_.NextBackoffExpiry(), base_ - seconds(1) + milliseconds(1));
  EXPECT_THAT(DrainActive(), ElementsAre("pod4", "pod5", "pod3"));
}

// Pods that failed with an error wait their backoff out even when activeQ is empty; pods
// rejected by plugins do not.
TEST_P(PopFromBackoffQOn, PodIsNotPoppedFromErrorBackoffQ) {
  Backoff("error", 10, seconds(0), /*error=*/true);
  Backoff("rejected", 1, seconds(0));
  EXPECT_EQ(queue_.counts().backoff, 2u);
  auto p = queue_.Pop(false);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->pod().metadata.name, "rejected");
  EXPECT_EQ(p->attempts, 2);
  EXPECT_FALSE(queue_.Pop(false).has_value());
  clock_.Set(base_ + seconds(2));
  queue_.FlushBackoffQCompleted();
  EXPECT_THAT(DrainActive(), ElementsAre("error"));
}

// activeQ first: backoffQ is only popped when activeQ is empty.
TEST_P(PopFromBackoffQOn, ActiveQIsPoppedBeforeBackoffQ) {
  Backoff("backing-off", 100, seconds(0));
  queue_.Add(MakePod().Name("active").UID("active").Priority(1).Info());
  EXPECT_EQ(queue_.Pop(false)->pod().metadata.name, "active");
  EXPECT_EQ(queue_.Pop(false)->pod().metadata.name, "backing-off");
}

// A Pop waiting on an empty queue takes a pod moved to backoffQ meanwhile.
TEST_P(PopFromBackoffQOn, BlockedPopIsWokenByBackoffQ) {
  queue_.Add(MakePod().Name("p").UID("p").Info());
  auto qpi = queue_.Pop(false);
  ASSERT_TRUE(qpi.has_value());
  auto waiting = std::async(std::launch::async, [this] { return queue_.Pop(true); });
  qpi->unschedulable_plugins.insert("plugin");
  queue_.AddUnschedulableIfNotPresent(*qpi, queue_.scheduling_cycle());
  queue_.MoveAllToActiveOrBackoffQueue();
  auto popped = waiting.get();
  ASSERT_TRUE(popped.has_value());
  EXPECT_EQ(popped->pod().metadata.name, "p");
}

// PreEnqueue runs when a pod enters backoffQ: a gated pod stays in the pool.
TEST_P(PopFromBackoffQOn, GatedPodDoesNotEnterBackoffQ) {
  queue_.Add(MakePod().Name("p").UID("p").Info());
  auto qpi = queue_.Pop(false);
  ASSERT_TRUE(qpi.has_value());
  qpi->unschedulable_plugins.insert("plugin");
  queue_.AddUnschedulableIfNotPresent(*qpi, queue_.scheduling_cycle());
  auto gated = MakePod().Name("p").UID("p").Obj();
  auto copy = std::make_shared<Pod>(*gated);
  copy->spec.scheduling_gates.push_back("example.com/wait");
  queue_.Update(PodInfo::Create(copy));  // a meaningful update: moved, and gated on the way
  EXPECT_EQ(queue_.counts().backoff, 0u);
  EXPECT_EQ(queue_.counts().gated, 1u);
  EXPECT_FALSE(queue_.Pop(false).has_value());
}

}  // namespace
}  // namespace berth
