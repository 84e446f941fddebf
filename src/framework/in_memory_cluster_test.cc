#include "framework/in_memory_cluster.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "testing/builders.h"

namespace berth {
namespace {

using testing::MakeNode;

// The node map's keys view the stored node's own name: an update must re-key the entry, or
// lookups would read the replaced (freed) node's name.
TEST(InMemoryClusterTest, AnUpdatedNodeIsFoundUnderItsNameAfterTheOldObjectIsGone) {
  InMemoryCluster cluster;
  cluster.AddNode(MakeNode().Name("node-with-a-name-longer-than-sso").Label("v", "1").Obj());
  cluster.AddNode(MakeNode().Name("other").Obj());
  // The first object is released here: only the cluster held it.
  cluster.AddNode(MakeNode().Name("node-with-a-name-longer-than-sso").Label("v", "2").Obj());
  auto got = cluster.GetNode("node-with-a-name-longer-than-sso");
  ASSERT_NE(got, nullptr);
  EXPECT_EQ(got->metadata.labels.at("v"), "2");
  EXPECT_EQ(cluster.ListNodes().size(), 2u);
  cluster.RemoveNode("node-with-a-name-longer-than-sso");
  EXPECT_EQ(cluster.GetNode("node-with-a-name-longer-than-sso"), nullptr);
  ASSERT_EQ(cluster.ListNodes().size(), 1u);
  EXPECT_EQ(cluster.ListNodes()[0]->metadata.name, "other");
}

}  // namespace
}  // namespace berth
