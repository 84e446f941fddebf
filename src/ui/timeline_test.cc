// The web view's timeline: counts by state, bounded buckets, notable events.
#include "ui/timeline.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::ui {
namespace {

using nlohmann::json;

json Pod(const std::string& name, const std::string& node = "", const std::string& phase = "") {
  json p = {{"metadata", {{"namespace", "default"}, {"name", name}}}, {"spec", json::object()}};
  if (!node.empty()) p["spec"]["nodeName"] = node;
  if (!phase.empty()) p["status"]["phase"] = phase;
  return p;
}

json Node(const std::string& name, const char* ready, bool no_execute_taint = false) {
  json n = {{"metadata", {{"name", name}}}};
  if (ready) n["status"]["conditions"] = {{{"type", "Ready"}, {"status", ready}}};
  if (no_execute_taint) {
    n["spec"]["taints"] = {{{"key", "node.kubernetes.io/unreachable"}, {"effect", "NoExecute"}}};
  }
  return n;
}

json Deleting(json pod) {
  pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  return pod;
}

TEST(TimelineStateTest, PodsAndNodesByState) {
  EXPECT_EQ(PodStateOf(nullptr), PodState::kAbsent);
  json p = Pod("a");
  EXPECT_EQ(PodStateOf(&p), PodState::kPending);
  p = Pod("a", "n1", "Pending");
  EXPECT_EQ(PodStateOf(&p), PodState::kScheduled);
  p = Pod("a", "n1", "Running");
  EXPECT_EQ(PodStateOf(&p), PodState::kRunning);
  p = Pod("a", "n1", "Succeeded");
  EXPECT_EQ(PodStateOf(&p), PodState::kFinished);
  p = Pod("a", "", "Failed");  // failed before it was bound: not pending any more
  EXPECT_EQ(PodStateOf(&p), PodState::kFinished);
  p = Deleting(Pod("a", "n1", "Running"));
  EXPECT_EQ(PodStateOf(&p), PodState::kTerminating);

  EXPECT_EQ(NodeStateOf(nullptr), NodeState::kAbsent);
  json n = Node("n1", "True");
  EXPECT_EQ(NodeStateOf(&n), NodeState::kReady);
  n = Node("n1", "Unknown");
  EXPECT_EQ(NodeStateOf(&n), NodeState::kNotReady);
  n = Node("n1", nullptr);  // no kubelet has reported yet
  EXPECT_EQ(NodeStateOf(&n), NodeState::kNotReady);
}

TEST(TimelineSeriesTest, CountsFollowEachPodThroughItsLife) {
  TimelineSeries s;
  const json node = Node("n1", "True");
  s.OnNode(0, nullptr, &node);
  const json created = Pod("a"), bound = Pod("a", "n1"), running = Pod("a", "n1", "Running"),
             done = Pod("a", "n1", "Succeeded");
  s.OnPod(0, nullptr, &created);
  EXPECT_EQ(s.counts(), (ClusterCounts{.pending = 1, .nodes_ready = 1}));
  s.OnPod(2.5, &created, &bound);
  EXPECT_EQ(s.counts(), (ClusterCounts{.scheduled = 1, .nodes_ready = 1}));
  s.OnPod(4, &bound, &running);
  s.OnPod(4, &running, &running);  // a status heartbeat: no change of state, no point
  s.OnPod(9, &running, &done);
  EXPECT_EQ(s.counts(), (ClusterCounts{.finished = 1, .nodes_ready = 1}));
  s.OnPod(10, &done, nullptr);
  EXPECT_EQ(s.counts(), (ClusterCounts{.nodes_ready = 1}));

  json j = s.ToJson(12.0, false);
  ASSERT_EQ(j["points"].size(), 5u);  // 0, 2.5, 4, 9, 10: one per second-wide bucket
  EXPECT_EQ(j["points"][0], (json{{"t", 0.0},
                                  {"pending", 1},
                                  {"scheduled", 0},
                                  {"running", 0},
                                  {"terminating", 0},
                                  {"finished", 0},
                                  {"nodesReady", 1},
                                  {"nodesNotReady", 0},
                                  {"evictions", 0},
                                  {"preemptions", 0}}));
  EXPECT_EQ(j["points"][1]["t"], 2.5);
  EXPECT_EQ(j["points"][1]["scheduled"], 1);
  EXPECT_EQ(j["points"][2]["running"], 1);
  EXPECT_EQ(j["points"][3]["finished"], 1);
  EXPECT_EQ(j["points"][4]["finished"], 0);
  EXPECT_EQ(j["now"], 12.0);
  EXPECT_FALSE(j.contains("events"));
}

TEST(TimelineSeriesTest, MemoryStaysWithinTheBucketsHoweverLongItRuns) {
  TimelineSeries s(TimelineLimits{.buckets = 16, .first_bucket_seconds = 1, .events = 4});
  const json pending = Pod("a"), bound = Pod("a", "n1");
  // A pod bound and unbound every second for almost three hours.
  for (int t = 0; t < 10000; ++t) {
    s.OnPod(t, t == 0 ? nullptr : (t % 2 ? &pending : &bound), t % 2 ? &bound : &pending);
  }
  EXPECT_LE(s.points(), 16u);
  EXPECT_GE(s.points(), 8u);  // merged pairs: at least half the buckets stay in use
  // The width doubled until the last change fit: 16 buckets of 1024 s cover 16384 s.
  EXPECT_EQ(s.bucket_seconds(), 1024.0);
  json j = s.ToJson(std::nullopt, true);
  ASSERT_FALSE(j["points"].empty());
  // Each bucket holds the counts after its last change: the last point is the state now.
  const json& last = j["points"].back();
  EXPECT_EQ(last["t"], 9999.0);
  EXPECT_EQ(last["scheduled"], s.counts().scheduled);
  EXPECT_EQ(last["pending"], s.counts().pending);
  EXPECT_EQ(j["points"][0]["t"], 1023.0);  // the first bucket's last change
  EXPECT_EQ(j["maxBuckets"], 16);
}

TEST(TimelineSeriesTest, EvictionsAreDeletionsOfDisruptedPodsOrOnNoExecuteTaintedNodes) {
  TimelineSeries s;
  const json up = Node("n1", "True"), down = Node("n1", "Unknown", true), n2 = Node("n2", "True");
  s.OnNode(0, nullptr, &up);
  s.OnNode(0, nullptr, &n2);
  const json a = Pod("a", "n1", "Running"), b = Pod("b", "n2", "Running");
  s.OnPod(0, nullptr, &a);
  s.OnPod(0, nullptr, &b);
  s.OnNode(40, &up, &down);
  EXPECT_EQ(s.counts().nodes_not_ready, 1);
  const json a_deleting = Deleting(a), b_deleting = Deleting(b);
  s.OnPod(340, &a, &a_deleting);  // on the tainted node: evicted
  s.OnPod(341, &b, &b_deleting);  // on a healthy node: a deletion
  json preempted = Pod("c", "n2", "Running");
  preempted["status"]["conditions"] = {
      {{"type", "DisruptionTarget"}, {"status", "True"}, {"reason", "PreemptionByScheduler"}}};
  const json preempted_deleting = Deleting(preempted);
  s.OnPod(342, &preempted, &preempted_deleting);  // counted from the scheduler's event
  s.OnEvent(342, {{"reason", "Preempted"},
                  {"message", "Preempted by pod x on node n2"},
                  {"involvedObject", {{"kind", "Pod"}, {"namespace", "default"}, {"name", "c"}}}});
  s.OnEvent(343, {{"reason", "Scheduled"}, {"involvedObject", {{"kind", "Pod"}}}});
  s.OnNode(600, &down, &up);

  EXPECT_EQ(s.evictions(), 1);
  EXPECT_EQ(s.preemptions(), 1);
  json j = s.ToJson(600.0, true);
  std::vector<std::string> kinds;
  for (const json& e : j["events"])
    kinds.push_back(e["kind"].get<std::string>() + " " + e["object"].get<std::string>());
  EXPECT_EQ(kinds, (std::vector<std::string>{"NodeNotReady n1", "PodEvicted default/a",
                                             "Preempted default/c", "NodeReady n1"}));
  EXPECT_EQ(j["events"][1]["detail"], "from n1 (NoExecute taint)");
  EXPECT_EQ(j["totals"],
            (json{{"evictions", 1}, {"preemptions", 1}, {"nodeNotReady", 1}, {"nodeReady", 1}}));
  int evictions = 0, preemptions = 0;
  for (const json& p : j["points"]) {
    evictions += p["evictions"].get<int>();
    preemptions += p["preemptions"].get<int>();
  }
  EXPECT_EQ(evictions, 1);
  EXPECT_EQ(preemptions, 1);
}

TEST(TimelineSeriesTest, OnlyTheLatestEventsAreKept) {
  TimelineSeries s(TimelineLimits{.events = 3});
  const json up = Node("n1", "True"), down = Node("n1", "False");
  s.OnNode(0, nullptr, &up);
  for (int i = 0; i < 5; ++i) s.OnNode(i + 1, i % 2 ? &down : &up, i % 2 ? &up : &down);
  json j = s.ToJson(std::nullopt, true);
  ASSERT_EQ(j["events"].size(), 3u);
  EXPECT_EQ(j["events"][0]["t"], 3.0);
  EXPECT_EQ(j["eventsDropped"], 2);
  EXPECT_EQ(j["totals"]["nodeNotReady"], 3);  // totals count them all
  EXPECT_EQ(j["totals"]["nodeReady"], 2);
}

TEST(TimelineSeriesTest, TimesThatGoBackCountAsTheLatest) {
  TimelineSeries s;
  const json a = Pod("a"), b = Pod("b");
  s.OnPod(5, nullptr, &a);
  s.OnPod(3, nullptr, &b);  // stamped by another thread a little earlier
  json j = s.ToJson(std::nullopt, false);
  ASSERT_EQ(j["points"].size(), 1u);
  EXPECT_EQ(j["points"][0]["t"], 5.0);
  EXPECT_EQ(j["points"][0]["pending"], 2);
}

}  // namespace
}  // namespace berth::ui
