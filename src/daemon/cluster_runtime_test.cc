#include "daemon/cluster_runtime.h"

#include <gtest/gtest.h>

#include "kubelet/node_status.h"

namespace berth::daemon {
namespace {

// How many nodes a cluster CIDR cut into `mask`-sized blocks holds.
uint64_t NodesHeld(const PodCidrs& c) {
  auto net = kubelet::ParseIpv4Net(c.cluster_cidr);
  EXPECT_TRUE(net.ok()) << c.cluster_cidr;
  return uint64_t{1} << (c.node_mask_size - net->prefix);
}

TEST(ClusterRuntimeTest, PodCidrsHoldEveryDemoNode) {
  EXPECT_EQ(PodCidrsFor(8).cluster_cidr, "10.64.0.0/10");
  EXPECT_EQ(PodCidrsFor(16'384).cluster_cidr, "10.64.0.0/10");
  EXPECT_EQ(PodCidrsFor(16'384).node_mask_size, 24);
  for (int nodes : {16'385, 65'536, 65'537, 100'000, 131'072}) {
    const PodCidrs c = PodCidrsFor(nodes);
    EXPECT_EQ(c.cluster_cidr, "10.0.0.0/8") << nodes;
    EXPECT_GE(NodesHeld(c), static_cast<uint64_t>(nodes)) << nodes;
    // A /25 still holds the 110 pods a node runs by default.
    EXPECT_LE(c.node_mask_size, 25) << nodes;
  }
  EXPECT_EQ(PodCidrsFor(65'536).node_mask_size, 24);
  EXPECT_EQ(PodCidrsFor(100'000).node_mask_size, 25);
}

TEST(ClusterRuntimeTest, BadPodCidrFlagsAreRefusedNamingTheFlag) {
  RuntimeOptions o;
  o.cluster_cidr = "10.0.0.0/33";
  auto bad = StartKubelets(o, "/nonexistent/kubeconfig");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message.rfind("--cluster-cidr: ", 0), 0u) << bad.error().message;

  o.cluster_cidr = "10.0.0.0/16";
  o.node_cidr_mask_size = 31;
  auto narrow = StartKubelets(o, "/nonexistent/kubeconfig");
  ASSERT_FALSE(narrow.ok());
  EXPECT_EQ(narrow.error().message,
            "--node-cidr-mask-size: 31 must be between the cluster CIDR's prefix (16) and 30");

  o.node_cidr_mask_size = 12;
  auto wide = StartKubelets(o, "/nonexistent/kubeconfig");
  ASSERT_FALSE(wide.ok());
  EXPECT_NE(wide.error().message.find("12 must be between"), std::string::npos);
}

}  // namespace
}  // namespace berth::daemon
