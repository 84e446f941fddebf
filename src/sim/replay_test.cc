// Replaying a recording: the recorder format is read line by line with errors naming the line;
// pods are placed by the configuration, not by the recorded scheduler; nodes come and go as
// recorded; berth compare --replay reports what separate replays decide.
#include "sim/replay.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include "config/load.h"
#include "plugins/registry.h"
#include "sim/recording.h"

namespace berth::sim {
namespace {

using Json = nlohmann::json;

std::string WriteRecording(const std::string& name, const std::vector<Json>& lines) {
  const auto path =
      std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()) + ".jsonl");
  std::ofstream out(path);
  for (const Json& l : lines) out << l.dump() << "\n";
  return path.string();
}

Json Line(const std::string& time, const std::string& event, Json resource) {
  return {{"time", time}, {"event", event}, {"resource", std::move(resource)}};
}

Json NodeDoc(const std::string& name, const std::string& cpu) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Node"},
      {"metadata", {{"name", name}, {"labels", {{"topology.kubernetes.io/zone", "z-" + name}}}}},
      {"status", {{"allocatable", {{"cpu", cpu}, {"memory", "16Gi"}, {"pods", "110"}}}}}};
}

Json PodDoc(const std::string& name, const std::string& cpu, const std::string& node = "") {
  Json spec = {{"containers", {{{"name", "c"}, {"resources", {{"requests", {{"cpu", cpu}}}}}}}}};
  if (!node.empty()) spec["nodeName"] = node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", spec}};
}

Json Deleted(const std::string& kind, const std::string& name, const std::string& ns = "") {
  return {{"apiVersion", "v1"}, {"kind", kind}, {"metadata", {{"name", name}, {"namespace", ns}}}};
}

TEST(RecordingTest, ParsesGoTimes) {
  auto t = ParseRecordTime("2026-11-01T12:00:00Z");
  ASSERT_TRUE(t.ok());
  auto frac = ParseRecordTime("2026-11-01T12:00:00.25Z");
  ASSERT_TRUE(frac.ok());
  EXPECT_EQ(*frac - *t, std::chrono::milliseconds(250));
  auto offset = ParseRecordTime("2026-11-01T21:00:00.000000001+09:00");
  ASSERT_TRUE(offset.ok());
  EXPECT_EQ(*offset - *t, std::chrono::nanoseconds(1));
  EXPECT_FALSE(ParseRecordTime("2026-11-01 12:00:00").ok());
  EXPECT_FALSE(ParseRecordTime("yesterday").ok());
}

TEST(RecordingTest, ErrorsNameTheLine) {
  const std::string path = WriteRecording(
      "recording-errors", {Line("2026-11-01T12:00:00Z", "Add", NodeDoc("n1", "4")),
                           Line("2026-11-01T12:00:01Z", "Patch", NodeDoc("n1", "4"))});
  auto reader = RecordingReader::Open(path);
  ASSERT_TRUE(reader.ok());
  auto first = (*reader)->Next();
  ASSERT_TRUE(first.ok() && *first);
  EXPECT_EQ((*first)->kind, "Node");
  EXPECT_EQ((*first)->name, "n1");
  auto second = (*reader)->Next();
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(second.error().message, ::testing::HasSubstr(":2: event: \"Patch\""));
  std::filesystem::remove(path);
}

TEST(ReplayTest, PlacesPodsItselfAndFollowsTheRecordedTimeline) {
  const std::string path =
      WriteRecording("replay-timeline",
                     {Line("2026-11-01T12:00:00Z", "Add", NodeDoc("n1", "4")),
                      Line("2026-11-01T12:00:00Z", "Add", NodeDoc("n2", "4")),
                      // Running when the recording started: stays where it runs.
                      Line("2026-11-01T12:00:00Z", "Add", PodDoc("running", "3", "n1")),
                      Line("2026-11-01T12:00:01Z", "Add", PodDoc("a", "2")),
                      // The recorded scheduler put it on n1; this configuration decides for itself.
                      Line("2026-11-01T12:00:02Z", "Update", PodDoc("a", "2", "n1")),
                      Line("2026-11-01T12:00:03Z", "Add", PodDoc("big", "3")),  // fits nowhere yet
                      Line("2026-11-01T12:00:10Z", "Add", NodeDoc("n3", "4")),  // now it does
                      Line("2026-11-01T12:00:20Z", "Delete", Deleted("Pod", "a", "default")),
                      Line("2026-11-01T12:00:30Z", "Delete", Deleted("Node", "n2"))});
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto r = Replay(config, registry, path, {});
  std::filesystem::remove(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->events, 9);
  ASSERT_EQ(r->results.results.size(), 2u);
  EXPECT_EQ(r->results.results[0].pod, "default/a");
  EXPECT_EQ(r->results.results[0].node, "n2");  // the only node with room
  EXPECT_EQ(r->results.results[1].pod, "default/big");
  EXPECT_EQ(r->results.results[1].node, "n3");
  EXPECT_TRUE(r->still_pending.empty());
  // big waited from 12:00:03 to n3's arrival at 12:00:10.
  EXPECT_DOUBLE_EQ(r->max_pending_seconds, 7);
  EXPECT_THAT(r->per_node,
              ::testing::ElementsAre(::testing::Pair("n1", 1), ::testing::Pair("n3", 1)));
  EXPECT_EQ(r->node_zones.size(), 2u);
  // A point each time a series changes: the running pod makes n1 in use, a takes n2, big
  // waits from 12:00:03 until n3 comes, a's deletion leaves n2 (so removing it changes
  // nothing).
  std::vector<std::tuple<int64_t, int, int>> samples;
  for (const auto& s : r->over_time) samples.emplace_back(s.at_ms, s.pending, s.nodes_in_use);
  EXPECT_THAT(samples, ::testing::ElementsAre(std::tuple(0, 0, 0), std::tuple(0, 0, 1),
                                              std::tuple(1000, 0, 2), std::tuple(3000, 1, 2),
                                              std::tuple(10000, 0, 3), std::tuple(20000, 0, 2)));
}

TEST(ReplayTest, DownsampleKeepsEachBucketsPeak) {
  std::vector<TimeSample> s;
  for (int i = 0; i < 100; ++i) s.push_back({i * 10, i == 42 ? 1000 : i % 5, i == 57 ? 9 : 1, i});
  auto d = Downsample(s, 10);
  EXPECT_LE(d.size(), 10u);
  int peak = 0, nodes_peak = 0;
  for (const auto& p : d) {
    peak = std::max(peak, p.pending);
    nodes_peak = std::max(nodes_peak, p.nodes_in_use);
  }
  EXPECT_EQ(peak, 1000);
  EXPECT_EQ(nodes_peak, 9);
  // Preemptions are cumulative: each bucket keeps its last count, the series its total.
  EXPECT_EQ(d.back().preemptions, 99);
  for (size_t i = 1; i < d.size(); ++i) EXPECT_GT(d[i].preemptions, d[i - 1].preemptions);
  EXPECT_EQ(Downsample(s, 1000).size(), 100u);
}

TEST(ReplayTest, CompareReplayReportsWhatSeparateReplaysDecide) {
  std::vector<Json> lines;
  for (int i = 0; i < 4; ++i)
    lines.push_back(Line("2026-11-01T12:00:00Z", "Add", NodeDoc("n" + std::to_string(i), "4")));
  for (int i = 0; i < 8; ++i)
    lines.push_back(Line(fmt::format("2026-11-01T12:00:{:02}Z", i + 1), "Add",
                         PodDoc("p" + std::to_string(i), "500m")));
  lines.push_back(Line("2026-11-01T12:00:30Z", "Delete", Deleted("Pod", "p0", "default")));
  const std::string path = WriteRecording("replay-compare", lines);
  Registry registry = InTreeRegistry();
  auto spread = config::DefaultConfiguration(registry);
  auto packing = config::LoadConfig(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}]}}
)",
                                    "binpack", registry);
  ASSERT_TRUE(packing.ok()) << packing.error().message;
  auto r = CompareReplay({{"default", &spread}, {"binpack", &*packing}}, registry, path, {});
  auto a = Replay(spread, registry, path, {});
  auto b = Replay(*packing, registry, path, {});
  std::filesystem::remove(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_TRUE(r->replay);
  EXPECT_EQ(r->events, 13);
  size_t expected = 0;
  for (size_t i = 0; i < a->results.results.size(); ++i)
    expected += a->results.results[i].node != b->results.results[i].node;
  ASSERT_GT(expected, 0u);
  ASSERT_EQ(r->diffs.size(), expected);
  for (const PodDiff& d : r->diffs) {
    EXPECT_TRUE(d.per_config[0].explained);
    EXPECT_TRUE(d.per_config[1].explained);
    EXPECT_FALSE(d.per_config[1].tipped_by.empty());
  }
  EXPECT_EQ(r->configs[1].nodes_used, 1);  // 7 pods of 500m pack onto one 4-CPU node
  EXPECT_EQ(r->configs[0].nodes_used, 4);
  EXPECT_FALSE(r->configs[0].over_time.empty());
  // The series the HTML page plots: [milliseconds, value] pairs, on the same times.
  const nlohmann::json conf = ToJson(*r)["configurations"][1];
  const std::vector<TimeSample>& samples = r->configs[1].over_time;
  ASSERT_EQ(conf["pendingOverTime"].size(), samples.size());
  ASSERT_EQ(conf["nodesInUseOverTime"].size(), samples.size());
  ASSERT_EQ(conf["preemptionsOverTime"].size(), samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(conf["pendingOverTime"][i], Json::array({samples[i].at_ms, samples[i].pending}));
    EXPECT_EQ(conf["nodesInUseOverTime"][i],
              Json::array({samples[i].at_ms, samples[i].nodes_in_use}));
    EXPECT_EQ(conf["preemptionsOverTime"][i],
              Json::array({samples[i].at_ms, samples[i].preemptions}));
  }
  EXPECT_EQ(samples.back().nodes_in_use, 1);  // binpack: one node from the first pod on
}

// Each sample as (milliseconds, value) for one of the series.
template <class Value>
std::vector<std::pair<int64_t, int>> Series(const std::vector<TimeSample>& samples, Value value) {
  std::vector<std::pair<int64_t, int>> out;
  for (const TimeSample& s : samples) out.emplace_back(s.at_ms, value(s));
  return out;
}

using ::testing::ElementsAre;
using ::testing::Pair;

TEST(ReplayTest, NodesInUseOverTimeFollowPackingAndIgnoreDaemonSets) {
  std::vector<Json> lines;
  for (int i = 0; i < 4; ++i) {
    const std::string node = "n" + std::to_string(i);
    lines.push_back(Line("2026-11-01T12:00:00Z", "Add", NodeDoc(node, "4")));
    // A DaemonSet's pod on every node: none of them makes its node in use.
    Json ds = PodDoc("ds-" + node, "100m", node);
    ds["metadata"]["ownerReferences"] = {
        {{"apiVersion", "apps/v1"}, {"kind", "DaemonSet"}, {"name", "ds"}, {"controller", true}}};
    lines.push_back(Line("2026-11-01T12:00:00Z", "Add", ds));
  }
  // Running when the recording started: n0 is in use from the start.
  lines.push_back(Line("2026-11-01T12:00:00Z", "Add", PodDoc("running", "1", "n0")));
  for (int i = 0; i < 4; ++i)
    lines.push_back(Line(fmt::format("2026-11-01T12:00:{:02}Z", i + 1), "Add",
                         PodDoc("p" + std::to_string(i), "500m")));
  lines.push_back(Line("2026-11-01T12:00:30Z", "Delete", Deleted("Pod", "running", "default")));
  lines.push_back(Line("2026-11-01T12:00:40Z", "Delete", Deleted("Node", "n3")));
  const std::string path = WriteRecording("replay-nodes-in-use", lines);
  Registry registry = InTreeRegistry();
  auto spread = config::DefaultConfiguration(registry);
  auto packing = config::LoadConfig(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: NodeResourcesFit
    args: {scoringStrategy: {type: MostAllocated, resources: [{name: cpu, weight: 1}]}}
)",
                                    "binpack", registry);
  ASSERT_TRUE(packing.ok()) << packing.error().message;
  auto r = CompareReplay({{"default", &spread}, {"binpack", &*packing}}, registry, path, {});
  std::filesystem::remove(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto nodes = [](const TimeSample& s) { return s.nodes_in_use; };
  // LeastAllocated spreads the pods over the three empty nodes, then over one of them; n0 is
  // left when its pod ends, n3 when it is removed (its pods stay, on no node).
  EXPECT_THAT(Series(r->configs[0].over_time, nodes),
              ElementsAre(Pair(0, 0), Pair(0, 1), Pair(1000, 2), Pair(2000, 3), Pair(3000, 4),
                          Pair(30000, 3), Pair(40000, 2)));
  // MostAllocated packs every pod beside the running one: one node throughout.
  EXPECT_THAT(Series(r->configs[1].over_time, nodes), ElementsAre(Pair(0, 0), Pair(0, 1)));
  // The last point is the run's nodes used.
  EXPECT_EQ(r->configs[0].nodes_used, 2);
  EXPECT_EQ(r->configs[1].nodes_used, 1);
  for (const ConfigMetrics& m : r->configs) {
    for (const TimeSample& s : m.over_time) {
      EXPECT_EQ(s.pending, 0);
      EXPECT_EQ(s.preemptions, 0);
    }
  }
  const std::string text = ToText(*r);
  EXPECT_THAT(text, ::testing::ContainsRegex("peak nodes in use +4 at 3.0 s +1 at 0.0 s"));
}

TEST(ReplayTest, PreemptionsOverTimeCountTheVictimsDeleted) {
  auto pod = [](const std::string& name, int priority) {
    Json doc = PodDoc(name, "2");
    doc["spec"]["priority"] = priority;
    return doc;
  };
  const std::string path = WriteRecording(
      "replay-preemptions", {Line("2026-11-01T12:00:00Z", "Add", NodeDoc("n1", "4")),
                             Line("2026-11-01T12:00:01Z", "Add", pod("low-a", 0)),
                             Line("2026-11-01T12:00:02Z", "Add", pod("low-b", 0)),
                             // Fits only where a low pod ran: evicts one.
                             Line("2026-11-01T12:00:10Z", "Add", pod("high-a", 100)),
                             Line("2026-11-01T12:00:20Z", "Add", pod("high-b", 100))});
  Registry registry = InTreeRegistry();
  auto preempting = config::DefaultConfiguration(registry);
  auto never = config::LoadConfig(R"(
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- plugins:
    multiPoint:
      disabled: [{name: DefaultPreemption}]
)",
                                  "no-preemption", registry);
  ASSERT_TRUE(never.ok()) << never.error().message;
  auto r = CompareReplay({{"default", &preempting}, {"never", &*never}}, registry, path, {});
  std::filesystem::remove(path);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto victims = [](const TimeSample& s) { return s.preemptions; };
  auto pending = [](const TimeSample& s) { return s.pending; };
  const std::vector<TimeSample>& a = r->configs[0].over_time;
  const std::vector<TimeSample>& b = r->configs[1].over_time;
  ASSERT_FALSE(a.empty());
  ASSERT_FALSE(b.empty());
  // Each high pod evicts a low one: two victims, by the time the recording ends.
  EXPECT_EQ(a.back().preemptions, 2);
  EXPECT_EQ(a.back().preemptions, r->configs[0].victims);
  EXPECT_EQ(a.back().pending, 0);
  EXPECT_EQ(a.back().nodes_in_use, 1);
  // The count is cumulative and rises from the first high pod on.
  for (size_t i = 1; i < a.size(); ++i) EXPECT_GE(a[i].preemptions, a[i - 1].preemptions);
  for (const TimeSample& s : a) EXPECT_EQ(s.preemptions > 0, s.at_ms >= 10000) << s.at_ms;
  // Without preemption the high pods wait: nobody is evicted.
  EXPECT_THAT(Series(b, victims), ::testing::Each(Pair(::testing::_, 0)));
  EXPECT_THAT(Series(b, pending),
              ElementsAre(Pair(0, 0), Pair(1000, 0), Pair(10000, 1), Pair(20000, 2)));
  EXPECT_EQ(r->configs[1].victims, 0);
}

}  // namespace
}  // namespace berth::sim
