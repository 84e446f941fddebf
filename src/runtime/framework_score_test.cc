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

#include "framework/node_batch_score.h"
#include "runtime/framework.h"
#include "runtime/framework_test_util.h"
#include "runtime/scheduler_metrics.h"
#include "testing/builders.h"

namespace berth {
namespace {

using framework_test::CallLog;
using framework_test::FakeBind;
using framework_test::FakeFilter;
using framework_test::FakePostFilter;
using framework_test::FakePreFilter;
using framework_test::FakePreScoreScore;
using framework_test::FakeQueueSort;
using framework_test::FakeScore;
using framework_test::FrameworkTest;
using framework_test::Names;
using framework_test::PluginMetricsRecorder;
using framework_test::Reg;
using framework_test::ScoreSpec;
using framework_test::Set;
using framework_test::Spec;
using framework_test::TickingClock;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- plugin metrics

TEST_F(FrameworkTest, PluginsAreTimedOnlyInSampledCyclesAndEvaluationsAlwaysCount) {
  Register(Reg<FakePreFilter>("Skipper", &log_, Status::Skip()));
  Register(Reg<FakePreFilter>("Runner", &log_, Status::Success()));
  Register(Reg<FakeFilter>("F1", &log_, Names({"n1"})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Skipper"}, {"Runner"}});
  p.plugins.filter = Set({{"F1"}});
  PluginMetricsRecorder sink;
  TickingClock clock;
  FrameworkServices services = Services();
  services.metrics = &sink;
  services.clock = &clock;
  auto built = Framework::Create(p, registry_, services);
  ASSERT_TRUE(built.ok()) << built.error().message;
  Framework& fw = **built;
  UseNodes(fw, 2);
  PreFilterResult result;
  std::vector<std::string> rejected_by;

  // Not sampled: evaluations count (a skipped plugin was not evaluated), nothing is timed.
  CycleState plain;
  ASSERT_TRUE(fw.RunPreFilterPlugins(plain, *pod_, &result, &rejected_by).IsSuccess());
  EXPECT_EQ(fw.RunFilterPlugins(plain, *pod_, NodeNamed("n1"), true).code(), Code::kUnschedulable);
  EXPECT_THAT(sink.executions(), IsEmpty());
  EXPECT_EQ(sink.evaluations()["PreFilter/Runner"], 1u);
  EXPECT_EQ(sink.evaluations().count("PreFilter/Skipper"), 0u);

  // Sampled: every PreFilter call is timed with its code; Filter only where asked.
  CycleState sampled;
  sampled.SetRecordPluginMetrics(true);
  ASSERT_TRUE(fw.RunPreFilterPlugins(sampled, *pod_, &result, &rejected_by).IsSuccess());
  EXPECT_TRUE(fw.RunFilterPlugins(sampled, *pod_, NodeNamed("n2"), false).IsSuccess());
  EXPECT_TRUE(fw.RunFilterPlugins(sampled, *pod_, NodeNamed("n2"), true).IsSuccess());
  EXPECT_FALSE(fw.RunFilterPlugins(sampled, *pod_, NodeNamed("n1"), true).IsSuccess());
  auto executions = sink.executions();
  EXPECT_THAT(executions["PreFilter/Skipper/Skip"], ElementsAre(std::chrono::milliseconds(1)));
  EXPECT_THAT(executions["PreFilter/Runner/Success"], ElementsAre(std::chrono::milliseconds(1)));
  EXPECT_EQ(executions["Filter/F1/Success"].size(), 1u);
  EXPECT_EQ(executions["Filter/F1/Unschedulable"].size(), 1u);
  EXPECT_EQ(sink.evaluations()["PreFilter/Runner"], 2u);

  // Filter evaluations come from where each node stopped: passed nodes and those rejected at
  // F1 (index 0) or later all ran F1.
  fw.CountFilterEvaluations(sampled, 2, std::vector<uint64_t>{3});
  EXPECT_EQ(sink.evaluations()["Filter/F1"], 5u);
}

// ---------------------------------------------------------------- Score

std::function<void(std::span<NodeScore>)> DefaultNormalize() {
  return [](std::span<NodeScore> s) { DefaultNormalizeScore(kMaxNodeScore, false, s); };
}

TEST_F(FrameworkTest, ScoresAreNormalizedThenWeighted) {
  Register(Reg<FakeScore>("S1", &log_, Spec({{"n1", 10}, {"n2", 20}, {"n3", 30}})));
  Register(Reg<FakeScore>(
      "S2", &log_, Spec({{"n1", 1}, {"n2", 2}, {"n3", 4}}, Status::Success(), DefaultNormalize())));
  config::Profile p = BaseProfile();
  p.plugins.score = Set({{"S1"}, {"S2", 2}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 3);
  CycleState state;
  ASSERT_TRUE(fw->RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
  ScoreTable table;
  Status s = fw->RunScorePlugins(state, *pod_, AllNodes(), &table);
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  ASSERT_EQ(table.nodes.size(), 3u);
  EXPECT_EQ(table.nodes[0]->name(), "n1");
  EXPECT_THAT(table.plugin_ran, ElementsAre(true, true));
  EXPECT_THAT(table.plugin_scores[0], ElementsAre(10, 20, 30));
  EXPECT_THAT(table.plugin_scores[1], ElementsAre(25, 50, 100));
  EXPECT_THAT(table.totals, ElementsAre(10 + 2 * 25, 20 + 2 * 50, 30 + 2 * 100));
}

TEST_F(FrameworkTest, ScoresInParallelMatchSequentialScores) {
  ScoreSpec spec;
  for (int i = 1; i <= 300; ++i) spec.scores["n" + std::to_string(i)] = i % 101;
  Register(Reg<FakeScore>("S", nullptr, spec));
  config::Profile p = BaseProfile();
  p.plugins.score = Set({{"S", 3}});
  ThreadPoolParallelizer pool(4);
  auto fw = Build(p, &pool);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 300);
  CycleState state;
  ASSERT_TRUE(fw->RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
  ScoreTable table;
  ASSERT_TRUE(fw->RunScorePlugins(state, *pod_, AllNodes(), &table).IsSuccess());
  for (size_t i = 0; i < table.nodes.size(); ++i) {
    int64_t want = spec.scores[table.nodes[i]->name()];
    EXPECT_EQ(table.plugin_scores[0][i], want);
    EXPECT_EQ(table.totals[i], 3 * want);
  }
}

// A Score plugin that also scores runs of nodes; counts the calls of each kind.
class BatchScore final : public FakeScore, public NodeBatchScorer {
 public:
  BatchScore(std::string name, CallLog* log, ScoreSpec spec, std::atomic<int>* runs,
             std::atomic<int>* singles)
      : FakeScore(std::move(name), log, std::move(spec)), runs_(runs), singles_(singles) {}
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override {
    ++*singles_;
    return FakeScore::Score(state, pod, node, score);
  }
  Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                    std::span<const NodeInfo* const> nodes, int64_t* out) const override {
    ++*runs_;
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status s = FakeScore::Score(state, pod, *nodes[i], &out[i]);
      if (!s.IsSuccess()) return s;
    }
    return Status::Success();
  }

 private:
  std::atomic<int>* runs_;
  std::atomic<int>* singles_;
};

// A profile of a plain Score plugin "P" (weight 2) and a batch one "B" (weight 3) over `n`
// nodes, with PreScore run.
class BatchScoreTest : public FrameworkTest {
 protected:
  std::unique_ptr<Framework> BuildPlainAndBatch(int n, const ScoreSpec& plain,
                                                const ScoreSpec& batch) {
    Register(Reg<BatchScore>("B", nullptr, batch, &runs_, &singles_));
    Register(Reg<FakeScore>("P", nullptr, plain));
    config::Profile p = BaseProfile();
    p.plugins.score = Set({{"P", 2}, {"B", 3}});
    auto fw = Build(p, &pool_);
    if (fw == nullptr) return nullptr;
    UseNodes(*fw, n);
    if (!fw->RunPreScorePlugins(state_, *pod_, AllNodes()).IsSuccess()) return nullptr;
    return fw;
  }

  ThreadPoolParallelizer pool_{4};
  std::atomic<int> runs_{0}, singles_{0};
  CycleState state_;
};

TEST_F(BatchScoreTest, PluginsScoringRunsOfNodesGiveThePerNodeScores) {
  ScoreSpec batch_spec, plain_spec;
  for (int i = 1; i <= 301; ++i) {
    batch_spec.scores["n" + std::to_string(i)] = i % 101;
    plain_spec.scores["n" + std::to_string(i)] = (i * 7) % 50;
  }
  plain_spec.normalize = DefaultNormalize();
  auto fw = BuildPlainAndBatch(301, plain_spec, batch_spec);
  ASSERT_NE(fw, nullptr);
  ScoreTable table;
  ASSERT_TRUE(fw->RunScorePlugins(state_, *pod_, AllNodes(), &table).IsSuccess());
  // The plain plugin's raw scores are 0..49: normalized to 0..100 by the highest, 49.
  for (size_t i = 0; i < table.nodes.size(); ++i) {
    const std::string& name = table.nodes[i]->name();
    const int64_t plain = plain_spec.scores[name] * kMaxNodeScore / 49;
    EXPECT_EQ(table.plugin_scores[0][i], plain) << name;
    EXPECT_EQ(table.plugin_scores[1][i], batch_spec.scores[name]) << name;
    EXPECT_EQ(table.totals[i], 2 * plain + 3 * batch_spec.scores[name]) << name;
  }
  // Runs of up to 32 nodes, never one call per node.
  EXPECT_EQ(runs_.load(), (301 + 31) / 32);
  EXPECT_EQ(singles_.load(), 0);

  // A failure in a run is the cycle's error, in kube-scheduler's words.
  Registry failing;
  ASSERT_TRUE(failing.Add(Reg<FakeQueueSort>("QS", nullptr)).ok());
  ASSERT_TRUE(failing.Add(Reg<FakeBind>("Bind", nullptr, Status::Success())).ok());
  ASSERT_TRUE(
      failing.Add(Reg<BatchScore>("B", nullptr, Spec({}, Status::Error("boom")), &runs_, &singles_))
          .ok());
  config::Profile q = BaseProfile();
  q.plugins.score = Set({{"B"}});
  FrameworkServices services = Services();
  services.parallelizer = &pool_;
  auto bad = Framework::Create(q, failing, services);
  ASSERT_TRUE(bad.ok()) << bad.error().message;
  UseNodes(**bad, 100);
  CycleState bad_state;
  ASSERT_TRUE((*bad)->RunPreScorePlugins(bad_state, *pod_, AllNodes()).IsSuccess());
  Status s = (*bad)->RunScorePlugins(bad_state, *pod_, AllNodes(), &table);
  EXPECT_EQ(s.Message(), "running Score plugins: plugin \"B\" failed with: boom");
}

// With a memo of raw scores, a plugin scored afresh every cycle still scores runs of nodes in
// one call each, and every node ends with the score a cycle without the memo gives it: the
// stale rows scored one by one, the kept rows from the memo, the fresh plugin's from the runs.
TEST_F(BatchScoreTest, PluginsScoredAfreshWithAMemoScoreRunsOfNodes) {
  ScoreSpec batch_spec, plain_spec;
  for (int i = 1; i <= 100; ++i) {
    batch_spec.scores["n" + std::to_string(i)] = (i * 3) % 101;
    plain_spec.scores["n" + std::to_string(i)] = (i * 7) % 50;
  }
  auto fw = BuildPlainAndBatch(100, plain_spec, batch_spec);
  ASSERT_NE(fw, nullptr);
  ScoreTable plain_table;
  ASSERT_TRUE(fw->RunScorePlugins(state_, *pod_, AllNodes(), &plain_table).IsSuccess());

  std::vector<uint32_t> rows(100);
  for (uint32_t i = 0; i < 100; ++i) rows[i] = i;
  RawScoreMemo memo;
  memo.rows = rows;
  memo.filled.assign(100, 0);
  memo.fresh = {false, true};  // B, the second score plugin, is scored afresh
  for (int cycle = 0; cycle < 2; ++cycle) {
    // The second cycle keeps every row but three, which are stale.
    if (cycle == 1) memo.filled[5] = memo.filled[40] = memo.filled[99] = 0;
    runs_ = 0;
    singles_ = 0;
    ScoreTable table;
    ASSERT_TRUE(fw->RunScorePlugins(state_, *pod_, AllNodes(), &table, &memo).IsSuccess());
    EXPECT_EQ(table.totals, plain_table.totals) << "cycle " << cycle;
    EXPECT_EQ(table.plugin_scores, plain_table.plugin_scores) << "cycle " << cycle;
    if (cycle == 1) {
      // The stale rows one node at a time, every other node in runs of up to 32.
      EXPECT_EQ(singles_.load(), 3);
      EXPECT_EQ(runs_.load(), (100 + 31) / 32);
    }
  }
}

TEST_F(FrameworkTest, PreScoreSkipDropsThePluginFromScoring) {
  Register(
      Reg<FakePreScoreScore>("Kept", &log_, Spec({{"n1", 40}, {"n2", 60}}), Status::Success()));
  Register(
      Reg<FakePreScoreScore>("Skipped", &log_, Spec({{"n1", 100}, {"n2", 100}}), Status::Skip()));
  config::Profile p = BaseProfile();
  p.plugins.pre_score = Set({{"Kept"}, {"Skipped"}});
  p.plugins.score = Set({{"Kept"}, {"Skipped", 5}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  ASSERT_TRUE(fw->RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
  EXPECT_THAT(state.skipped_scores(), ElementsAre(false, true));
  ScoreTable table;
  ASSERT_TRUE(fw->RunScorePlugins(state, *pod_, AllNodes(), &table).IsSuccess());
  EXPECT_THAT(table.plugin_ran, ElementsAre(true, false));
  EXPECT_THAT(table.totals, ElementsAre(40, 60));
  EXPECT_FALSE(log_.Contains("Score:Skipped:n1"));
  EXPECT_TRUE(log_.Contains("Score:Kept:n1"));
}

TEST_F(FrameworkTest, PreScoreErrorIsWrapped) {
  Register(Reg<FakePreScoreScore>("Skipper", &log_, Spec(), Status::Skip()));
  Register(Reg<FakePreScoreScore>("Bad", &log_, Spec(), Status::Unschedulable("nope")));
  config::Profile p = BaseProfile();
  p.plugins.pre_score = Set({{"Skipper"}, {"Bad"}});
  p.plugins.score = Set({{"Skipper"}, {"Bad"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  Status s = fw->RunPreScorePlugins(state, *pod_, AllNodes());
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running PreScore plugin \"Bad\": nope");
}

TEST_F(FrameworkTest, ScoreErrorsHaveKubeSchedulerText) {
  struct Case {
    std::string name;
    ScoreSpec spec;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"score fails", Spec({}, Status::Error("boom")),
       "running Score plugins: plugin \"S\" failed with: boom"},
      {"normalize fails",
       Spec({}, Status::Success(), DefaultNormalize(), Status::Error("bad normalize")),
       "running Normalize on Score plugins: plugin \"S\" failed with: bad normalize"},
      {"score above the maximum", Spec({{"n1", 101}}),
       "applying score defaultWeights on Score plugins: plugin \"S\" returns an invalid score "
       "101, it should in the range of [0, 100] after normalizing"},
      {"normalized score below the minimum",
       Spec({{"n1", 1}}, Status::Success(),
            [](std::span<NodeScore> s) {
              for (auto& x : s) x.score = -1;
            }),
       "applying score defaultWeights on Score plugins: plugin \"S\" returns an invalid score "
       "-1, it should in the range of [0, 100] after normalizing"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Registry registry;
    ASSERT_TRUE(registry.Add(Reg<FakeQueueSort>("QS", nullptr)).ok());
    ASSERT_TRUE(registry.Add(Reg<FakeBind>("Bind", nullptr, Status::Success())).ok());
    ASSERT_TRUE(registry.Add(Reg<FakeScore>("S", nullptr, c.spec)).ok());
    config::Profile p = BaseProfile();
    p.plugins.score = Set({{"S"}});
    auto r = Framework::Create(p, registry, Services());
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto& fw = **r;
    UseNodes(fw, 2);
    CycleState state;
    ASSERT_TRUE(fw.RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
    ScoreTable table;
    Status s = fw.RunScorePlugins(state, *pod_, AllNodes(), &table);
    EXPECT_TRUE(s.IsError());
    EXPECT_EQ(s.Message(), c.want);
  }
}

// ---------------------------------------------------------------- PostFilter

class PostFilterTest : public FrameworkTest {
 protected:
  Status Run(std::vector<std::string> plugins, PostFilterResult* result,
             std::vector<std::string>* messages) {
    config::Profile p = BaseProfile();
    for (const auto& n : plugins) p.plugins.post_filter.enabled.push_back({n});
    fw_ = Build(p);
    if (!fw_) return Status::Error("no framework");
    UseNodes(*fw_, 1);
    CycleState state;
    return fw_->RunPostFilterPlugins(state, *pod_, NodeStatusMap{}, result, messages);
  }
  std::unique_ptr<Framework> fw_;
};

TEST_F(PostFilterTest, MessagesOfPluginsThatCouldNotHelpAreCollected) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Unschedulable("p2 could not help")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2"}, &result, &messages);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "P1");
  EXPECT_THAT(s.reasons(), ElementsAre("p1 could not help", "p2 could not help"));
  EXPECT_THAT(messages, ElementsAre("p1 could not help", "p2 could not help"));
  EXPECT_FALSE(result.nominating.has_value());
}

TEST_F(PostFilterTest, SuccessStopsAndReturnsTheNomination) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Success(), NominatingInfo{"n1", true}));
  Register(Reg<FakePostFilter>("P3", &log_, Status::Unschedulable("never")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2", "P3"}, &result, &messages);
  EXPECT_TRUE(s.IsSuccess());
  ASSERT_TRUE(result.nominating.has_value());
  EXPECT_EQ(result.nominating->node_name, "n1");
  EXPECT_THAT(log_.calls(), ElementsAre("PostFilter:P1", "PostFilter:P2"));
}

// A rejecting plugin's Override nomination (e.g. clearing it) is kept; a Noop one is not.
TEST_F(PostFilterTest, LastMeaningfulNominationOfRejectingPluginsIsKept) {
  Register(
      Reg<FakePostFilter>("Clears", &log_, Status::Unschedulable("a"), NominatingInfo{"", true}));
  Register(
      Reg<FakePostFilter>("Noop", &log_, Status::Unschedulable("b"), NominatingInfo{"n9", false}));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"Clears", "Noop"}, &result, &messages);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  ASSERT_TRUE(result.nominating.has_value());
  EXPECT_TRUE(result.nominating->override_nomination);
  EXPECT_EQ(result.nominating->node_name, "");
}

// UnschedulableAndUnresolvable stops the chain; its message alone is the PostFilter message.
TEST_F(PostFilterTest, UnresolvableStopsTheChain) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Unresolvable("p2 gives up")));
  Register(Reg<FakePostFilter>("P3", &log_, Status::Unschedulable("never")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2", "P3"}, &result, &messages);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.plugin(), "P2");
  EXPECT_EQ(s.Message(), "p2 gives up");
  EXPECT_THAT(messages, ElementsAre("p2 gives up"));
  EXPECT_THAT(log_.calls(), ElementsAre("PostFilter:P1", "PostFilter:P2"));
}

TEST_F(PostFilterTest, ErrorStopsTheChain) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Error("exploded")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2"}, &result, &messages);
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.plugin(), "P2");
  EXPECT_EQ(s.Message(), "exploded");
  EXPECT_THAT(messages, ElementsAre("exploded"));
}

}  // namespace
}  // namespace berth
