// berth simulate with opportunistic batching: under a profile that signs pods (the default one
// with its spreading defaults emptied) a pod signed like the previous one takes the next
// node of that pod's ranking, which covered only the nodes its cycle scored; a full cycle (the
// gate off, or the default profile, which signs no pod) scans the next nodes and picks a
// better one.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "api/codec.h"
#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"

namespace berth::sim {
namespace {

constexpr const char* kSignedProfile = R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: PodTopologySpread
    args: {apiVersion: kubescheduler.config.k8s.io/v1, kind: PodTopologySpreadArgs,
           defaultingType: List}
)";

// 200 nodes, the first 100 with 4 CPUs, the others with 64 (they score higher), and three
// pods that each hold host port 8080 (one per node). A cycle scores the first 100 feasible
// nodes from where the last one stopped.
std::string Manifests() {
  std::string out;
  for (int i = 0; i < 200; ++i) {
    out += fmt::format(
        "apiVersion: v1\nkind: Node\nmetadata: {{name: n{:03d}}}\n"
        "status: {{allocatable: {{cpu: \"{}\", memory: 64Gi, pods: \"110\"}}}}\n---\n",
        i, i < 100 ? "4" : "64");
  }
  for (int j = 0; j < 3; ++j) {
    out += fmt::format(
        "apiVersion: v1\nkind: Pod\nmetadata: {{name: web-{}, namespace: default}}\n"
        "spec:\n  containers: [{{name: c, image: nginx, resources: {{requests: {{cpu: \"1\"}}}},"
        " ports: [{{containerPort: 8080, hostPort: 8080}}]}}]\n---\n",
        j);
  }
  return out;
}

std::vector<std::string> Placements(bool signed_profile, bool batching) {
  Registry registry = InTreeRegistry();
  config::SchedulerConfiguration config = config::DefaultConfiguration(registry);
  if (signed_profile) {
    auto loaded = config::LoadConfig(kSignedProfile, "config.yaml", registry);
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    config = std::move(loaded).value();
  }
  auto objects = DecodeObjects(Manifests(), "cluster.yaml");
  EXPECT_TRUE(objects.ok());
  SimulationOptions options;
  options.opportunistic_batching = batching;
  auto sim = Simulate(config, registry, *objects, options);
  EXPECT_TRUE(sim.ok()) << (sim.ok() ? "" : sim.error().message);
  std::vector<std::string> nodes;
  for (const PodResult& r : sim->results) {
    EXPECT_EQ(r.result, "Scheduled") << r.pod;
    nodes.push_back(r.node);
  }
  return nodes;
}

bool Small(const std::string& node) { return node < "n100"; }

TEST(OpportunisticBatchingSimulationTest, BatchedPodsTakeTheFirstCyclesRanking) {
  const std::vector<std::string> batched = Placements(true, true);
  const std::vector<std::string> full = Placements(true, false);
  ASSERT_EQ(batched.size(), 3u);
  ASSERT_EQ(full.size(), 3u);
  // The first pod's cycle is the same either way: it scores the small nodes only.
  EXPECT_EQ(batched[0], full[0]);
  EXPECT_TRUE(Small(batched[0]));
  // Then batching places the next pods on nodes of that ranking; full cycles scan the large
  // nodes next and place them there.
  for (size_t i = 1; i < 3; ++i) {
    EXPECT_TRUE(Small(batched[i])) << batched[i];
    EXPECT_FALSE(Small(full[i])) << full[i];
  }
}

TEST(OpportunisticBatchingSimulationTest, DefaultProfileDecidesAsWithoutBatching) {
  EXPECT_EQ(Placements(false, true), Placements(false, false));
  EXPECT_EQ(Placements(false, true), Placements(true, false));
}

}  // namespace
}  // namespace berth::sim
