// berth capacity: agrees with placing the same pods one by one through the simulator, names
// what runs out, counts per node and zone, and leaves pending pods and preemption out.
#include "sim/capacity.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "config/load.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"

namespace berth::sim {
namespace {

using testing::MakeNode;
using testing::MakePod;

std::vector<Object> Cluster() {
  std::vector<Object> out;
  for (auto [name, zone, cpu] : {std::tuple{"a1", "zone-a", "4"}, std::tuple{"a2", "zone-a", "2"},
                                 std::tuple{"b1", "zone-b", "3"}}) {
    out.push_back(Object(MakeNode()
                             .Name(name)
                             .Label("topology.kubernetes.io/zone", zone)
                             .Capacity({{"cpu", cpu}, {"memory", "16Gi"}})
                             .Obj()));
  }
  // Bound: takes 1 CPU of a1. Pending: must not compete. Low priority: must not be preempted.
  out.push_back(Object(MakePod().Name("running").Node("a1").Priority(0).Req({{"cpu", "1"}}).Obj()));
  out.push_back(Object(MakePod().Name("pending").Req({{"cpu", "3"}}).Obj()));
  return out;
}

TEST(CapacityTest, AgreesWithPlacingOneByOne) {
  Registry registry = InTreeRegistry();
  auto config = config::DefaultConfiguration(registry);
  auto tmpl = MakePod().Name("web").Priority(1000).Req({{"cpu", "1"}}).Obj();
  auto r = EstimateCapacity(config, registry, Cluster(), *tmpl, {});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r->placed, 8);  // 3 + 2 + 3, the running pod kept
  EXPECT_EQ(r->per_node.at("a1"), 3);
  EXPECT_EQ(r->per_node.at("a2"), 2);
  EXPECT_EQ(r->per_zone.at("zone-a"), 5);
  EXPECT_EQ(r->per_zone.at("zone-b"), 3);
  EXPECT_EQ(r->limiting_reason, "Insufficient cpu");
  EXPECT_FALSE(r->reached_max);

  // The same copies, bound pods only, through the simulator one by one.
  std::vector<Object> objects;
  for (const Object& o : Cluster()) {
    auto* p = std::get_if<std::shared_ptr<const Pod>>(&o);
    if (!p || !(*p)->spec.node_name.empty()) objects.push_back(o);
  }
  for (int i = 0; i < 12; ++i) {
    auto copy = std::make_shared<Pod>(*tmpl);
    copy->metadata.name = "copy-" + std::to_string(i);
    copy->metadata.uid = copy->metadata.name;
    copy->spec.preemption_policy = "Never";
    objects.push_back(Object(std::shared_ptr<const Pod>(std::move(copy))));
  }
  SimulationOptions so;
  so.max_attempts = 1;
  auto sim = Simulate(config, registry, objects, so);
  ASSERT_TRUE(sim.ok());
  int scheduled = 0;
  for (const auto& pr : sim->results) scheduled += pr.result == "Scheduled";
  EXPECT_EQ(scheduled, r->placed);

  CapacityOptions capped;
  capped.max = 3;
  auto c = EstimateCapacity(config, registry, Cluster(), *tmpl, capped);
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->placed, 3);
  EXPECT_TRUE(c->reached_max);
  EXPECT_TRUE(c->limit_message.empty());
  capped.max = 0;
  EXPECT_FALSE(EstimateCapacity(config, registry, Cluster(), *tmpl, capped).ok());
}

}  // namespace
}  // namespace berth::sim
