// The example extenders, and `berth simulate` with extenders configured.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/codec.h"
#include "berth/config/plugin_args.h"
#include "berth/extender/server.h"
#include "config/load.h"
#include "extender/examples.h"
#include "extender/extender_test_util.h"
#include "extender/http_extender.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"
#include "testing/fake_prometheus.h"

namespace berth::extender {
namespace {

using nlohmann::json;
using test_util::Config;
using test_util::Infos;
using test_util::Names;
using test_util::Ptrs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- example extenders

TEST(LabelRuleTest, LabelledPodsOnlyOnTheListedNodes) {
  auto options = ParseLabelRule("want=you", "10-9-101-66");
  ASSERT_TRUE(options.ok());
  EXPECT_FALSE(ParseLabelRule("want", "n").ok());
  EXPECT_FALSE(ParseLabelRule("want=you", ",").ok());
  ExtenderServer server;
  RegisterLabelRule(server, *options);
  ASSERT_TRUE(server.Start({}).ok());
  config::Extender cfg = Config(server.url());
  auto ext = HttpExtender::Create(cfg, "e");
  ASSERT_TRUE(ext.ok());
  auto infos = Infos({"10-9-101-65", "10-9-101-66"});
  auto wanted = MakePod().Name("w").Label("want", "you").Obj();
  auto f = (*ext)->Filter(*wanted, Ptrs(infos));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_THAT(Names(f->feasible), ElementsAre("10-9-101-66"));
  EXPECT_THAT(f->failed.at("10-9-101-65"), HasSubstr("want=you"));
  auto other = MakePod().Name("o").Label("want", "me").Obj();
  EXPECT_EQ((*ext)->Filter(*other, Ptrs(infos))->feasible.size(), 2u);
  auto pr = (*ext)->Prioritize(*wanted, Ptrs(infos));
  ASSERT_TRUE(pr.ok());
  EXPECT_EQ((*pr)[0].score, 0);
  EXPECT_EQ((*pr)[1].score, 10);
}

TEST(NetworkTrafficTest, PrefersQuietNodes) {
  testing::FakePrometheus prom({{"quiet", 100}, {"busy", 1000}, {"half", 500}});
  NetworkTrafficOptions o;
  o.prometheus_address = prom.url();
  o.network_interface = "ens192";
  o.cache_for = std::chrono::milliseconds(60000);
  ExtenderServer server;
  ASSERT_TRUE(RegisterNetworkTraffic(server, o).ok());
  ASSERT_TRUE(server.Start({}).ok());
  config::Extender cfg = Config(server.url());
  cfg.filter_verb.clear();
  auto ext = HttpExtender::Create(cfg, "e");
  ASSERT_TRUE(ext.ok());
  auto infos = Infos({"quiet", "busy", "half", "unknown"});
  auto pod = MakePod().Name("p").Obj();
  for (int i = 0; i < 3; ++i) {
    auto pr = (*ext)->Prioritize(*pod, Ptrs(infos));
    ASSERT_TRUE(pr.ok()) << pr.error().message;
    std::map<std::string, int64_t> got;
    for (const auto& h : *pr) got[h.host] = h.score;
    EXPECT_EQ(got["quiet"], 10);  // the quietest gets the most an extender gives
    EXPECT_EQ(got["busy"], 0);
    EXPECT_EQ(got["half"], 5);  // 10 x (1000 - 500) / (1000 - 100), rounded down
    EXPECT_EQ(got["unknown"], 0);
  }
  EXPECT_EQ(prom.queries, 1);  // cached
  EXPECT_THAT(prom.last_query(),
              HasSubstr("node_network_receive_bytes_total{device=\"ens192\"}[5m]"));

  NetworkTrafficOptions bad = o;
  bad.network_interface = "eth0\"}";
  ExtenderServer s2;
  EXPECT_FALSE(RegisterNetworkTraffic(s2, bad).ok());
}

TEST(NetworkTrafficTest, UnreachablePrometheusIsAnIgnoredPrioritizeError) {
  NetworkTrafficOptions o;
  o.prometheus_address = "http://127.0.0.1:1";
  ExtenderServer server;
  ASSERT_TRUE(RegisterNetworkTraffic(server, o).ok());
  ASSERT_TRUE(server.Start({}).ok());
  auto ext = HttpExtender::Create(Config(server.url()), "e");
  auto infos = Infos({"a"});
  auto pr = (*ext)->Prioritize(*MakePod().Name("p").Obj(), Ptrs(infos));
  ASSERT_FALSE(pr.ok());
  EXPECT_THAT(pr.error().message, HasSubstr("code 500"));
}

// ---------------------------------------------------------------- berth simulate

TEST(SimulateWithExtendersTest, ExtenderDecisionsAndScoresInTheReport) {
  ExtenderServer server;
  auto options = ParseLabelRule("want=you", "node-b");
  RegisterLabelRule(server, *options);
  ASSERT_TRUE(server.Start({}).ok());
  Registry registry = InTreeRegistry();
  for (bool cache : {true, false}) {
    const std::string yaml = fmt::format(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  nodeCacheCapable: {}
)",
                                         server.url(), cache);
    auto config = config::LoadConfig(yaml, "cfg.yaml", registry);
    ASSERT_TRUE(config.ok()) << config.error().message;
    std::vector<Object> objects;
    for (std::string n : {"node-a", "node-b", "node-c"})
      objects.push_back(
          Object(MakeNode().Name(n).Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj()));
    objects.push_back(Object(MakePod().Name("wanted").Label("want", "you").Obj()));
    objects.push_back(Object(MakePod().Name("free").Req({{"cpu", "100m"}}).Obj()));
    auto result = sim::Simulate(*config, registry, objects, {});
    ASSERT_TRUE(result.ok()) << result.error().message;
    ASSERT_EQ(result->results.size(), 2u);
    const sim::PodResult& wanted =
        result->results[0].pod == "default/wanted" ? result->results[0] : result->results[1];
    EXPECT_EQ(wanted.result, "Scheduled");
    EXPECT_EQ(wanted.node, "node-b");
    json report = sim::ToJson(*result);
    EXPECT_THAT(report.dump(), HasSubstr(server.url()));
  }
}

TEST(SimulateWithExtendersTest, UnreachableExtenderFailsTheAttemptNamingIt) {
  Registry registry = InTreeRegistry();
  auto config = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:1/sched
  filterVerb: filter
  httpTimeout: 1s
)",
                                   "cfg.yaml", registry);
  ASSERT_TRUE(config.ok()) << config.error().message;
  std::vector<Object> objects{Object(MakeNode().Name("n").Capacity({{"cpu", "4"}}).Obj()),
                              Object(MakePod().Name("p").Obj())};
  sim::SimulationOptions so;
  so.max_attempts = 1;
  auto result = sim::Simulate(*config, registry, objects, so);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->results[0].result, "Error");
  EXPECT_THAT(result->results[0].message, HasSubstr("http://127.0.0.1:1/sched/filter"));
}

TEST(ExtenderConfigTest, ValidationNamesThePath) {
  Registry registry = InTreeRegistry();
  auto bad_url = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: 127.0.0.1:8888
  filterVerb: filter
)",
                                    "cfg.yaml", registry);
  ASSERT_FALSE(bad_url.ok());
  EXPECT_THAT(bad_url.error().message, HasSubstr("extenders[0].urlPrefix"));
  auto ignored = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:8888
  filterVerb: filter
  managedResources:
  - name: example.com/foo
    ignoredByScheduler: true
)",
                                    "cfg.yaml", registry);
  ASSERT_TRUE(ignored.ok()) << ignored.error().message;
  const auto* fit = dynamic_cast<const config::NodeResourcesFitArgs*>(
      ignored->profiles[0].ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_THAT(fit->ignored_resources, ElementsAre("example.com/foo"));
}

}  // namespace
}  // namespace berth::extender
