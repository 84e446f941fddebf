#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/framework.h"
#include "runtime/framework_test_util.h"
#include "runtime/scheduler_metrics.h"
#include "testing/builders.h"

namespace berth {
namespace {

using framework_test::CallLog;
using framework_test::FakeBind;
using framework_test::FakePermit;
using framework_test::FakePreBind;
using framework_test::FakeReserve;
using framework_test::FrameworkTest;
using framework_test::GangPermit;
using framework_test::PluginMetricsRecorder;
using framework_test::Reg;
using framework_test::Set;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- Reserve

TEST_F(FrameworkTest, ReserveRunsInOrderAndUnreserveInReverse) {
  Register(Reg<FakeReserve>("R1", &log_, Status::Success()));
  Register(Reg<FakeReserve>("R2", &log_, Status::Success()));
  Register(Reg<FakeReserve>("R3", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.reserve = Set({{"R1"}, {"R2"}, {"R3"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_TRUE(fw->RunReservePluginsReserve(state, *pod_, "n1").IsSuccess());
  fw->RunReservePluginsUnreserve(state, *pod_, "n1");
  EXPECT_THAT(log_.calls(), ElementsAre("Reserve:R1:n1", "Reserve:R2:n1", "Reserve:R3:n1",
                                        "Unreserve:R3:n1", "Unreserve:R2:n1", "Unreserve:R1:n1"));
}

TEST_F(FrameworkTest, ReserveFailureStopsAtThatPlugin) {
  Register(Reg<FakeReserve>("R1", &log_, Status::Success()));
  Register(Reg<FakeReserve>("R2", &log_, Status::Unschedulable("full")));
  Register(Reg<FakeReserve>("R3", &log_, Status::Success()));
  Register(Reg<FakeReserve>("RE", &log_, Status::Error("db down")));
  config::Profile p = BaseProfile();
  p.plugins.reserve = Set({{"R1"}, {"R2"}, {"R3"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;
  Status s = fw->RunReservePluginsReserve(state, *pod_, "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "R2");
  EXPECT_EQ(s.Message(), "full");
  EXPECT_THAT(log_.calls(), ElementsAre("Reserve:R1:n1", "Reserve:R2:n1"));

  config::Profile q = BaseProfile();
  q.plugins.reserve = Set({{"RE"}});
  auto fw2 = Build(q);
  ASSERT_NE(fw2, nullptr);
  Status e = fw2->RunReservePluginsReserve(state, *pod_, "n1");
  EXPECT_TRUE(e.IsError());
  EXPECT_EQ(e.Message(), "running Reserve plugin \"RE\": db down");
  EXPECT_EQ(e.plugin(), "RE");
}

// ---------------------------------------------------------------- Permit

class PermitTest : public FrameworkTest {
 protected:
  PermitTest() {
    Register(Reg<FakePermit>("Ok", &log_, Status::Success(), Duration{}));
    Register(Reg<FakePermit>("Wait10", &log_, Status::Wait(), Duration{std::chrono::seconds(10)}));
    Register(Reg<FakePermit>("Wait20", &log_, Status::Wait(), Duration{std::chrono::seconds(20)}));
    Register(
        Reg<FakePermit>("WaitLong", &log_, Status::Wait(), Duration{std::chrono::minutes(20)}));
    Register(Reg<FakePermit>("No", &log_, Status::Unschedulable("not now"), Duration{}));
    Register(Reg<FakePermit>("Broken", &log_, Status::Error("kaput"), Duration{}));
    PluginRegistration gang;
    gang.name = "Gang";
    CallLog* log = &log_;
    gang.factory = [log](const PluginArgs*, Handle& h) -> Result<std::unique_ptr<Plugin>> {
      return std::unique_ptr<Plugin>(std::make_unique<GangPermit>("Gang", log, h));
    };
    Register(std::move(gang));
  }
  std::unique_ptr<Framework> WithPermits(std::vector<std::string> names) {
    config::Profile p = BaseProfile();
    for (const auto& n : names) p.plugins.permit.enabled.push_back({n});
    return Build(p);
  }
};

TEST_F(PermitTest, AllSuccessIsSuccess) {
  auto fw = WithPermits({"Ok"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsSuccess());
  EXPECT_EQ(fw->GetWaitingPod(pod_->pod->metadata.uid), nullptr);
  EXPECT_TRUE(fw->WaitOnPermit(*pod_->pod).IsSuccess());
}

TEST_F(PermitTest, RejectionAndErrorAreStamped) {
  auto fw = WithPermits({"Wait10", "No", "Ok"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  Status s = fw->RunPermitPlugins(state, *pod_, "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "No");
  EXPECT_EQ(s.Message(), "not now");
  EXPECT_THAT(log_.calls(), ElementsAre("Permit:Wait10", "Permit:No"));
  EXPECT_EQ(fw->GetWaitingPod(pod_->pod->metadata.uid), nullptr);

  auto fw2 = WithPermits({"Broken"});
  ASSERT_NE(fw2, nullptr);
  Status e = fw2->RunPermitPlugins(state, *pod_, "n1");
  EXPECT_TRUE(e.IsError());
  EXPECT_EQ(e.Message(), "running Permit plugin \"Broken\": kaput");
  EXPECT_EQ(e.plugin(), "Broken");
}

TEST_F(PermitTest, WaitingPodIsReleasedWhenEveryWaitingPluginAllows) {
  auto fw = WithPermits({"Wait10", "Ok", "Wait20"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  std::shared_ptr<WaitingPod> wp = fw->GetWaitingPod(pod_->pod->metadata.uid);
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(wp->pod().metadata.name, "p");
  EXPECT_THAT(wp->PendingPlugins(), UnorderedElementsAre("Wait10", "Wait20"));
  int seen = 0;
  fw->IterateOverWaitingPods([&](WaitingPod& w) {
    ++seen;
    EXPECT_EQ(w.pod().metadata.uid, pod_->pod->metadata.uid);
  });
  EXPECT_EQ(seen, 1);

  auto waiter = std::async(std::launch::async, [&] { return fw->WaitOnPermit(*pod_->pod); });
  wp->Allow("Wait10");
  EXPECT_THAT(wp->PendingPlugins(), ElementsAre("Wait20"));
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  wp->Allow("Wait20");
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(waiter.get().IsSuccess());
  // Once the wait is over, the pod is no longer waiting.
  EXPECT_EQ(fw->GetWaitingPod(pod_->pod->metadata.uid), nullptr);
}

TEST_F(PermitTest, PermitWaitIsReportedWithItsResult) {
  config::Profile p = BaseProfile();
  p.plugins.permit.enabled.push_back({"Wait10"});
  PluginMetricsRecorder sink;
  FrameworkServices services = Services();
  services.metrics = &sink;
  auto built = Framework::Create(p, registry_, services);
  ASSERT_TRUE(built.ok()) << built.error().message;
  Framework& fw = **built;
  CycleState state;
  // A pod that did not wait has no wait to report.
  EXPECT_TRUE(fw.WaitOnPermit(*pod_->pod).IsSuccess());
  EXPECT_THAT(sink.permit_waits(), IsEmpty());

  ASSERT_TRUE(fw.RunPermitPlugins(state, *pod_, "n1").IsWait());
  fw.GetWaitingPod(pod_->pod->metadata.uid)->Allow("Wait10");
  EXPECT_TRUE(fw.WaitOnPermit(*pod_->pod).IsSuccess());
  ASSERT_TRUE(fw.RunPermitPlugins(state, *pod_, "n1").IsWait());
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(fw.WaitOnPermit(*pod_->pod).code(), Code::kUnschedulable);
  auto waits = sink.permit_waits();
  ASSERT_EQ(waits.size(), 2u);
  // The clock stood still while each call waited (the deadline had passed before the second).
  EXPECT_EQ(waits[0].first, "Success");
  EXPECT_EQ(waits[1].first, "Unschedulable");
  EXPECT_EQ(waits[1].second, Duration::zero());
}

TEST_F(PermitTest, AnotherPluginAllowsThroughTheHandle) {
  auto fw = WithPermits({"Gang"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  PodInfoPtr first = MakePod().Name("first").Info();
  PodInfoPtr second = MakePod().Name("second").Info();
  PodInfoPtr last = MakePod().Name("last").Label("last", "yes").Info();
  ASSERT_TRUE(fw->RunPermitPlugins(state, *first, "n1").IsWait());
  ASSERT_TRUE(fw->RunPermitPlugins(state, *second, "n2").IsWait());
  int waiting = 0;
  fw->IterateOverWaitingPods([&](WaitingPod&) { ++waiting; });
  EXPECT_EQ(waiting, 2);
  EXPECT_TRUE(fw->RunPermitPlugins(state, *last, "n3").IsSuccess());
  EXPECT_THAT(fw->GetWaitingPod("uid-first")->PendingPlugins(), IsEmpty());
  EXPECT_TRUE(fw->WaitOnPermit(*first->pod).IsSuccess());
  EXPECT_TRUE(fw->WaitOnPermit(*second->pod).IsSuccess());
  EXPECT_EQ(fw->GetWaitingPod("uid-first"), nullptr);
}

TEST_F(PermitTest, RejectFromAnotherThreadFailsTheWait) {
  auto fw = WithPermits({"Wait10"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  auto waiter = std::async(std::launch::async, [&] { return fw->WaitOnPermit(*pod_->pod); });
  std::thread rejecter([&] { fw->GetWaitingPod("uid-p")->Reject("Wait10", "go away"); });
  rejecter.join();
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  Status s = waiter.get();
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "Wait10");
  EXPECT_EQ(s.Message(), "go away");
}

// A decided pod still lists the plugins it waited for; IsWaitingOnPermit tells it apart.
TEST_F(PermitTest, IsWaitingOnPermitUntilDecided) {
  auto fw = WithPermits({"Wait10", "Wait20"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_FALSE(fw->IsWaitingOnPermit("uid-p"));
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  EXPECT_TRUE(fw->IsWaitingOnPermit("uid-p"));
  fw->GetWaitingPod("uid-p")->Allow("Wait10");
  EXPECT_TRUE(fw->IsWaitingOnPermit("uid-p"));
  fw->GetWaitingPod("uid-p")->Reject("Wait20", "no");
  EXPECT_FALSE(fw->IsWaitingOnPermit("uid-p"));
  EXPECT_THAT(fw->GetWaitingPod("uid-p")->PendingPlugins(), ElementsAre("Wait20"));
  EXPECT_EQ(fw->WaitOnPermit(*pod_->pod).Message(), "no");

  PodInfoPtr other = MakePod().Name("other").Info();
  ASSERT_TRUE(fw->RunPermitPlugins(state, *other, "n1").IsWait());
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_TRUE(fw->IsWaitingOnPermit("uid-other"));  // expired only when expiry runs
  EXPECT_EQ(fw->ExpireWaitingPods(), 1);
  EXPECT_FALSE(fw->IsWaitingOnPermit("uid-other"));
}

TEST_F(PermitTest, RejectWaitingPodByUid) {
  auto fw = WithPermits({"Wait10"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_FALSE(fw->RejectWaitingPod("uid-p"));
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  EXPECT_TRUE(fw->RejectWaitingPod("uid-p"));
  Status s = fw->WaitOnPermit(*pod_->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "removed");
}

TEST_F(PermitTest, TimeoutOnTheInjectedClock) {
  auto fw = WithPermits({"Wait20", "Wait10"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  clock_.Advance(std::chrono::seconds(9));
  EXPECT_EQ(fw->ExpireWaitingPods(), 0);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(fw->ExpireWaitingPods(), 1);
  EXPECT_EQ(fw->ExpireWaitingPods(), 0);  // resolved once
  Status s = fw->WaitOnPermit(*pod_->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "Wait10");
  EXPECT_EQ(s.Message(), "rejected due to timeout after waiting 10s at plugin Wait10");
}

TEST_F(PermitTest, TimeoutIsCappedAtFifteenMinutes) {
  auto fw = WithPermits({"WaitLong"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  clock_.Advance(std::chrono::minutes(15) - std::chrono::seconds(1));
  EXPECT_EQ(fw->ExpireWaitingPods(), 0);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(fw->ExpireWaitingPods(), 1);
  EXPECT_EQ(fw->WaitOnPermit(*pod_->pod).Message(),
            "rejected due to timeout after waiting 15m0s at plugin WaitLong");
}

// ---------------------------------------------------------------- binding cycle

TEST_F(FrameworkTest, BindPluginsSkipToTheNext) {
  Register(Reg<FakeBind>("SkipBind", &log_, Status::Skip()));
  Register(Reg<FakeBind>("OkBind", &log_, Status::Success()));
  Register(Reg<FakeBind>("NeverBind", &log_, Status::Success()));
  Register(Reg<FakeBind>("BadBind", &log_, Status::Error("api down")));
  CycleState state;

  config::Profile p = BaseProfile();
  p.plugins.bind = Set({{"SkipBind"}, {"OkBind"}, {"NeverBind"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  EXPECT_TRUE(fw->RunBindPlugins(state, *pod_, "n1").IsSuccess());
  EXPECT_THAT(log_.calls(), ElementsAre("Bind:SkipBind", "Bind:OkBind"));

  config::Profile all_skip = BaseProfile();
  all_skip.plugins.bind = Set({{"SkipBind"}});
  auto fw2 = Build(all_skip);
  ASSERT_NE(fw2, nullptr);
  EXPECT_TRUE(fw2->RunBindPlugins(state, *pod_, "n1").IsSkip());

  config::Profile bad = BaseProfile();
  bad.plugins.bind = Set({{"SkipBind"}, {"BadBind"}, {"OkBind"}});
  auto fw3 = Build(bad);
  ASSERT_NE(fw3, nullptr);
  Status s = fw3->RunBindPlugins(state, *pod_, "n1");
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running Bind plugin \"BadBind\": api down");
  EXPECT_EQ(s.plugin(), "BadBind");
}

TEST_F(FrameworkTest, PreBindFailureIsStamped) {
  Register(Reg<FakePreBind>("PB1", &log_, Status::Success()));
  Register(Reg<FakePreBind>("PB2", &log_, Status::Error("volume stuck")));
  Register(Reg<FakePreBind>("PB3", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_bind = Set({{"PB1"}, {"PB2"}, {"PB3"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;
  Status s = fw->RunPreBindPlugins(state, *pod_, "n1");
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running PreBind plugin \"PB2\": volume stuck");
  EXPECT_EQ(s.plugin(), "PB2");
  EXPECT_THAT(log_.calls(), ElementsAre("PreBind:PB1", "PreBind:PB2"));
}

}  // namespace
}  // namespace berth
