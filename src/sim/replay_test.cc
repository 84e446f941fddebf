// Replaying a recording: the recorder format is read line by line with errors naming the line;
// pods are placed by the configuration, not by the recorded scheduler; nodes come and go as
// recorded; berth compare --replay reports what separate replays decide.
#include "sim/replay.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

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
  // Pending over time: 0 after a is placed, 1 while big waits, 0 from 12:00:10.
  std::vector<std::pair<int64_t, int>> samples;
  for (const auto& s : r->pending_over_time) samples.emplace_back(s.at_ms, s.pending);
  EXPECT_THAT(samples, ::testing::ElementsAre(::testing::Pair(0, 0), ::testing::Pair(3000, 1),
                                              ::testing::Pair(10000, 0)));
}

TEST(ReplayTest, DownsampleKeepsEachBucketsPeak) {
  std::vector<PendingSample> s;
  for (int i = 0; i < 100; ++i) s.push_back({i * 10, i == 42 ? 1000 : i % 5});
  auto d = Downsample(s, 10);
  EXPECT_LE(d.size(), 10u);
  int peak = 0;
  for (const auto& p : d) peak = std::max(peak, p.pending);
  EXPECT_EQ(peak, 1000);
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
  EXPECT_FALSE(r->configs[0].pending_over_time.empty());
  // The series the HTML page plots: [milliseconds, pending] pairs.
  const nlohmann::json series = ToJson(*r)["configurations"][0]["pendingOverTime"];
  ASSERT_EQ(series.size(), r->configs[0].pending_over_time.size());
  EXPECT_EQ(series[0][1], r->configs[0].pending_over_time[0].pending);
}

}  // namespace
}  // namespace berth::sim
