// Profiles that enable a plugin's Score without its PreScore (a v1 file that lists a plugin under
// `score` and not under `preScore` or `multiPoint`; here the default plugins' PreScore is
// disabled): the plugins that cope score as under multiPoint, and the profile warns about those
// that do not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/scheduler.h"
#include "scheduler/scheduler_test_util.h"

namespace berth {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::string ScoreOnly(const std::string& plugin) {
  return R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      enabled:
      - name: )" +
         plugin + R"(
      disabled:
      - name: "*"
    preScore:
      disabled:
      - name: "*"
)";
}

std::vector<std::string> WarningsOf(const std::string& yaml) {
  Registry registry = InTreeRegistry();
  auto config = config::LoadConfig(yaml, "test.yaml", registry);
  EXPECT_TRUE(config.ok()) << config.error().message;
  if (!config.ok()) return {"load failed"};
  InMemoryCluster cluster;
  FakeClock clock;
  auto sched = testing::SchedulerOver(*config, registry, cluster, clock, /*inline_binding=*/true);
  if (!sched) return {"create failed"};
  std::vector<std::string> out;
  for (const auto& fw : sched->profiles())
    out.insert(out.end(), fw->warnings().begin(), fw->warnings().end());
  return out;
}

TEST(ProfileWarningsTest, DefaultProfileHasNone) {
  EXPECT_THAT(WarningsOf("apiVersion: kubescheduler.config.k8s.io/v1\n"
                         "kind: KubeSchedulerConfiguration\n"),
              IsEmpty());
}

TEST(ProfileWarningsTest, ScoreWithoutThePreScoreItNeedsIsNamed) {
  for (const char* plugin : {"TaintToleration", "InterPodAffinity", "PodTopologySpread"}) {
    auto warnings = WarningsOf(ScoreOnly(plugin));
    ASSERT_THAT(warnings, SizeIs(1)) << plugin;
    EXPECT_THAT(warnings[0], HasSubstr(std::string("plugin \"") + plugin +
                                       "\" is enabled at score but not at preScore"));
    EXPECT_THAT(warnings[0], HasSubstr("default-scheduler"));
  }
}

TEST(ProfileWarningsTest, PluginsThatScoreWithoutPreScoreAreNotNamed) {
  for (const char* plugin :
       {"NodeResourcesFit", "NodeResourcesBalancedAllocation", "ImageLocality", "NodeAffinity"})
    EXPECT_THAT(WarningsOf(ScoreOnly(plugin)), IsEmpty()) << plugin;
}

TEST(ProfileWarningsTest, MultiPointEnablesBoth) {
  EXPECT_THAT(WarningsOf(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  plugins:
    multiPoint:
      enabled:
      - name: TaintToleration
)"),
              IsEmpty());
}

}  // namespace
}  // namespace berth
