#include "kubelet/node_status.h"

#include <gtest/gtest.h>

#include "kubelet/pod_status.h"

namespace berth::kubelet {
namespace {

TEST(PodCidrAllocatorTest, HandsOutNodeRangesLowestFirstAndKeepsExistingOnes) {
  auto cluster = ParseIpv4Net("10.244.0.0/22");
  ASSERT_TRUE(cluster.ok());
  PodCidrAllocator a(*cluster, 24);
  a.MarkUsed(*ParseIpv4Net("10.244.1.0/24"));  // a node's range from before a restart
  EXPECT_EQ(a.Allocate()->ToString(), "10.244.0.0/24");
  EXPECT_EQ(a.Allocate()->ToString(), "10.244.2.0/24");
  EXPECT_EQ(a.Allocate()->ToString(), "10.244.3.0/24");
  EXPECT_FALSE(a.Allocate().has_value());  // four /24s in a /22
  a.Release(*ParseIpv4Net("10.244.2.0/24"));
  EXPECT_EQ(a.Allocate()->ToString(), "10.244.2.0/24");
  EXPECT_FALSE(ParseIpv4Net("10.244.0.0").ok());
  EXPECT_FALSE(ParseIpv4Net("10.244.300.0/24").ok());
  EXPECT_EQ(ParseIpv4Net("10.244.7.9/24")->ToString(), "10.244.7.0/24");
}

TEST(PodIpPoolTest, SkipsNetworkGatewayAndBroadcastAndReusesReleasedAddresses) {
  PodIpPool pool(*ParseIpv4Net("10.0.0.0/29"));  // .0 network, .1 bridge, .7 broadcast
  pool.MarkUsed("10.0.0.3");
  std::vector<std::string> got;
  while (auto ip = pool.Allocate()) got.push_back(*ip);
  EXPECT_EQ(got, (std::vector<std::string>{"10.0.0.2", "10.0.0.4", "10.0.0.5", "10.0.0.6"}));
  pool.Release("10.0.0.4");
  EXPECT_EQ(pool.Allocate(), "10.0.0.4");
}

TEST(NodeImagesTest, ImagesAreListedUnderTheNamesPodsUseAndReadBack) {
  NodeImageMap images;
  EXPECT_TRUE(AddImage(images, "nginx"));
  EXPECT_FALSE(AddImage(images, "nginx"));
  EXPECT_FALSE(AddImage(images, "docker.io/library/nginx:latest"));  // the same image
  EXPECT_TRUE(AddImage(images, "registry.k8s.io/pause:3.9"));
  ASSERT_EQ(images.size(), 2u);
  nlohmann::json listed = NodeImages(images);
  ASSERT_EQ(listed.size(), 2u);
  // Largest first, sizes stable for a name.
  EXPECT_GE(listed[0]["sizeBytes"].get<int64_t>(), listed[1]["sizeBytes"].get<int64_t>());
  const auto& nginx = images.at("docker.io/library/nginx:latest");
  EXPECT_EQ(nginx.size_bytes, ImageSizeBytes("docker.io/library/nginx:latest"));
  EXPECT_NE(std::find(nginx.names.begin(), nginx.names.end(), "nginx:latest"), nginx.names.end());
  NodeImageMap back = ImagesFromStatus(listed);
  EXPECT_EQ(back.size(), 2u);
  EXPECT_FALSE(AddImage(back, "nginx"));
}

TEST(PodStatusTest, QosClassAndImageNames) {
  Pod pod;
  pod.spec.containers.push_back(Container{.name = "a", .image = "nginx"});
  EXPECT_EQ(QosClass(pod), "BestEffort");
  pod.spec.containers[0].resources.requests["cpu"] = Quantity::FromMilli(100);
  EXPECT_EQ(QosClass(pod), "Burstable");
  pod.spec.containers[0].resources.limits["cpu"] = Quantity::FromMilli(100);
  pod.spec.containers[0].resources.limits["memory"] = Quantity::FromMilli(1000 * 1000);
  EXPECT_EQ(QosClass(pod), "Guaranteed");  // the memory request defaults to its limit
  EXPECT_EQ(ReportedImage("nginx"), "docker.io/library/nginx:latest");
  EXPECT_EQ(ReportedImage("bitnami/redis:7"), "docker.io/bitnami/redis:7");
  EXPECT_EQ(ReportedImage("registry.k8s.io/pause:3.9"), "registry.k8s.io/pause:3.9");
  EXPECT_EQ(ImageId("nginx:1.25").rfind("docker.io/library/nginx@sha256:", 0), 0u);
  EXPECT_EQ(ImageDigest("nginx").size(), 7u + 64u);
}

}  // namespace
}  // namespace berth::kubelet
