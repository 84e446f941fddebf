#include "scheduler/scheduler.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "berth/framework/pre_bind_preflight.h"
#include "config/load.h"
#include "framework/in_memory_cluster.h"
#include "plugins/registry.h"
#include "scheduler/fit_error.h"
#include "testing/builders.h"
#include "testing/fake_extender.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::StartsWith;

// ---------------------------------------------------------------- FitError message

NodeStatusMap Statuses(const std::vector<std::pair<std::string, int>>& reason_counts,
                       Code code = Code::kUnschedulable) {
  NodeStatusMap m;
  int node = 0;
  for (const auto& [reason, count] : reason_counts)
    for (int i = 0; i < count; ++i) m["node-" + std::to_string(node++)] = Status(code, reason);
  return m;
}

TEST(FitErrorTest, HistogramIsSortedAsStrings) {
  EXPECT_EQ(ReasonHistogram(Statuses({{"x", 10}, {"y", 2}})), "10 x, 2 y");
  // Sorted as text, not by count or by reason: "10 b" < "2 a".
  EXPECT_EQ(ReasonHistogram(Statuses({{"a", 2}, {"b", 10}})), "10 b, 2 a");
  EXPECT_EQ(ReasonHistogram(Statuses({{"Insufficient memory", 1}, {"Insufficient cpu", 1}})),
            "1 Insufficient cpu, 1 Insufficient memory");
  EXPECT_EQ(ReasonHistogram({}), "");
}

TEST(FitErrorTest, EveryReasonOfANodeCounts) {
  NodeStatusMap m;
  m["n1"] = Status(Code::kUnschedulable,
                   std::vector<std::string>{"Insufficient cpu", "Insufficient memory"});
  m["n2"] = Status::Unschedulable("Insufficient cpu");
  EXPECT_EQ(ReasonHistogram(m), "1 Insufficient memory, 2 Insufficient cpu");
}

TEST(FitErrorTest, MessageFormats) {
  const NodeStatusMap statuses =
      Statuses({{"Insufficient cpu", 2}, {"node(s) had untolerated taint(s)", 1}});
  EXPECT_EQ(FitErrorMessage(3, nullptr, statuses, {}),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.");

  // A PreFilter rejection replaces the histogram.
  Status pre = Status::Unresolvable("node(s) didn't satisfy plugin NodeAffinity");
  EXPECT_EQ(FitErrorMessage(3, &pre, statuses, {}),
            "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity.");

  // PostFilter messages follow after a space, with their own punctuation.
  EXPECT_EQ(FitErrorMessage(
                3, nullptr, statuses,
                {"preemption: 0/3 nodes are available: 3 No preemption victims found for incoming "
                 "pod."}),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming "
            "pod.");
  EXPECT_EQ(
      FitErrorMessage(3, &pre, {}, {"preemption: not eligible due to preemptionPolicy=Never."}),
      "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity. preemption: not "
      "eligible due to preemptionPolicy=Never.");
  // Several PostFilter plugins: their messages joined as one status message.
  EXPECT_EQ(FitErrorMessage(1, nullptr, Statuses({{"Insufficient cpu", 1}}),
                            {"no new claims to deallocate",
                             "preemption: 0/1 nodes are available: 1 No preemption victims found "
                             "for incoming pod."}),
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming "
            "pod.");
  EXPECT_EQ(FitErrorMessage(2, nullptr, {}, {}), "0/2 nodes are available:");
}

// ---------------------------------------------------------------- end to end

class Recorder final : public AttemptObserver {
 public:
  void OnAttempt(const SchedulingAttempt& a) override {
    std::lock_guard lock(mu_);
    attempts_.push_back(a);
  }
  std::vector<SchedulingAttempt> attempts() const {
    std::lock_guard lock(mu_);
    return attempts_;
  }
  SchedulingAttempt Last() const {
    std::lock_guard lock(mu_);
    return attempts_.empty() ? SchedulingAttempt{} : attempts_.back();
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return attempts_.size();
  }

 private:
  mutable std::mutex mu_;
  std::vector<SchedulingAttempt> attempts_;
};

// A scheduler with the default profile over an InMemoryCluster, a fake clock and inline binding.
class Harness {
 public:
  explicit Harness(uint64_t seed = 1,
                   std::function<void(config::SchedulerConfiguration&)> tweak = nullptr,
                   std::vector<PluginRegistration> extra_plugins = {},
                   std::vector<std::shared_ptr<Extender>> extenders = {},
                   SchedulerMetricsSink* metrics = nullptr, size_t detail_nodes = 0)
      : registry_(InTreeRegistry()), config_(config::DefaultConfiguration(registry_)) {
    for (auto& r : extra_plugins) EXPECT_TRUE(registry_.Add(std::move(r)).ok());
    if (tweak) tweak(config_);
    SchedulerOptions so;
    so.config = &config_;
    so.registry = &registry_;
    so.client = &cluster_;
    so.clock = &clock_;
    so.seed = seed;
    so.inline_binding = true;
    so.record_details = true;
    so.detail_nodes = detail_nodes;
    so.extenders = std::move(extenders);
    so.metrics = metrics;
    auto s = Scheduler::Create(so);
    if (!s.ok()) {
      ADD_FAILURE() << s.error().message;
      return;
    }
    sched_ = std::move(s).value();
    cluster_.SetEventHandler(sched_.get());
    sched_->SetObserver(&recorder_);
  }

  // Nodes "<prefix>NNNN" with 4 CPUs, 32Gi, 110 pods.
  void AddNodes(int n, const std::string& prefix = "n") {
    for (int i = 0; i < n; ++i) cluster_.AddNode(NodeObj(Name(prefix, i)));
  }
  static std::string Name(const std::string& prefix, int i) {
    return fmt::format("{}{:04d}", prefix, i);
  }
  static std::shared_ptr<const Node> NodeObj(const std::string& name) {
    return MakeNode().Name(name).Capacity({{"cpu", "4"}, {"memory", "32Gi"}}).Obj();
  }
  static std::shared_ptr<const Pod> SmallPod(const std::string& name) {
    return MakePod().Name(name).Req({{"cpu", "100m"}, {"memory", "100Mi"}}).Obj();
  }

  // Adds a pending pod and runs one scheduling cycle for it; returns its attempt.
  SchedulingAttempt Schedule(std::shared_ptr<const Pod> pod) {
    size_t before = recorder_.size();
    cluster_.AddPod(std::move(pod));
    EXPECT_TRUE(sched_->ScheduleOne(false));
    EXPECT_EQ(recorder_.size(), before + 1);
    return recorder_.Last();
  }

  std::string NodeOf(const std::string& pod) {
    auto p = cluster_.GetPod("default", pod);
    return p ? p->spec.node_name : "<missing>";
  }

  Registry registry_;
  config::SchedulerConfiguration config_;
  InMemoryCluster cluster_;
  FakeClock clock_{TimePoint{} + std::chrono::hours(100)};
  Recorder recorder_;
  std::unique_ptr<Scheduler> sched_;
};

TEST(SchedulerTest, SchedulesAPodAndBindsIt) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(a.profile, "default-scheduler");
  EXPECT_EQ(a.attempt, 1);
  EXPECT_EQ(a.feasible_nodes, 3);
  EXPECT_EQ(a.evaluated_nodes, 3);
  EXPECT_EQ(h.NodeOf("p"), a.node);
  EXPECT_EQ(h.cluster_.write_counts().binds, 1);
  EXPECT_EQ(h.sched_->cache().PodCount(), 1u);
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*h.cluster_.GetPod("default", "p")));
  // The default profile's eight score plugins, with their weights (VolumeBinding's 1 is the
  // StorageCapacityScoring gate's).
  EXPECT_THAT(a.score_weights, ElementsAre(3, 2, 1, 1, 2, 2, 1, 1));
  EXPECT_EQ(a.scored_nodes.size(), 3u);
}

struct NodesToFindCase {
  int nodes;
  std::optional<int32_t> global_percentage;
  std::optional<int32_t> profile_percentage;
  int want_evaluated;
};

// numFeasibleNodesToFind: all nodes below 100; adaptive 50 - N/125 percent (at least 5%), at
// least 100 nodes; an explicit percentage (the profile's first) replaces the adaptive one.
TEST(SchedulerTest, NumberOfNodesEvaluatedWhenAllFit) {
  const std::vector<NodesToFindCase> cases = {
      {50, std::nullopt, std::nullopt, 50},
      {150, std::nullopt, std::nullopt, 100},   // 49% = 73 -> at least 100
      {1000, std::nullopt, std::nullopt, 420},  // 42%
      {5000, std::nullopt, std::nullopt, 500},  // 10%
      {1000, 100, std::nullopt, 1000},
      {1000, 100, 30, 300},
      {1000, std::nullopt, 5, 100},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(fmt::format("{} nodes, global {}, profile {}", c.nodes,
                             c.global_percentage.value_or(-1), c.profile_percentage.value_or(-1)));
    Harness h(1, [&](config::SchedulerConfiguration& cfg) {
      if (c.global_percentage) cfg.percentage_of_nodes_to_score = *c.global_percentage;
      cfg.profiles[0].percentage_of_nodes_to_score = c.profile_percentage;
    });
    ASSERT_NE(h.sched_, nullptr);
    h.AddNodes(c.nodes);
    SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
    EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
    EXPECT_EQ(a.evaluated_nodes, c.want_evaluated);
    EXPECT_EQ(a.feasible_nodes, c.want_evaluated);
    EXPECT_EQ(static_cast<int>(a.scored_nodes.size()), c.want_evaluated);
  }
}

// Each cycle starts where the previous one stopped, wrapping around the node list.
TEST(SchedulerTest, SearchStartRotatesAcrossCycles) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(1000);
  auto expect_range = [&](const SchedulingAttempt& a, std::vector<std::pair<int, int>> ranges) {
    std::vector<std::string> want;
    for (auto [from, to] : ranges)
      for (int i = from; i < to; ++i) want.push_back(Harness::Name("n", i));
    EXPECT_EQ(a.scored_nodes, want);
  };
  expect_range(h.Schedule(Harness::SmallPod("p1")), {{0, 420}});
  expect_range(h.Schedule(Harness::SmallPod("p2")), {{420, 840}});
  expect_range(h.Schedule(Harness::SmallPod("p3")), {{840, 1000}, {0, 260}});
}

// An attempt that keeps only its best scored nodes keeps them as the whole table has them:
// the selected node, then the highest totals, in scoring order; the rest are counted.
TEST(SchedulerTest, DetailNodesKeepTheBestRowsOfTheWholeTable) {
  Harness whole(7), bounded(7, nullptr, {}, {}, nullptr, /*detail_nodes=*/5);
  ASSERT_NE(whole.sched_, nullptr);
  ASSERT_NE(bounded.sched_, nullptr);
  for (Harness* h : {&whole, &bounded}) {
    for (int i = 0; i < 60; ++i) {
      const std::string cpu = std::to_string(2 + i % 7);
      h->cluster_.AddNode(MakeNode()
                              .Name(Harness::Name("n", i))
                              .Capacity({{"cpu", cpu.c_str()}, {"memory", "32Gi"}})
                              .Obj());
    }
  }
  for (int p = 0; p < 3; ++p) {
    auto pod = Harness::SmallPod(Harness::Name("p", p));
    SchedulingAttempt all = whole.Schedule(pod);
    SchedulingAttempt five = bounded.Schedule(pod);
    ASSERT_EQ(five.node, all.node);
    ASSERT_EQ(five.scored_nodes.size(), 5u);
    EXPECT_EQ(five.scored_nodes_omitted, all.scored_nodes.size() - 5);
    EXPECT_EQ(all.scored_nodes_omitted, 0u);
    // The best five of the whole table, by the same order, listed in scoring order.
    std::vector<size_t> order(all.scored_nodes.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
      const bool cx = all.scored_nodes[x] == all.node, cy = all.scored_nodes[y] == all.node;
      if (cx != cy) return cx;
      return all.scores.totals[x] > all.scores.totals[y];
    });
    order.resize(5);
    std::sort(order.begin(), order.end());
    for (size_t k = 0; k < 5; ++k) {
      const size_t i = order[k];
      EXPECT_EQ(five.scored_nodes[k], all.scored_nodes[i]);
      EXPECT_EQ(five.scores.totals[k], all.scores.totals[i]);
      for (size_t pl = 0; pl < all.scores.plugin_scores.size(); ++pl) {
        if (all.scores.plugin_scores[pl].empty()) continue;
        EXPECT_EQ(five.scores.plugin_scores[pl][k], all.scores.plugin_scores[pl][i]);
      }
    }
  }
}

// Rejected nodes count as processed too.
TEST(SchedulerTest, RejectedNodesAdvanceTheStartIndex) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  // Nodes n0000..n0009 cannot host the big pod.
  for (int i = 0; i < 10; ++i) {
    h.cluster_.AddPod(MakePod()
                          .Name(Harness::Name("filler", i))
                          .Node(Harness::Name("n", i))
                          .Req({{"cpu", "3500m"}})
                          .Obj());
  }
  // 200 nodes: 49% = 98 -> 100 feasible nodes wanted; 10 rejected on the way.
  SchedulingAttempt a = h.Schedule(MakePod().Name("big").Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(a.feasible_nodes, 100);
  EXPECT_EQ(a.evaluated_nodes, 110);
  EXPECT_EQ(a.filter_statuses.size(), 10u);
  EXPECT_EQ(a.scored_nodes.front(), "n0010");
  EXPECT_EQ(a.scored_nodes.back(), "n0109");
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("next"));
  EXPECT_EQ(b.scored_nodes.front(), "n0110");
}

// A search that wraps past the end of the node list keeps the rejected nodes on both sides of
// the wrap and stops at the same node a sequential scan would.
TEST(SchedulerTest, SearchAcrossTheWrapKeepsStatusesAndOrder) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  std::vector<int> full;
  for (int i = 190; i < 200; ++i) full.push_back(i);
  for (int i = 0; i < 5; ++i) full.push_back(i);
  for (int i : full) {
    h.cluster_.AddPod(MakePod()
                          .Name(Harness::Name("filler", i))
                          .Node(Harness::Name("n", i))
                          .Req({{"cpu", "3500m"}})
                          .Obj());
  }
  // The first pod fits everywhere: n0000..n0099, the next search starts at n0100.
  SchedulingAttempt first = h.Schedule(Harness::SmallPod("first"));
  ASSERT_EQ(first.scored_nodes.back(), "n0099");
  SchedulingAttempt a = h.Schedule(MakePod().Name("big").Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(a.feasible_nodes, 100);
  EXPECT_EQ(a.evaluated_nodes, 115);
  ASSERT_EQ(a.filter_statuses.size(), full.size());
  for (int i : full) EXPECT_EQ(a.filter_statuses.count(Harness::Name("n", i)), 1u) << i;
  std::vector<std::string> want;
  for (int i = 100; i < 190; ++i) want.push_back(Harness::Name("n", i));
  for (int i = 5; i < 15; ++i) want.push_back(Harness::Name("n", i));
  EXPECT_EQ(a.scored_nodes, want);
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("next"));
  EXPECT_EQ(b.scored_nodes.front(), "n0015");
}

// Nodes outside a PreFilterResult are rejected without being processed: they neither count as
// evaluated nor move the start of the next search (kube-scheduler keeps them as the "absent"
// status).
TEST(SchedulerTest, NodesOutsideAPreFilterResultAreNotProcessed) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  // A field requirement takes exactly one value; two terms pin two nodes.
  NodeSelectorRequirement pin5{"metadata.name", "In", {"n0005"}};
  NodeSelectorRequirement pin7{"metadata.name", "In", {"n0007"}};
  Affinity affinity;
  affinity.node_affinity =
      NodeAffinity{NodeSelector{{NodeSelectorTerm{{}, {pin5}}, NodeSelectorTerm{{}, {pin7}}}}, {}};
  SchedulingAttempt a =
      h.Schedule(MakePod().Name("pinned").Req({{"cpu", "100m"}}).Affinity(affinity).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(a.feasible_nodes, 2);
  EXPECT_EQ(a.evaluated_nodes, 2);
  // The next search starts two nodes further.
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("next"));
  ASSERT_FALSE(b.scored_nodes.empty());
  EXPECT_EQ(b.scored_nodes.front(), "n0002");
}

// A recorded placement lists only the nodes Filter ran on: a pod pinned to one node of 200
// (a DaemonSet's pod) does not carry 199 "outside" rejections.
TEST(SchedulerTest, APlacedPodsRecordLeavesOutNodesOutsideThePreFilterResult) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(200);
  NodeSelectorRequirement pin{"metadata.name", "In", {"n0042"}};
  Affinity affinity;
  affinity.node_affinity = NodeAffinity{NodeSelector{{NodeSelectorTerm{{}, {pin}}}}, {}};
  SchedulingAttempt a =
      h.Schedule(MakePod().Name("pinned").Req({{"cpu", "100m"}}).Affinity(affinity).Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(a.node, "n0042");
  EXPECT_TRUE(a.filter_statuses.empty());
  // The same pod that does not fit still counts the outside nodes in its FitError.
  SchedulingAttempt b =
      h.Schedule(MakePod().Name("big").Req({{"cpu", "500"}}).Affinity(affinity).Obj());
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(b.filter_statuses.size(), 200u);
}

TEST(SchedulerTest, PreFilterResultOutsideNodesInTheFitError) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  NodeSelectorRequirement pin{"metadata.name", "In", {"n0001"}};
  Affinity affinity;
  affinity.node_affinity = NodeAffinity{NodeSelector{{NodeSelectorTerm{{}, {pin}}}}, {}};
  SchedulingAttempt a =
      h.Schedule(MakePod().Name("pinned").Req({{"cpu", "5"}}).Affinity(affinity).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_THAT(a.message, StartsWith("0/3 nodes are available: 1 Insufficient cpu, 2 node(s) "
                                    "didn't satisfy plugin(s) [NodeAffinity]. preemption: "));
}

// A PreBind plugin that notes the nomination the cluster holds for the pod while it runs, and
// says in PreBindPreFlight whether it has work.
class SeesNomination final : public PreBindPlugin, public PreBindPreFlight {
 public:
  SeesNomination(Handle& handle, std::map<std::string, std::string>* seen)
      : handle_(&handle), seen_(seen) {}
  std::string_view Name() const override { return "SeesNomination"; }
  Status PreBindPreFlightCheck(CycleState&, const PodInfo& pod, const std::string&) override {
    return pod->metadata.labels.count("work") ? Status::Success() : Status::Skip();
  }
  Status PreBind(CycleState&, const PodInfo& pod, const std::string&) override {
    Ptr<Pod> live = handle_->listers().GetPod(pod->metadata.namespace_, pod->metadata.name);
    (*seen_)[pod->metadata.name] = live ? live->status.nominated_node_name : "?";
    return Status::Success();
  }

 private:
  Handle* handle_;
  std::map<std::string, std::string>* seen_;
};

// NominatedNodeNameForExpectation: a pod whose PreBind has work shows its node as
// nominatedNodeName before PreBind runs, and binding clears it; a pod with nothing to do in
// PreBind is bound without the extra write.
TEST(SchedulerTest, APodWhosePreBindHasWorkIsNominatedBeforeBinding) {
  std::map<std::string, std::string> seen;
  PluginRegistration reg;
  reg.name = "SeesNomination";
  reg.factory = [&seen](const PluginArgs*, Handle& h) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<SeesNomination>(h, &seen));
  };
  std::vector<PluginRegistration> extra;
  extra.push_back(std::move(reg));
  Harness h(
      1,
      [](config::SchedulerConfiguration& c) {
        c.profiles[0].plugins.pre_bind.enabled.push_back({"SeesNomination", 0});
      },
      std::move(extra));
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(MakePod().Name("slow").Label("work", "y").Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(seen["slow"], a.node);
  EXPECT_EQ(h.cluster_.GetPod("default", "slow")->status.nominated_node_name, "");
  SchedulingAttempt b = h.Schedule(MakePod().Name("quick").Obj());
  ASSERT_EQ(b.outcome, SchedulingAttempt::Outcome::kScheduled) << b.message;
  EXPECT_EQ(seen["quick"], "");
}

TEST(SchedulerTest, SeededTieBreakIsReproducible) {
  auto run = [](uint64_t seed) {
    Harness h(seed);
    h.AddNodes(20);
    std::vector<std::string> placed;
    for (int i = 0; i < 12; ++i) {
      SchedulingAttempt a = h.Schedule(Harness::SmallPod("p" + std::to_string(i)));
      EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
      placed.push_back(a.node);
    }
    return placed;
  };
  const auto first = run(7);
  EXPECT_EQ(run(7), first);
  // Equal nodes tie: another seed breaks the ties differently.
  EXPECT_NE(run(8), first);
  // Every pod went to a node no other pod had (an empty node always scores higher).
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), first.size());
}

TEST(SchedulerTest, PodOfAnotherSchedulerIsNeverAttempted) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  h.cluster_.AddPod(MakePod().Name("theirs").SchedulerName("other-scheduler").Obj());
  EXPECT_FALSE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.size(), 0u);
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.active + c.backoff + c.unschedulable + c.gated, 0u);
  EXPECT_EQ(h.NodeOf("theirs"), "");

  // Even if such a pod reaches the queue, ScheduleOne drops it without an attempt.
  h.sched_->queue().Add(PodInfo::Create(h.cluster_.GetPod("default", "theirs")));
  EXPECT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.size(), 0u);
  EXPECT_EQ(h.NodeOf("theirs"), "");
  EXPECT_EQ(h.cluster_.write_counts().binds, 0);
}

TEST(SchedulerTest, NoNodes) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message, "no nodes available to schedule pods");
}

// The node vanished between the cycle and the bind: the bind fails, the assumed pod is
// forgotten and the pod is retried after its backoff.
TEST(SchedulerTest, BindingFailureForgetsTheAssumedPodAndRequeues) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  auto ghost = Harness::NodeObj("ghost");
  h.sched_->OnNodeAdd(ghost);  // known to the scheduler's cache only
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_EQ(a.message, "running Bind plugin \"DefaultBinder\": nodes \"ghost\" not found");
  EXPECT_EQ(h.NodeOf("p"), "");
  EXPECT_EQ(h.sched_->cache().PodCount(), 0u);
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*h.cluster_.GetPod("default", "p")));
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.active, 0u);
  // The failure is recorded on the pod.
  auto live = h.cluster_.GetPod("default", "p");
  ASSERT_FALSE(live->status.conditions.empty());
  EXPECT_EQ(live->status.conditions.back().type, "PodScheduled");
  EXPECT_EQ(live->status.conditions.back().status, "False");
  EXPECT_EQ(live->status.conditions.back().reason, "SchedulerError");

  // A real node appears, the ghost goes; after the backoff the pod binds.
  h.sched_->OnNodeDelete(ghost);
  h.cluster_.AddNode(Harness::NodeObj("real"));
  EXPECT_FALSE(h.sched_->ScheduleOne(false));  // still backing off
  auto expiry = h.sched_->queue().NextBackoffExpiry();
  ASSERT_TRUE(expiry.has_value());
  EXPECT_EQ(*expiry - h.clock_.Now(), std::chrono::seconds(1));
  h.clock_.Set(*expiry);
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  SchedulingAttempt b = h.recorder_.Last();
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(b.attempt, 2);
  EXPECT_EQ(h.NodeOf("p"), "real");
}

TEST(SchedulerTest, PreemptionNominatesAndThePodBindsNextTime) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
  h.cluster_.AddPod(
      MakePod().Name("victim").Node("n1").Priority(0).StartTime(1000).Req({{"cpu", "2"}}).Obj());
  h.clock_.Advance(std::chrono::seconds(5));
  SchedulingAttempt a = h.Schedule(MakePod().Name("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  // Preemption succeeded, so the message carries no "preemption:" part.
  EXPECT_EQ(a.message, "0/1 nodes are available: 1 Insufficient cpu.");
  ASSERT_TRUE(a.nominating.has_value());
  EXPECT_EQ(a.nominating->node_name, "n1");
  EXPECT_THAT(a.victims, ElementsAre("default/victim"));

  // The victim is gone, the preemptor is nominated (in the cluster and in the queue).
  EXPECT_EQ(h.cluster_.GetPod("default", "victim"), nullptr);
  EXPECT_EQ(h.cluster_.write_counts().deletes, 1);
  EXPECT_EQ(h.cluster_.GetPod("default", "boss")->status.nominated_node_name, "n1");
  ASSERT_EQ(h.sched_->queue().NominatedPodsForNode("n1").size(), 1u);
  EXPECT_EQ(h.sched_->queue().NominatedPodsForNode("n1")[0]->pod->metadata.name, "boss");
  EXPECT_EQ(h.sched_->cache().PodCount(), 0u);

  // The victim's deletion happened during the cycle, so the pod waits out its backoff only.
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.backoff, 1u);
  EXPECT_EQ(c.unschedulable, 0u);
  EXPECT_FALSE(h.sched_->ScheduleOne(false));
  h.clock_.Advance(std::chrono::seconds(1));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  SchedulingAttempt b = h.recorder_.Last();
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kScheduled) << b.message;
  EXPECT_EQ(b.node, "n1");
  EXPECT_EQ(b.attempt, 2);
  EXPECT_EQ(h.NodeOf("boss"), "n1");
  EXPECT_EQ(h.cluster_.GetPod("default", "boss")->status.nominated_node_name, "");
  EXPECT_THAT(h.sched_->queue().NominatedPodsForNode("n1"), IsEmpty());
  EXPECT_FALSE(h.sched_->queue().HasNominatedPods());
}

// A lower-priority pod must not take the room a nominated preemptor is waiting for.
TEST(SchedulerTest, NominatedRoomIsKeptFromLowerPriorityPods) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(MakeNode().Name("n1").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
  h.cluster_.AddPod(MakePod().Name("victim").Node("n1").StartTime(1).Req({{"cpu", "2"}}).Obj());
  SchedulingAttempt a = h.Schedule(MakePod().Name("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
  ASSERT_TRUE(a.nominating.has_value());
  // The room is free now, but nominated to "boss".
  SchedulingAttempt b = h.Schedule(MakePod().Name("small").Priority(1).Req({{"cpu", "1"}}).Obj());
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_THAT(b.message, StartsWith("0/1 nodes are available: 1 Insufficient cpu."));
  EXPECT_EQ(h.NodeOf("small"), "");
}

TEST(SchedulerTest, UnschedulablePodWaitsForAClusterChange) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  for (int i = 0; i < 2; ++i)
    h.cluster_.AddPod(MakePod()
                          .Name(Harness::Name("filler", i))
                          .Node(Harness::Name("n", i))
                          .Req({{"cpu", "2"}})
                          .Obj());
  SchedulingAttempt a = h.Schedule(MakePod().Name("huge").Req({{"cpu", "3"}}).Obj());
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message,
            "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 "
            "No preemption victims found for incoming pod.");
  EXPECT_EQ(a.filter_statuses.size(), 2u);
  EXPECT_EQ(a.filter_statuses.at("n0000").plugin(), "NodeResourcesFit");
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.unschedulable, 1u);
  // Time alone does not bring it back; a new node does.
  h.clock_.Advance(std::chrono::seconds(30));
  h.sched_->queue().FlushBackoffQCompleted();
  EXPECT_FALSE(h.sched_->ScheduleOne(false));
  h.cluster_.AddNode(MakeNode().Name("big").Capacity({{"cpu", "128"}, {"memory", "1Ti"}}).Obj());
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("huge"), "big");
}

class RecordingSink final : public SchedulerMetricsSink {
 public:
  void ExtensionPoint(std::string_view profile, std::string_view point, const Status& status,
                      Duration) override {
    std::lock_guard lock(mu);
    points.push_back(fmt::format("{}/{}/{}", profile, point, CodeName(status.code())));
  }
  void IncomingPod(std::string_view queue, std::string_view event) override {
    std::lock_guard lock(mu);
    incoming.push_back(fmt::format("{}/{}", queue, event));
  }
  std::mutex mu;
  std::vector<std::string> points, incoming;
};

TEST(SchedulerTest, ExtensionPointsAndIncomingPodsReachTheMetricsSink) {
  RecordingSink sink;
  Harness h(1, nullptr, {}, {}, &sink);
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  ASSERT_EQ(h.Schedule(Harness::SmallPod("p")).outcome, SchedulingAttempt::Outcome::kScheduled);
  const std::string d = "default-scheduler/";
  EXPECT_THAT(sink.points,
              ElementsAre(d + "PreFilter/Success", d + "PreScore/Success", d + "Score/Success",
                          d + "Reserve/Success", d + "Permit/Success", d + "PreBind/Success",
                          d + "Bind/Success", d + "PostBind/Success"));
  EXPECT_THAT(sink.incoming, ElementsAre("active/PodAdd"));

  sink.points.clear();
  ASSERT_EQ(h.Schedule(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj()).outcome,
            SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_THAT(sink.points, ElementsAre(d + "PreFilter/Success", d + "PostFilter/Unschedulable"));
  EXPECT_THAT(sink.incoming, ElementsAre("active/PodAdd", "active/PodAdd",
                                         "unschedulable/ScheduleAttemptFailure"));
}

// Records the plugin, event and hint measurements (keys without the profile).
class PluginSink final : public SchedulerMetricsSink {
 public:
  class Series final : public PluginSeries {
   public:
    Series(PluginSink* sink, std::string key) : sink_(sink), key_(std::move(key)) {}
    void Executed(Code, Duration) override {
      std::lock_guard lock(sink_->mu);
      ++sink_->executions[key_];
    }
    void Evaluated(uint64_t n) override {
      std::lock_guard lock(sink_->mu);
      sink_->evaluations[key_] += n;
    }

   private:
    PluginSink* sink_;
    std::string key_;
  };
  void ExtensionPoint(std::string_view, std::string_view, const Status&, Duration) override {}
  void IncomingPod(std::string_view, std::string_view) override {}
  PluginSeries* Plugin(std::string_view, std::string_view point, std::string_view plugin) override {
    std::lock_guard lock(mu);
    series.push_back(std::make_unique<Series>(this, fmt::format("{}/{}", point, plugin)));
    return series.back().get();
  }
  void EventHandling(std::string_view event, Duration) override {
    std::lock_guard lock(mu);
    ++events[std::string(event)];
  }
  void QueueingHint(std::string_view plugin, std::string_view event, std::string_view hint,
                    Duration) override {
    std::lock_guard lock(mu);
    hints.push_back(fmt::format("{}/{}/{}", plugin, event, hint));
  }
  std::mutex mu;
  std::vector<std::unique_ptr<Series>> series;
  std::map<std::string, uint64_t> evaluations, executions, events;
  std::vector<std::string> hints;
};

TEST(SchedulerTest, PluginEvaluationsCountWhereEachNodeStopped) {
  PluginSink sink;
  Harness h(1, nullptr, {}, {}, &sink);
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(20);
  EXPECT_EQ(sink.events["NodeAdd"], 20u);
  ASSERT_EQ(h.Schedule(Harness::SmallPod("p")).outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(sink.events["UnscheduledPodAdd"], 1u);
  EXPECT_EQ(sink.events["AssignedPodAdd"], 1u);  // the binding, as the informer reports it
  // Every node passed: each Filter plugin not skipped ran on all 20; each Score plugin that ran
  // scored all 20.
  EXPECT_EQ(sink.evaluations["Filter/NodeResourcesFit"], 20u);
  EXPECT_EQ(sink.evaluations["PreFilter/NodeResourcesFit"], 1u);
  int scored = 0;
  for (const auto& [key, n] : sink.evaluations) {
    if (key.rfind("Score/", 0) != 0 || n == 0) continue;
    ++scored;
    EXPECT_EQ(n, 20u) << key;
  }
  EXPECT_GT(scored, 0);

  // NodeResourcesFit rejects every node: the plugins before it ran on all 20 (unless skipped),
  // those after it on none.
  const std::vector<std::string> filters = h.sched_->profiles()[0]->ListPlugins("Filter");
  const auto fit = std::find(filters.begin(), filters.end(), "NodeResourcesFit") - filters.begin();
  ASSERT_LT(fit, static_cast<long>(filters.size()));
  auto before = sink.evaluations;
  ASSERT_EQ(h.Schedule(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj()).outcome,
            SchedulingAttempt::Outcome::kUnschedulable);
  for (long i = 0; i < static_cast<long>(filters.size()); ++i) {
    const std::string key = "Filter/" + filters[i];
    const uint64_t delta = sink.evaluations[key] - before[key];
    if (i > fit) {
      EXPECT_EQ(delta, 0u) << key;
    } else if (i == fit) {
      EXPECT_EQ(delta, 20u) << key;
    } else {
      EXPECT_TRUE(delta == 0 || delta == 20) << key << " " << delta;
    }
  }
  // Its hint is asked about new nodes: one too small is skipped, one big enough queues it.
  h.cluster_.AddNode(MakeNode().Name("tiny").Capacity({{"cpu", "1"}, {"memory", "1Gi"}}).Obj());
  h.cluster_.AddNode(MakeNode().Name("big").Capacity({{"cpu", "128"}, {"memory", "1Ti"}}).Obj());
  EXPECT_THAT(sink.hints,
              ElementsAre("NodeResourcesFit/NodeAdd/QueueSkip", "NodeResourcesFit/NodeAdd/Queue"));
}

TEST(SchedulerTest, PluginDurationsAreSampledInAFractionOfCycles) {
  PluginSink sink;
  Harness h(7, nullptr, {}, {}, &sink);
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(20);
  constexpr int kPods = 200;
  // Each pod carries a label of its own, so no node result is reused from the pod before and
  // Filter runs on every examined node.
  for (int i = 0; i < kPods; ++i)
    ASSERT_EQ(h.Schedule(MakePod()
                             .Name(fmt::format("p{}", i))
                             .Label("replica", std::to_string(i))
                             .Req({{"cpu", "100m"}, {"memory", "100Mi"}})
                             .Obj())
                  .outcome,
              SchedulingAttempt::Outcome::kScheduled);
  // NodeResourcesFit's PreFilter runs once per cycle: its timed calls are the sampled cycles,
  // about kPluginMetricsSamplePercent of them (a binomial draw: mean 20, sd 4.2 here).
  const uint64_t sampled = sink.executions["PreFilter/NodeResourcesFit"];
  EXPECT_GE(sampled, 5u);
  EXPECT_LE(sampled, 40u);
  // Within a sampled cycle, Filter is timed on nodes 0 and 16 of the 20 examined.
  EXPECT_EQ(sink.executions["Filter/NodeResourcesFit"], 2 * sampled);
  // The binding cycle's plugins are timed in the same cycles.
  EXPECT_EQ(sink.executions["Bind/DefaultBinder"], sampled);
  // Evaluations are counted in every cycle.
  EXPECT_EQ(sink.evaluations["PreFilter/NodeResourcesFit"], static_cast<uint64_t>(kPods));
}

// Queueing hints: only a change the rejecting plugin says can help moves the pod.
TEST(SchedulerTest, QueueingHintsMoveOnlyPodsAChangeCanHelp) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(1);
  h.cluster_.AddPod(MakePod().Name("filler").Node("n0000").Req({{"cpu", "2"}}).Obj());
  h.cluster_.AddPod(MakePod().Name("other-pending").SchedulerName("elsewhere").Obj());
  SchedulingAttempt a = h.Schedule(MakePod().Name("huge").Req({{"cpu", "3"}}).Obj());
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  auto unschedulable = [&] { return h.sched_->queue().counts().unschedulable; };
  ASSERT_EQ(unschedulable(), 1u);

  // A node too small for the pod, a relabelled node, a heartbeat, the deletion of a pod that
  // held nothing: none can help NodeResourcesFit's rejection.
  h.cluster_.AddNode(MakeNode().Name("tiny").Capacity({{"cpu", "2"}, {"memory", "8Gi"}}).Obj());
  h.cluster_.AddNode(MakeNode()
                         .Name("n0000")
                         .Label("team", "x")
                         .Capacity({{"cpu", "4"}, {"memory", "32Gi"}})
                         .Obj());
  h.cluster_.AddNode(MakeNode()
                         .Name("n0000")
                         .Label("team", "x")
                         .Capacity({{"cpu", "4"}, {"memory", "32Gi"}})
                         .Obj());
  h.cluster_.RemovePod("default", "other-pending");
  EXPECT_EQ(unschedulable(), 1u);

  // The assigned filler going away frees room: the pod moves and binds where it was.
  h.cluster_.RemovePod("default", "filler");
  EXPECT_EQ(unschedulable(), 0u);
  h.clock_.Advance(std::chrono::seconds(30));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("huge"), "n0000");
}

TEST(SchedulerTest, TaintRejectionWaitsForATolerableNode) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  auto tainted = [](bool with_taint, bool labelled) {
    auto b = MakeNode().Name("t").Capacity({{"cpu", "4"}, {"memory", "32Gi"}});
    if (with_taint) b.Taint("dedicated", "db", "NoSchedule");
    if (labelled) b.Label("disk", "ssd");
    return b.Obj();
  };
  h.cluster_.AddNode(tainted(true, false));
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.filter_statuses.at("t").plugin(), "TaintToleration");
  h.cluster_.AddNode(tainted(true, true));  // relabelled, still tainted
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
  h.cluster_.AddNode(
      MakeNode().Name("also-tainted").Taint("x", "y", "NoExecute").Capacity({{"cpu", "4"}}).Obj());
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
  h.cluster_.AddNode(tainted(false, true));  // the taint is removed
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 0u);
}

// With informer lag the scheduler acts on what it has seen: a pod it has not seen is not
// scheduled, and a bound pod stays assumed (holding its room) until the bind is seen.
TEST(SchedulerTest, InformerLagKeepsTheAssumedPodUntilTheBindIsSeen) {
  Harness h;
  ASSERT_NE(h.sched_, nullptr);
  h.cluster_.AddNode(
      MakeNode().Name("only").Capacity({{"cpu", "1"}, {"memory", "1Gi"}, {"pods", "110"}}).Obj());
  h.cluster_.SetDelayedDelivery(true);
  h.cluster_.AddPod(MakePod().Name("first").Req({{"cpu", "600m"}}).Obj());
  h.cluster_.AddPod(MakePod().Name("second").Req({{"cpu", "600m"}}).Obj());
  EXPECT_FALSE(h.sched_->ScheduleOne(false));  // nothing seen yet
  EXPECT_EQ(h.cluster_.DeliverPendingEvents(), 2u);

  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.NodeOf("first"), "only");
  Ptr<Pod> bound = h.cluster_.GetPod("default", "first");
  EXPECT_TRUE(h.sched_->cache().IsAssumedPod(*bound));
  EXPECT_EQ(h.cluster_.pending_events(), 1u);  // the bind, not yet seen

  // The assumed pod holds its room: the second does not fit beside it.
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.Last().outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(h.NodeOf("second"), "");

  h.cluster_.DeliverPendingEvents();
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*bound));
  EXPECT_EQ(h.sched_->cache().PodCount(), 1u);
}

// ---------------------------------------------------------------- extenders

using testing::FakeExtender;

std::shared_ptr<FakeExtender> FilterExt(std::string name, std::map<std::string, std::string> reject,
                                        std::map<std::string, std::string> unresolvable = {}) {
  auto e = std::make_shared<FakeExtender>(std::move(name));
  e->filter = true;
  e->reject = std::move(reject);
  e->reject_unresolvable = std::move(unresolvable);
  return e;
}

TEST(SchedulerExtenderTest, FilterRunsInOrderOnTheSurvivors) {
  auto e1 = FilterExt("http://e1", {{"n0000", "e1 says no"}});
  auto e2 = FilterExt("http://e2", {{"n0001", "e2 says no"}});
  Harness h(1, nullptr, {}, {e1, e2});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(a.node, "n0002");
  EXPECT_EQ(a.feasible_nodes, 1);
  EXPECT_EQ(a.evaluated_nodes, 3);
  EXPECT_EQ(e1->filter_calls, 1);
  EXPECT_EQ(e2->filter_calls, 1);
  EXPECT_EQ(a.filter_statuses.at("n0000").plugin(), "http://e1");
}

TEST(SchedulerExtenderTest, RejectionsReachTheMessageAndPreemptionSkipsUnresolvable) {
  auto e = FilterExt("http://e", {{"n0000", "busy"}}, {{"n0001", "wrong rack"}});
  Harness h(1, nullptr, {}, {e});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  // n0000 failed as plainly Unschedulable: a preemption candidate, with nothing to evict there.
  EXPECT_EQ(a.message,
            "0/2 nodes are available: 1 busy, 1 wrong rack. preemption: 0/2 nodes are available: "
            "1 No preemption victims found for incoming pod, 1 Preemption is not helpful for "
            "scheduling.");
  EXPECT_EQ(a.filter_statuses.at("n0001").code(), Code::kUnschedulableAndUnresolvable);
  // Extender rejections register for no event: any change brings the pod back.
  EXPECT_EQ(h.sched_->queue().counts().unschedulable, 1u);
  e->reject.clear();
  e->reject_unresolvable.clear();
  h.cluster_.AddPod(MakePod().Name("elsewhere").Node("n0000").Obj());
  h.clock_.Advance(std::chrono::seconds(2));
  h.sched_->queue().FlushBackoffQCompleted();
  ASSERT_TRUE(h.sched_->ScheduleOne(false));
  EXPECT_EQ(h.recorder_.Last().outcome, SchedulingAttempt::Outcome::kScheduled);
}

TEST(SchedulerExtenderTest, FilterErrorFailsTheAttemptUnlessIgnorable) {
  auto broken = FilterExt("http://broken", {});
  broken->fail = true;
  {
    Harness h(1, nullptr, {}, {broken});
    ASSERT_NE(h.sched_, nullptr);
    h.AddNodes(2);
    SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
    EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kError);
    EXPECT_THAT(a.message, HasSubstr("http://broken failed"));
    EXPECT_EQ(h.NodeOf("p"), "");
  }
  broken->ignorable = true;
  auto after = FilterExt("http://after", {{"n0000", "no"}});
  Harness h(1, nullptr, {}, {broken, after});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(a.node, "n0001");
}

TEST(SchedulerExtenderTest, UninterestedExtenderIsNotAsked) {
  auto e = FilterExt("http://e", {{"n0000", "no"}, {"n0001", "no"}});
  e->interested = false;
  Harness h(1, nullptr, {}, {e});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(2);
  EXPECT_EQ(h.Schedule(Harness::SmallPod("p")).outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(e->filter_calls, 0);
}

TEST(SchedulerExtenderTest, PrioritizeWeightDecidesAndErrorsAreIgnored) {
  auto pick = std::make_shared<FakeExtender>("http://pick");
  pick->prioritize = true;
  pick->weight = 5;
  pick->scores = {{"n0002", 10}};
  auto broken = std::make_shared<FakeExtender>("http://broken");
  broken->prioritize = true;
  broken->fail = true;
  Harness h(1, nullptr, {}, {pick, broken});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(3);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  ASSERT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled) << a.message;
  EXPECT_EQ(a.node, "n0002");
  // 10 x weight 5 x (100 / 10) on top of the plugins' totals.
  const auto& contrib = a.scores.extender_scores.at("http://pick");
  for (size_t i = 0; i < a.scored_nodes.size(); ++i)
    EXPECT_EQ(contrib[i], a.scored_nodes[i] == "n0002" ? 500 : 0) << a.scored_nodes[i];
  EXPECT_EQ(a.scores.extender_scores.count("http://broken"), 0u);
  EXPECT_EQ(broken->prioritize_calls, 1);
}

TEST(SchedulerExtenderTest, BinderExtenderBindsInsteadOfThePlugins) {
  auto binder = std::make_shared<FakeExtender>("http://binder");
  binder->bind = true;
  Harness h(1, nullptr, {}, {binder});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(1);
  SchedulingAttempt a = h.Schedule(Harness::SmallPod("p"));
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_THAT(binder->bound, ElementsAre("default/p@n0000"));
  // The DefaultBinder did not write the binding: the extender owns it.
  EXPECT_EQ(h.cluster_.write_counts().binds, 0);
  binder->fail = true;
  SchedulingAttempt b = h.Schedule(Harness::SmallPod("q"));
  EXPECT_EQ(b.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_THAT(b.message, HasSubstr("http://binder failed"));
  // An ignorable binder that fails hands the pod to the Bind plugins.
  binder->ignorable = true;
  SchedulingAttempt c = h.Schedule(Harness::SmallPod("r"));
  EXPECT_EQ(c.outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(h.cluster_.write_counts().binds, 1);
}

TEST(SchedulerExtenderTest, PreemptVerbNarrowsTheCandidates) {
  auto e = std::make_shared<FakeExtender>("http://preempt");
  e->preempt = true;
  e->preempt_allowed = {"n2"};
  Harness h(1, nullptr, {}, {e});
  ASSERT_NE(h.sched_, nullptr);
  for (std::string n : {"n1", "n2"}) {
    h.cluster_.AddNode(MakeNode().Name(n).Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj());
    h.cluster_.AddPod(
        MakePod().Name("v-" + n).Node(n).Priority(0).StartTime(1000).Req({{"cpu", "2"}}).Obj());
  }
  SchedulingAttempt a = h.Schedule(MakePod().Name("boss").Priority(100).Req({{"cpu", "2"}}).Obj());
  ASSERT_TRUE(a.nominating.has_value());
  EXPECT_EQ(a.nominating->node_name, "n2");
  EXPECT_THAT(a.victims, ElementsAre("default/v-n2"));
  EXPECT_EQ(e->preempt_calls, 1);
}

// ---------------------------------------------------------------- Permit in the binding cycle

// ---------------------------------------------------------------- misbehaving plugins

// Throws from Filter for pods named "boom-filter" and from Score for "boom-score".
class Thrower final : public FilterPlugin, public ScorePlugin {
 public:
  std::string_view Name() const override { return "Thrower"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo&) const override {
    if (pod->metadata.name == "boom-filter") throw std::runtime_error("filter exploded");
    return Status::Success();
  }
  Status Score(const CycleState&, const PodInfo& pod, const NodeInfo&,
               int64_t* score) const override {
    if (pod->metadata.name == "boom-score") throw 42;
    *score = 1;
    return Status::Success();
  }
};

TEST(SchedulerTest, APluginThatThrowsFailsOnlyThatPodsAttempt) {
  Harness h(1,
            [](config::SchedulerConfiguration& cfg) {
              cfg.profiles[0].plugins.multi_point.enabled.push_back({"Thrower", 1});
            },
            {PluginRegistration{"Thrower",
                                [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
                                  return std::unique_ptr<Plugin>(std::make_unique<Thrower>());
                                },
                                {}}});
  ASSERT_NE(h.sched_, nullptr);
  h.AddNodes(40);  // enough for the parallel filter and score loops
  SchedulingAttempt f = h.Schedule(Harness::SmallPod("boom-filter"));
  EXPECT_EQ(f.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_THAT(f.message, HasSubstr("a plugin threw: filter exploded"));
  SchedulingAttempt s = h.Schedule(Harness::SmallPod("boom-score"));
  EXPECT_EQ(s.outcome, SchedulingAttempt::Outcome::kError);
  EXPECT_THAT(s.message, HasSubstr("a plugin threw"));
  // The scheduler goes on with everyone else.
  EXPECT_EQ(h.Schedule(Harness::SmallPod("fine")).outcome, SchedulingAttempt::Outcome::kScheduled);
}

// Holds every pod at Permit for 30 s.
class HoldAll final : public PermitPlugin {
 public:
  std::string_view Name() const override { return "HoldAll"; }
  PermitDecision Permit(CycleState&, const PodInfo&, const std::string&) override {
    return {Status::Wait(), std::chrono::seconds(30)};
  }
};

class PermitHarness : public Harness {
 public:
  PermitHarness()
      : Harness(
            1,
            [](config::SchedulerConfiguration& cfg) {
              cfg.profiles[0].plugins.permit.enabled.push_back({"HoldAll"});
            },
            {PluginRegistration{"HoldAll",
                                [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
                                  return std::unique_ptr<Plugin>(std::make_unique<HoldAll>());
                                },
                                {}}}) {}

  // Schedules "p" onto the only node; its binding waits at Permit.
  void StartWaiting() {
    ASSERT_NE(sched_, nullptr);
    cluster_.AddNode(NodeObj("n1"));
    cluster_.AddPod(SmallPod("p"));
    ASSERT_TRUE(sched_->ScheduleOne(false));
    EXPECT_EQ(recorder_.size(), 0u);  // not decided yet
    EXPECT_TRUE(sched_->HasWaitingBindings());
    EXPECT_TRUE(sched_->cache().IsAssumedPod(*cluster_.GetPod("default", "p")));
    EXPECT_EQ(sched_->CompleteWaitingBindings(), 0);
  }
  Framework& fw() { return *sched_->profiles()[0]; }
};

TEST(SchedulerPermitTest, AllowedPodIsBound) {
  PermitHarness h;
  h.StartWaiting();
  std::shared_ptr<WaitingPod> wp = h.fw().GetWaitingPod("uid-p");
  ASSERT_NE(wp, nullptr);
  wp->Allow("HoldAll");
  EXPECT_EQ(h.sched_->CompleteWaitingBindings(), 1);
  EXPECT_FALSE(h.sched_->HasWaitingBindings());
  EXPECT_EQ(h.recorder_.Last().outcome, SchedulingAttempt::Outcome::kScheduled);
  EXPECT_EQ(h.NodeOf("p"), "n1");
}

TEST(SchedulerPermitTest, TimedOutPodIsUnschedulable) {
  PermitHarness h;
  h.StartWaiting();
  h.clock_.Advance(std::chrono::seconds(30));
  EXPECT_EQ(h.sched_->CompleteWaitingBindings(), 1);
  SchedulingAttempt a = h.recorder_.Last();
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message,
            "0/1 nodes are available: 1 rejected due to timeout after waiting 30s at plugin "
            "HoldAll.");
  EXPECT_EQ(h.NodeOf("p"), "");
  EXPECT_EQ(h.sched_->cache().PodCount(), 0u);
}

// A pod rejected while waiting goes to the unschedulable pool: the freeing of its own assumed
// resources is a cluster change for the other pods, not for itself.
TEST(SchedulerPermitTest, RejectedPodWaitsForAClusterChange) {
  PermitHarness h;
  h.StartWaiting();
  EXPECT_TRUE(h.fw().RejectWaitingPod("uid-p"));
  EXPECT_EQ(h.sched_->CompleteWaitingBindings(), 1);
  SchedulingAttempt a = h.recorder_.Last();
  EXPECT_EQ(a.outcome, SchedulingAttempt::Outcome::kUnschedulable);
  EXPECT_EQ(a.message, "0/1 nodes are available: 1 removed.");
  EXPECT_FALSE(h.sched_->cache().IsAssumedPod(*h.cluster_.GetPod("default", "p")));
  auto c = h.sched_->queue().counts();
  EXPECT_EQ(c.unschedulable, 1u);
  EXPECT_EQ(c.backoff, 0u);
}

}  // namespace
}  // namespace berth
