#include "plugins/imagelocality/imagelocality.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "framework/node_batch_score_test_util.h"
#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;
using testing::MakePod;
using testing::PodBuilder;

constexpr int64_t kMB = 1024 * 1024;

std::shared_ptr<const Node> Node403002000(const std::string& name) {
  return MakeNode()
      .Name(name)
      .Image({"gcr.io/40:latest", "gcr.io/40:v1"}, 40 * kMB)
      .Image({"gcr.io/300:latest", "gcr.io/300:v1"}, 300 * kMB)
      .Image({"gcr.io/2000:latest"}, 2000 * kMB)
      .Obj();
}

std::shared_ptr<const Node> Node25010(const std::string& name) {
  return MakeNode()
      .Name(name)
      .Image({"gcr.io/250:latest"}, 250 * kMB)
      .Image({"gcr.io/10:latest", "gcr.io/10:v1"}, 10 * kMB)
      .Obj();
}

PodBuilder WithImages(std::vector<std::string> images) {
  PodBuilder b = MakePod().Name("p");
  for (auto& i : images) b.Image(i);
  return b;
}

struct Case {
  std::string name;
  PodBuilder pod;
  std::vector<std::shared_ptr<const Node>> nodes;
  std::vector<int64_t> want;
};

void RunCases(const std::vector<Case>& cases) {
  for (const Case& tc : cases) {
    for (bool run_pre_score : {true, false}) {
      SCOPED_TRACE(tc.name + (run_pre_score ? " (with PreScore)" : " (without PreScore)"));
      testing::FakeHandle handle(Snapshot::Build(tc.nodes, {}));
      auto plugin = ImageLocalityRegistration().factory(nullptr, handle);
      ASSERT_TRUE(plugin.ok());
      auto* pre = dynamic_cast<PreScorePlugin*>(plugin->get());
      auto* scorer = dynamic_cast<ScorePlugin*>(plugin->get());
      ASSERT_NE(pre, nullptr);
      ASSERT_NE(scorer, nullptr);
      EXPECT_FALSE(scorer->HasNormalize());
      PodInfoPtr pod = tc.pod.Info();
      CycleState state;
      const Snapshot& snapshot = handle.snapshot();
      if (run_pre_score) {
        std::vector<const NodeInfo*> feasible(snapshot.nodes().begin(), snapshot.nodes().end());
        ASSERT_TRUE(pre->PreScore(state, *pod, feasible).IsSuccess());
      }
      std::vector<int64_t> got;
      for (const auto& n : tc.nodes) {
        int64_t score = -1;
        ASSERT_TRUE(
            scorer->Score(state, *pod, *snapshot.Get(n->metadata.name), &score).IsSuccess());
        got.push_back(score);
      }
      EXPECT_EQ(got, tc.want);
      // Scored as one run: the same scores.
      std::vector<const NodeInfo*> run;
      for (const auto& n : tc.nodes) run.push_back(snapshot.Get(n->metadata.name));
      EXPECT_EQ(ScoreAsOneRun(plugin->get(), state, *pod, run), tc.want);
    }
  }
}

TEST(ImageLocality, UpstreamCases) {
  // The maximum threshold is 1000 MiB per container; sizes are scaled by spread (holders/nodes).
  std::vector<Case> cases = {
      // machine1: 40 MiB * 1/2 < 23 MiB. machine2: 250 MiB * 1/2 = 125 MiB -> 100*102/1977.
      {"two images spread on two nodes, prefer the larger image one",
       WithImages({"gcr.io/40", "gcr.io/250"}),
       {Node403002000("machine1"), Node25010("machine2")},
       {0, 5}},
      // machine1: (40 + 300) MiB / 2 = 170 MiB.
      {"two images on one node, prefer this node",
       WithImages({"gcr.io/40", "gcr.io/300"}),
       {Node403002000("machine1"), Node25010("machine2")},
       {7, 0}},
      {"if exceed limit, use limit",
       WithImages({"gcr.io/10", "gcr.io/2000"}),
       {Node403002000("machine1"), Node25010("machine2")},
       {49, 0}},
      {"if exceed limit, use limit (with node which has no images present)",
       WithImages({"gcr.io/10", "gcr.io/2000"}),
       {Node403002000("machine1"), Node25010("machine2"), MakeNode().Name("machine3").Obj()},
       {32, 0, 0}},
      {"images present on every node count in full",
       WithImages({"gcr.io/40", "gcr.io/300"}),
       {Node403002000("machine1"), Node403002000("machine2")},
       {16, 16}},
      {"explicit tags are matched as written",
       WithImages({"gcr.io/300:v1", "gcr.io/250:v2"}),
       {Node403002000("machine1"), Node25010("machine2")},
       {6, 0}},
  };
  RunCases(cases);
}

TEST(ImageLocality, InitContainersCount) {
  // The init container's image adds to the sum and raises the threshold like an app container.
  PodBuilder pod = WithImages({"gcr.io/40"});
  Container init;
  init.name = "init";
  init.image = "gcr.io/300";
  pod.mutable_pod().spec.init_containers.push_back(init);
  RunCases(
      {{"init container image", pod, {Node403002000("machine1"), Node25010("machine2")}, {7, 0}}});
}

TEST(ImageLocality, FactsWorkedVector) {
  // One container, a 500 MiB image on 10 of 100 nodes: 50 MiB -> 100 * 27 / 977 = 2.
  std::vector<std::shared_ptr<const Node>> nodes;
  for (int i = 0; i < 100; ++i) {
    auto b = MakeNode().Name("n" + std::to_string(i));
    if (i < 10) b.Image({"registry.example/app:1.0"}, 500 * kMB);
    nodes.push_back(b.Obj());
  }
  std::vector<int64_t> want(100, 0);
  for (int i = 0; i < 10; ++i) want[i] = 2;
  RunCases({{"facts", WithImages({"registry.example/app:1.0"}), nodes, want}});
}

}  // namespace
}  // namespace berth
