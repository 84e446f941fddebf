// A unit test of the ToNodeName example plugin built out of tree: the plugin compiled in
// (BERTH_COMPILED_IN), driven through its registration with the SDK's builders
// (berth/testing/builders.h) and fake handle (berth/testing/fake_handle.h), linked against
// Berth::testing.
#include <berth/framework/plugin.h>
#include <berth/framework/registry.h>
#include <berth/testing/builders.h>
#include <berth/testing/fake_handle.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

berth::PluginRegistration ToNodeNameRegistration();  // ../plugins/tonodename_plugin.cc

namespace {

using berth::testing::FakeHandle;
using berth::testing::MakeNode;
using berth::testing::MakePod;

class ToNodeNameTest : public ::testing::Test {
 protected:
  ToNodeNameTest()
      : handle_(berth::Snapshot::Build(
            {MakeNode().Name("node-a").Capacity({{"cpu", "4"}}).Obj(),
             MakeNode().Name("node-b").Capacity({{"cpu", "4"}}).Obj(),
             MakeNode().Name("piworknode001").Capacity({{"cpu", "4"}}).Obj()},
            {MakePod().Name("running").Node("node-a").Req({{"cpu", "1"}}).Obj()})) {}

  // The plugin as the framework builds it: args decoded from `raw` (null: no pluginConfig).
  std::unique_ptr<berth::Plugin> Make(const nlohmann::json* raw) {
    auto args = reg_.decode_args(raw, "profiles[0].pluginConfig[0].args");
    EXPECT_TRUE(args.ok()) << args.error().message;
    if (!args.ok()) return nullptr;
    auto plugin = reg_.factory(args->get(), handle_);
    EXPECT_TRUE(plugin.ok()) << plugin.error().message;
    return plugin.ok() ? std::move(plugin).value() : nullptr;
  }

  // Score then NormalizeScore over every node of the snapshot: node name -> final score.
  std::map<std::string, int64_t> Scores(const berth::ScorePlugin& plugin) {
    const auto pod = berth::PodInfo::Create(MakePod().Name("p").Req({{"cpu", "100m"}}).Obj());
    berth::CycleState state;
    std::vector<berth::NodeScore> scores;
    for (const berth::NodeInfo* node : handle_.snapshot().nodes()) {
      berth::NodeScore s{node, 0};
      EXPECT_TRUE(plugin.Score(state, *pod, *node, &s.score).IsSuccess());
      scores.push_back(s);
    }
    EXPECT_TRUE(plugin.HasNormalize());
    EXPECT_TRUE(plugin.NormalizeScore(state, *pod, scores).IsSuccess());
    std::map<std::string, int64_t> out;
    for (const auto& s : scores) out[s.node->name()] = s.score;
    return out;
  }

  berth::PluginRegistration reg_ = ToNodeNameRegistration();
  FakeHandle handle_;
};

TEST_F(ToNodeNameTest, DefaultNodeGetsTheTopScore) {
  auto plugin = Make(nullptr);
  ASSERT_NE(plugin, nullptr);
  const auto* score = dynamic_cast<const berth::ScorePlugin*>(plugin.get());
  ASSERT_NE(score, nullptr);
  EXPECT_EQ(Scores(*score),
            (std::map<std::string, int64_t>{{"node-a", 0}, {"node-b", 0}, {"piworknode001", 100}}));
}

TEST_F(ToNodeNameTest, ConfiguredNodeGetsTheTopScore) {
  const nlohmann::json raw = {{"nodeName", "node-b"}};
  auto plugin = Make(&raw);
  ASSERT_NE(plugin, nullptr);
  const auto& score = dynamic_cast<const berth::ScorePlugin&>(*plugin);
  EXPECT_EQ(Scores(score),
            (std::map<std::string, int64_t>{{"node-a", 0}, {"node-b", 100}, {"piworknode001", 0}}));
  // The raw score, on a NodeInfo built by the test alone.
  berth::NodeInfo info = berth::testing::MakeNodeInfo(MakeNode().Name("node-b").Obj(), {});
  int64_t raw_score = 0;
  berth::CycleState state;
  ASSERT_TRUE(
      score.Score(state, *berth::PodInfo::Create(MakePod().Name("p").Obj()), info, &raw_score)
          .IsSuccess());
  EXPECT_EQ(raw_score, 80);
}

TEST_F(ToNodeNameTest, BadArgsNameTheirPath) {
  const nlohmann::json empty = {{"nodeName", ""}};
  auto args = reg_.decode_args(&empty, "profiles[0].pluginConfig[0].args");
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.error().message, "profiles[0].pluginConfig[0].args.nodeName: required value");
  const nlohmann::json typo = {{"nodename", "x"}};
  args = reg_.decode_args(&typo, "args");
  ASSERT_FALSE(args.ok());
  EXPECT_EQ(args.error().message, "args.nodename: unknown field");
}

TEST_F(ToNodeNameTest, FakeHandleGivesTheSnapshotAndAFakeCluster) {
  EXPECT_EQ(handle_.snapshot().size(), 3u);
  ASSERT_NE(handle_.snapshot().Get("node-a"), nullptr);
  EXPECT_EQ(handle_.snapshot().Get("node-a")->pods().size(), 1u);
  // What a plugin writes through the handle's client is recorded.
  const auto pod = MakePod().Name("p").Obj();
  ASSERT_TRUE(handle_.writer().Bind(*pod, "node-b").ok());
  EXPECT_EQ(handle_.fake_cluster().writes, std::vector<std::string>{"bind default/p node-b"});
}

}  // namespace
