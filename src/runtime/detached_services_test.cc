#include "framework/detached_services.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "observe/log.h"
#include "runtime/framework.h"
#include "testing/builders.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakePod;

class Sort final : public QueueSortPlugin {
 public:
  std::string_view Name() const override { return "Sort"; }
  bool Less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
};

class Binder final : public BindPlugin {
 public:
  std::string_view Name() const override { return "Binder"; }
  Status Bind(CycleState&, const PodInfo&, const std::string&) override {
    return Status::Success();
  }
};

template <class T>
PluginRegistration Reg(const std::string& name) {
  PluginRegistration r;
  r.name = name;
  r.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<T>());
  };
  return r;
}

// A deferred callback that took the detached services keeps working after the profile that
// gave them is destroyed, as when a reload frees a framework while a deletion is pending.
TEST(DetachedServicesTest, OutliveTheFramework) {
  Registry registry;
  ASSERT_TRUE(registry.Add(Reg<Sort>("Sort")).ok());
  ASSERT_TRUE(registry.Add(Reg<Binder>("Binder")).ok());
  config::Profile profile;
  profile.scheduler_name = "old-profile";
  profile.plugins.queue_sort = {{{"Sort"}}, {}};
  profile.plugins.bind = {{{"Binder"}}, {}};

  InMemoryCluster cluster;
  FakeClock clock;
  testing::InlineParallelizer parallelizer;
  testing::FakeNominator nominator;
  observe::CapturingLogger log;
  std::vector<std::string> activated;
  FrameworkServices services{&cluster, &clock, &parallelizer, &nominator, 1};
  services.log = &log;
  services.activate = [&activated](const Pod& pod) { activated.push_back(pod.Key()); };

  auto fw = Framework::Create(profile, registry, services);
  ASSERT_TRUE(fw.ok()) << fw.error().message;
  DetachedServices detached = DetachedFrom(*fw.value());
  fw = Error{"freed", ErrorCode::kUnknown};  // the framework is gone

  detached.activate(*MakePod().Namespace("ns").Name("preemptor").Obj());
  detached.log_error("DefaultPreemption", "preempting for pod ns/preemptor failed: conflict");

  EXPECT_THAT(activated, ElementsAre("ns/preemptor"));
  ASSERT_EQ(log.lines().size(), 1u);
  EXPECT_THAT(log.lines()[0], HasSubstr("\"Plugin failed\""));
  EXPECT_THAT(log.lines()[0], HasSubstr("plugin=\"DefaultPreemption\""));
  EXPECT_THAT(log.lines()[0], HasSubstr("profile=\"old-profile\""));
}

// A handle that is not a framework (a plugin test's FakeHandle) is called through.
TEST(DetachedServicesTest, OtherHandlesAreCalledThrough) {
  testing::FakeHandle handle;
  DetachedServices detached = DetachedFrom(handle);
  detached.activate(*MakePod().Namespace("ns").Name("p").Obj());
  EXPECT_THAT(handle.activated, ElementsAre("ns/p"));
}

}  // namespace
}  // namespace berth
