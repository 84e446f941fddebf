#include "plugins/defaultbinder/defaultbinder.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "testing/builders.h"

namespace berth {
namespace {

TEST(DefaultBinder, BindsThroughTheClient) {
  InMemoryCluster cluster;
  cluster.AddNode(testing::MakeNode().Name("n1").Obj());
  auto pod = testing::MakePod().Name("p").Obj();
  cluster.AddPod(pod);
  testing::FakeHandle handle(Snapshot{}, &cluster);

  auto plugin = DefaultBinderRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* binder = dynamic_cast<BindPlugin*>(plugin->get());
  ASSERT_NE(binder, nullptr);
  EXPECT_EQ(binder->Name(), "DefaultBinder");

  CycleState state;
  PodInfoPtr info = PodInfo::Create(pod);
  Status s = binder->Bind(state, *info, "n1");
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  EXPECT_EQ(cluster.GetPod("default", "p")->spec.node_name, "n1");
  EXPECT_EQ(cluster.write_counts().binds, 1);
}

TEST(DefaultBinder, ApiErrorsBecomeErrorStatus) {
  InMemoryCluster cluster;
  cluster.AddNode(testing::MakeNode().Name("n1").Obj());
  testing::FakeHandle handle(Snapshot{}, &cluster);
  auto plugin = DefaultBinderRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* binder = dynamic_cast<BindPlugin*>(plugin->get());

  CycleState state;
  PodInfoPtr missing = testing::MakePod().Name("gone").Info();
  Status s = binder->Bind(state, *missing, "n1");
  EXPECT_EQ(s.code(), Code::kError);
  EXPECT_EQ(s.Message(), "pods \"gone\" not found");
  EXPECT_EQ(cluster.write_counts().binds, 0);
}

}  // namespace
}  // namespace berth
