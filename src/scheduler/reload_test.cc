// Reloading the configuration: the request is handed to the scheduling loop and applied between
// two cycles; pods in flight finish under the profile that scheduled them; a configuration that
// does not build is refused and the running one stays; profiles come and go without a relist.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <future>
#include <map>
#include <mutex>
#include <thread>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;

// Which plugin instance pre-bound which pod, and how many instances of each name live.
struct Recorder {
  std::mutex mu;
  std::condition_variable cv;
  std::map<std::string, std::string> prebound_by;  // pod name -> plugin name
  std::map<std::string, int> alive;                // plugin name -> instances

  void PreBound(const std::string& pod, const std::string& plugin) {
    {
      std::lock_guard lock(mu);
      prebound_by[pod] = plugin;
    }
    cv.notify_all();
  }
  std::string PreboundBy(const std::string& pod) {
    std::lock_guard lock(mu);
    auto it = prebound_by.find(pod);
    return it == prebound_by.end() ? "" : it->second;
  }
  int Alive(const std::string& plugin) {
    std::lock_guard lock(mu);
    return alive[plugin];
  }
};

// PreBind records its name for the pod (tests wait on the recorder for it).
class Stamp final : public PreBindPlugin {
 public:
  Stamp(std::string name, Recorder& recorder) : name_(std::move(name)), recorder_(recorder) {
    std::lock_guard lock(recorder_.mu);
    ++recorder_.alive[name_];
  }
  ~Stamp() override {
    std::lock_guard lock(recorder_.mu);
    --recorder_.alive[name_];
  }
  std::string_view Name() const override { return name_; }
  Status PreBind(CycleState&, const PodInfo& pod, const std::string&) override {
    recorder_.PreBound(pod->metadata.name, name_);
    return Status::Success();
  }

 private:
  const std::string name_;
  Recorder& recorder_;
};

// Pods labelled hold=yes wait at Permit (ten minutes at most) until a test allows them.
class Hold final : public PermitPlugin {
 public:
  std::string_view Name() const override { return "Hold"; }
  PermitDecision Permit(CycleState&, const PodInfo& pod, const std::string&) override {
    if (!pod->metadata.labels.count("hold")) return {Status::Success(), {}};
    return {Status::Wait(), std::chrono::minutes(10)};
  }
};

// First come, first served.
class FifoSort final : public QueueSortPlugin {
 public:
  std::string_view Name() const override { return "FifoSort"; }
  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    return a.timestamp < b.timestamp;
  }
};

// A plugin whose construction fails, as a plugin refusing its args does.
constexpr const char* kBroken = "Broken";

struct ReloadHarness {
  Recorder recorder;
  Registry registry = InTreeRegistry();
  FakeClock clock{TimePoint{} + std::chrono::hours(1)};
  InMemoryCluster cluster;
  config::SchedulerConfiguration initial;
  std::unique_ptr<Scheduler> sched;

  explicit ReloadHarness(const std::string& yaml, bool inline_binding = true) {
    for (const char* name : {"StampOld", "StampNew"}) {
      PluginRegistration reg;
      reg.name = name;
      reg.factory = [this, name](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
        return std::unique_ptr<Plugin>(std::make_unique<Stamp>(name, recorder));
      };
      EXPECT_TRUE(registry.Add(std::move(reg)).ok());
    }
    PluginRegistration hold;
    hold.name = "Hold";
    hold.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
      return std::unique_ptr<Plugin>(std::make_unique<Hold>());
    };
    EXPECT_TRUE(registry.Add(std::move(hold)).ok());
    PluginRegistration fifo;
    fifo.name = "FifoSort";
    fifo.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
      return std::unique_ptr<Plugin>(std::make_unique<FifoSort>());
    };
    EXPECT_TRUE(registry.Add(std::move(fifo)).ok());
    PluginRegistration broken;
    broken.name = kBroken;
    broken.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
      return Error{"Broken: args: weight must be positive"};
    };
    EXPECT_TRUE(registry.Add(std::move(broken)).ok());
    initial = Load(yaml);
    sched = testing::SchedulerOver(initial, registry, cluster, clock, inline_binding);
    cluster.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "8"}, {"pods", "110"}}).Obj());
  }

  config::SchedulerConfiguration Load(const std::string& yaml) {
    auto c = config::LoadConfig(
        "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n" + yaml,
        "reload.yaml", registry);
    EXPECT_TRUE(c.ok()) << c.error().message;
    return c.ok() ? std::move(c).value() : config::DefaultConfiguration(registry);
  }

  // Hands `config` to the scheduler; the result lands in the returned future.
  std::future<ReloadResult> Request(config::SchedulerConfiguration config) {
    auto promise = std::make_shared<std::promise<ReloadResult>>();
    ReloadRequest request;
    request.config = std::make_shared<const config::SchedulerConfiguration>(std::move(config));
    request.done = [promise](const ReloadResult& r) { promise->set_value(r); };
    sched->RequestReload(std::move(request));
    return promise->get_future();
  }

  void Drain() {
    while (sched->ScheduleOne(false)) {
    }
  }
  std::string NodeOf(const std::string& name) {
    Ptr<Pod> p = cluster.GetPod("default", name);
    return p ? p->spec.node_name : "<gone>";
  }
};

std::string OneProfile(const std::string& plugins) {
  return "profiles:\n- schedulerName: default-scheduler\n  plugins:\n" + plugins;
}
const std::string kOld = OneProfile(
    "    permit:\n      enabled: [{name: Hold}]\n    preBind:\n      enabled: [{name: "
    "StampOld}]\n");
const std::string kNew = OneProfile("    preBind:\n      enabled: [{name: StampNew}]\n");

bool Ready(std::future<ReloadResult>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

TEST(ReloadTest, APodWaitingAtPermitBindsUnderTheProfileThatScheduledIt) {
  ReloadHarness h(kOld);
  ASSERT_NE(h.sched, nullptr);
  h.cluster.AddPod(MakePod().Name("held").Label("hold", "yes").Req({{"cpu", "1"}}).Obj());
  h.Drain();
  ASSERT_TRUE(h.sched->HasWaitingBindings());
  Framework* old_profile = h.sched->profiles()[0].get();

  auto reloaded = h.Request(h.Load(kNew));
  EXPECT_FALSE(Ready(reloaded));  // nothing happens until the loop's next turn
  h.Drain();                      // picks the reload up between cycles
  ASSERT_TRUE(Ready(reloaded));
  const ReloadResult result = reloaded.get();
  ASSERT_TRUE(result.ok()) << result.error->message;
  EXPECT_EQ(result.kept, std::vector<std::string>{"default-scheduler"});
  EXPECT_NE(h.sched->profiles()[0].get(), old_profile);
  // The old profile lives on for its waiting pod.
  EXPECT_EQ(h.recorder.Alive("StampOld"), 1);

  h.cluster.AddPod(MakePod().Name("fresh").Req({{"cpu", "1"}}).Obj());
  h.Drain();
  EXPECT_EQ(h.NodeOf("fresh"), "n1");
  EXPECT_EQ(h.recorder.PreboundBy("fresh"), "StampNew");
  EXPECT_EQ(h.NodeOf("held"), "");

  // The wait ends: the pod binds through the profile that reserved it.
  auto waiting = old_profile->GetWaitingPod("uid-held");
  ASSERT_NE(waiting, nullptr);
  waiting->Allow("Hold");
  EXPECT_EQ(h.sched->CompleteWaitingBindings(), 1);
  EXPECT_EQ(h.NodeOf("held"), "n1");
  EXPECT_EQ(h.recorder.PreboundBy("held"), "StampOld");
  // Nothing uses the old profile any more: it goes at the next turn of the loop.
  h.Drain();
  EXPECT_EQ(h.recorder.Alive("StampOld"), 0);
  EXPECT_EQ(h.recorder.Alive("StampNew"), 1);
}

TEST(ReloadTest, AWaitOnABindingThreadEndsUnderItsProfileAfterAReload) {
  ReloadHarness h(kOld, /*inline_binding=*/false);
  ASSERT_NE(h.sched, nullptr);
  h.cluster.AddPod(MakePod().Name("held").Label("hold", "yes").Req({{"cpu", "1"}}).Obj());
  h.Drain();
  Framework* old_profile = h.sched->profiles()[0].get();
  ASSERT_NE(old_profile->GetWaitingPod("uid-held"), nullptr);

  auto reloaded = h.Request(h.Load(kNew));
  h.Drain();
  ASSERT_TRUE(Ready(reloaded));
  ASSERT_TRUE(reloaded.get().ok());

  // Allowed from this thread after the reload, it binds on a binding thread under the old
  // profile, which the wait (and its Permit timer) kept alive.
  old_profile->GetWaitingPod("uid-held")->Allow("Hold");
  {
    std::unique_lock lock(h.recorder.mu);
    ASSERT_TRUE(h.recorder.cv.wait_for(lock, std::chrono::seconds(60),
                                       [&] { return h.recorder.prebound_by.count("held"); }));
  }
  EXPECT_EQ(h.recorder.PreboundBy("held"), "StampOld");
  h.sched.reset();  // drains the binding cycle
  EXPECT_EQ(h.NodeOf("held"), "n1");
  EXPECT_EQ(h.recorder.Alive("StampOld"), 0);
}

TEST(ReloadTest, AnInvalidConfigurationIsRefusedThenAValidOneApplies) {
  ReloadHarness h(kOld);
  ASSERT_NE(h.sched, nullptr);
  Framework* old_profile = h.sched->profiles()[0].get();

  // A plugin that fails to build: refused with its error, the old profile schedules on.
  auto refused = h.Request(
      h.Load(OneProfile("    preBind:\n      enabled: [{name: StampNew}, {name: Broken}]\n")));
  h.Drain();
  ASSERT_TRUE(Ready(refused));
  const ReloadResult bad = refused.get();
  ASSERT_TRUE(bad.error.has_value());
  EXPECT_NE(bad.error->message.find("weight must be positive"), std::string::npos)
      << bad.error->message;
  EXPECT_EQ(h.sched->profiles()[0].get(), old_profile);
  EXPECT_EQ(h.recorder.Alive("StampNew"), 0);  // what was built for it is gone
  h.cluster.AddPod(MakePod().Name("a").Req({{"cpu", "1"}}).Obj());
  h.Drain();
  EXPECT_EQ(h.recorder.PreboundBy("a"), "StampOld");

  // Then a valid one.
  auto applied = h.Request(h.Load(kNew));
  h.Drain();
  ASSERT_TRUE(Ready(applied));
  EXPECT_TRUE(applied.get().ok());
  h.cluster.AddPod(MakePod().Name("b").Req({{"cpu", "1"}}).Obj());
  h.Drain();
  EXPECT_EQ(h.recorder.PreboundBy("b"), "StampNew");
  EXPECT_EQ(h.recorder.Alive("StampOld"), 0);
}

TEST(ReloadTest, AnotherQueueSortIsRefused) {
  ReloadHarness h(kOld);
  ASSERT_NE(h.sched, nullptr);
  auto refused =
      h.Request(h.Load(OneProfile("    queueSort:\n      enabled: [{name: FifoSort}]\n      "
                                  "disabled: [{name: PrioritySort}]\n")));
  h.Drain();
  ASSERT_TRUE(Ready(refused));
  const ReloadResult r = refused.get();
  ASSERT_TRUE(r.error.has_value());
  EXPECT_NE(r.error->message.find("queueSort"), std::string::npos) << r.error->message;
}

TEST(ReloadTest, PodsOfARemovedProfileStayPendingAndANewProfilesPodsAreScheduled) {
  ReloadHarness h(
      "profiles:\n- schedulerName: a\n- schedulerName: b\n  plugins:\n    preBind:\n"
      "      enabled: [{name: StampOld}]\n");
  ASSERT_NE(h.sched, nullptr);
  h.cluster.AddPod(MakePod().Name("pa").SchedulerName("a").Req({{"cpu", "1"}}).Obj());
  h.cluster.AddPod(MakePod().Name("pb1").SchedulerName("b").Req({{"cpu", "1"}}).Obj());
  h.cluster.AddPod(MakePod().Name("pb2").SchedulerName("b").Req({{"cpu", "1"}}).Obj());
  h.cluster.AddPod(MakePod().Name("pc").SchedulerName("c").Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(h.sched->pending_counts().active, 3u);  // pc belongs to no profile yet

  auto reloaded = h.Request(
      h.Load("profiles:\n- schedulerName: a\n- schedulerName: c\n  plugins:\n    preBind:\n"
             "      enabled: [{name: StampNew}]\n"));
  h.Drain();
  ASSERT_TRUE(Ready(reloaded));
  const ReloadResult r = reloaded.get();
  ASSERT_TRUE(r.ok()) << r.error->message;
  EXPECT_EQ(r.kept, std::vector<std::string>{"a"});
  EXPECT_EQ(r.removed, std::vector<std::string>{"b"});
  EXPECT_EQ(r.added, std::vector<std::string>{"c"});
  EXPECT_EQ(r.orphaned_pods, (std::vector<std::string>{"default/pb1", "default/pb2"}));
  EXPECT_EQ(r.queued_pods, 1u);
  EXPECT_EQ(h.NodeOf("pa"), "n1");
  EXPECT_EQ(h.NodeOf("pc"), "n1");
  EXPECT_EQ(h.recorder.PreboundBy("pc"), "StampNew");
  EXPECT_EQ(h.NodeOf("pb1"), "");
  EXPECT_EQ(h.NodeOf("pb2"), "");
  const auto left = h.sched->pending_counts();
  EXPECT_EQ(left.active + left.backoff + left.unschedulable + left.gated, 0u);
  // A later pod of the removed profile is not queued either; one of the new profile is.
  h.cluster.AddPod(MakePod().Name("pb3").SchedulerName("b").Obj());
  h.cluster.AddPod(MakePod().Name("pc2").SchedulerName("c").Obj());
  EXPECT_EQ(h.sched->pending_counts().active, 1u);
}

TEST(ReloadTest, ANewerRequestSupersedesOneNotPickedUp) {
  ReloadHarness h(kOld);
  ASSERT_NE(h.sched, nullptr);
  auto first = h.Request(h.Load(kNew));
  auto second = h.Request(h.Load(kNew));
  ASSERT_TRUE(Ready(first));
  EXPECT_TRUE(first.get().superseded);
  EXPECT_FALSE(Ready(second));
  h.Drain();
  ASSERT_TRUE(Ready(second));
  EXPECT_TRUE(second.get().ok());
}

TEST(ReloadTest, TheRunLoopIsWokenAndAppliesTheReloadOnItsThread) {
  ReloadHarness h(kOld, /*inline_binding=*/false);
  ASSERT_NE(h.sched, nullptr);
  std::stop_source stop;
  std::promise<std::thread::id> loop_id;
  std::thread loop([&] {
    loop_id.set_value(std::this_thread::get_id());
    h.sched->Run(stop.get_token());
  });
  const std::thread::id loop_thread = loop_id.get_future().get();
  // The loop waits for a pod (or is about to): the request wakes it.
  auto applied_on = std::make_shared<std::promise<std::thread::id>>();
  ReloadRequest request;
  request.config = std::make_shared<const config::SchedulerConfiguration>(h.Load(kNew));
  request.done = [applied_on](const ReloadResult& r) {
    EXPECT_TRUE(r.ok());
    applied_on->set_value(std::this_thread::get_id());
  };
  h.sched->RequestReload(std::move(request));
  EXPECT_EQ(applied_on->get_future().get(), loop_thread);
  // The loop goes on scheduling under the new profile.
  h.cluster.AddPod(MakePod().Name("after").Req({{"cpu", "1"}}).Obj());
  {
    std::unique_lock lock(h.recorder.mu);
    ASSERT_TRUE(h.recorder.cv.wait_for(lock, std::chrono::seconds(60),
                                       [&] { return h.recorder.prebound_by.count("after"); }));
  }
  EXPECT_EQ(h.recorder.PreboundBy("after"), "StampNew");
  stop.request_stop();
  loop.join();
}

}  // namespace
}  // namespace berth
