#include "berth/api/resources.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/pod_requests.h"

namespace berth {
namespace {

ResourceList RL(std::initializer_list<std::pair<const char*, const char*>> items) {
  ResourceList l;
  for (const auto& [k, v] : items) l[k] = Quantity::Parse(v).value();
  return l;
}

Container C(ResourceList requests, std::optional<std::string> restart = std::nullopt) {
  Container c;
  c.resources.requests = std::move(requests);
  c.restart_policy = std::move(restart);
  return c;
}

constexpr int64_t kMi = 1024 * 1024;

TEST(ResourceTest, FromListAndAccessors) {
  Resource r = Resource::FromList(RL({{"cpu", "1500m"},
                                      {"memory", "1Gi"},
                                      {"ephemeral-storage", "10G"},
                                      {"pods", "110"},
                                      {"example.com/gpu", "2"},
                                      {"hugepages-2Mi", "4Mi"},
                                      {"attachable-volumes-csi-x", "39"},
                                      {"kubernetes.io/foo", "3"},
                                      {"unknownnative", "7"}}));
  EXPECT_EQ(r.milli_cpu, 1500);
  EXPECT_EQ(r.memory, 1024 * kMi);
  EXPECT_EQ(r.ephemeral_storage, 10'000'000'000);
  EXPECT_EQ(r.allowed_pod_number, 110);
  EXPECT_EQ(r.Scalar("example.com/gpu"), 2);
  EXPECT_EQ(r.Scalar("hugepages-2Mi"), 4 * kMi);
  EXPECT_EQ(r.Scalar("attachable-volumes-csi-x"), 39);
  EXPECT_EQ(r.Scalar("kubernetes.io/foo"), 3);
  EXPECT_EQ(r.Scalar("unknownnative"), 0);
  EXPECT_EQ(r.scalar.size(), 4u);
  EXPECT_TRUE(std::is_sorted(r.scalar.begin(), r.scalar.end()));
  EXPECT_EQ(r.Get("cpu"), 1500);
  EXPECT_EQ(r.Get("pods"), 110);
  EXPECT_EQ(r.Get("example.com/gpu"), 2);
}

TEST(ResourceTest, ArithmeticAndMax) {
  Resource a = Resource::FromList(RL({{"cpu", "1"}, {"example.com/gpu", "1"}}));
  Resource b = Resource::FromList(RL({{"cpu", "2"}, {"memory", "1Ki"}, {"example.com/fpga", "3"}}));
  Resource sum = a;
  sum.Add(b);
  EXPECT_EQ(sum.milli_cpu, 3000);
  EXPECT_EQ(sum.memory, 1024);
  EXPECT_EQ(sum.Scalar("example.com/gpu"), 1);
  EXPECT_EQ(sum.Scalar("example.com/fpga"), 3);
  sum.Subtract(b);
  EXPECT_EQ(sum.milli_cpu, 1000);
  EXPECT_EQ(sum.Scalar("example.com/fpga"), 0);
  Resource m = a;
  m.SetMax(b);
  EXPECT_EQ(m.milli_cpu, 2000);
  EXPECT_EQ(m.memory, 1024);
  EXPECT_EQ(m.Scalar("example.com/gpu"), 1);
  EXPECT_EQ(m.Scalar("example.com/fpga"), 3);
  EXPECT_TRUE(Resource().IsZero());
  EXPECT_FALSE(a.IsZero());
}

TEST(ResourceTest, ScalarResourceNames) {
  EXPECT_TRUE(IsExtendedResourceName("example.com/gpu"));
  EXPECT_TRUE(IsExtendedResourceName("nvidia.com/gpu"));
  EXPECT_FALSE(IsExtendedResourceName("cpu"));
  EXPECT_FALSE(IsExtendedResourceName("kubernetes.io/foo"));
  EXPECT_FALSE(IsExtendedResourceName("requests.example.com/gpu"));
  EXPECT_FALSE(IsExtendedResourceName("example.com/bad name"));
  EXPECT_TRUE(IsScalarResourceName("hugepages-1Gi"));
  EXPECT_TRUE(IsScalarResourceName("attachable-volumes-aws-ebs"));
  EXPECT_TRUE(IsScalarResourceName("kubernetes.io/foo"));
  EXPECT_FALSE(IsScalarResourceName("memory"));
  EXPECT_FALSE(IsScalarResourceName("foo"));
}

struct PodCase {
  std::string name;
  std::vector<Container> containers;
  std::vector<Container> init;
  ResourceList overhead;
  int64_t cpu, mem, non0_cpu, non0_mem;
  int64_t gpu = 0;
};

// Long by design: a table of pods and their requests, one row per case.
TEST(PodRequestsTest, Table) {
  const std::string kAlways = "Always";
  const std::vector<PodCase> cases = {
      {"no containers", {}, {}, {}, 0, 0, 0, 0},
      {"best effort container gets defaults for scoring only",
       {C({})},
       {},
       {},
       0,
       0,
       100,
       200 * kMi},
      {"explicit zero keeps zero", {C(RL({{"cpu", "0"}, {"memory", "0"}}))}, {}, {}, 0, 0, 0, 0},
      {"only cpu set: memory defaulted",
       {C(RL({{"cpu", "250m"}}))},
       {},
       {},
       250,
       0,
       250,
       200 * kMi},
      {"containers sum",
       {C(RL({{"cpu", "1"}, {"memory", "1Gi"}})), C(RL({{"cpu", "500m"}}))},
       {},
       {},
       1500,
       1024 * kMi,
       1500,
       1024 * kMi + 200 * kMi},
      {"init container larger than containers",
       {C(RL({{"cpu", "1"}, {"memory", "1Gi"}}))},
       {C(RL({{"cpu", "2"}, {"memory", "512Mi"}}))},
       {},
       2000,
       1024 * kMi,
       2000,
       1024 * kMi},
      {"init container without requests raises non-zero to defaults",
       {C(RL({{"cpu", "50m"}, {"memory", "100Mi"}}))},
       {C({})},
       {},
       50,
       100 * kMi,
       100,
       200 * kMi},
      {"sidecar adds to containers",
       {C(RL({{"cpu", "1"}}))},
       {C(RL({{"cpu", "500m"}}), kAlways)},
       {},
       1500,
       0,
       1500,
       400 * kMi},
      {"init after sidecar counts the sidecar",
       {C(RL({{"cpu", "1"}}))},
       {C(RL({{"cpu", "500m"}}), kAlways), C(RL({{"cpu", "2"}}))},
       {},
       2500,
       0,
       2500,
       400 * kMi},
      {"init before sidecar does not count it",
       {C(RL({{"cpu", "1"}}))},
       {C(RL({{"cpu", "2"}})), C(RL({{"cpu", "500m"}}), kAlways)},
       {},
       2000,
       0,
       2000,
       400 * kMi},
      {"overhead added",
       {C(RL({{"cpu", "1"}, {"memory", "1Gi"}}))},
       {},
       RL({{"cpu", "250m"}, {"memory", "120Mi"}}),
       1250,
       1144 * kMi,
       1250,
       1144 * kMi},
      {"overhead added to defaults", {C({})}, {}, RL({{"cpu", "10m"}}), 10, 0, 110, 200 * kMi},
      {"extended resources follow the same rules",
       {C(RL({{"example.com/gpu", "1"}})), C(RL({{"example.com/gpu", "2"}}))},
       {C(RL({{"example.com/gpu", "4"}}))},
       {},
       0,
       0,
       100 + 100,
       400 * kMi,
       4},
      {"sub-milli requests are summed exactly before rounding",
       {C(RL({{"cpu", "0.5m"}})), C(RL({{"cpu", "0.5m"}}))},
       {},
       {},
       1,
       0,
       1,
       400 * kMi},
  };
  for (const auto& c : cases) {
    Pod pod;
    pod.spec.containers = c.containers;
    pod.spec.init_containers = c.init;
    pod.spec.overhead = c.overhead;
    PodRequests r = ComputePodRequests(pod);
    EXPECT_EQ(r.requests.milli_cpu, c.cpu) << c.name;
    EXPECT_EQ(r.requests.memory, c.mem) << c.name;
    EXPECT_EQ(r.non_zero_requests.milli_cpu, c.non0_cpu) << c.name;
    EXPECT_EQ(r.non_zero_requests.memory, c.non0_mem) << c.name;
    EXPECT_EQ(r.requests.Scalar("example.com/gpu"), c.gpu) << c.name;
    EXPECT_EQ(r.non_zero_requests.Scalar("example.com/gpu"), c.gpu) << c.name;
  }
}

}  // namespace
Pod PodWith(std::vector<Container> containers, ResourceList pod_requests,
            ResourceList overhead = {}) {
  Pod pod;
  for (Container& c : containers) pod.spec.containers.push_back(std::move(c));
  pod.spec.resources.emplace().requests = std::move(pod_requests);
  pod.spec.overhead = std::move(overhead);
  return pod;
}

TEST(PodRequestsTest, PodLevelRequestsReplaceTheContainersForTheirResources) {
  // Pod-level cpu and memory win over the containers' sum; extended resources stay the sum.
  Pod pod = PodWith({C(RL({{"cpu", "500m"}, {"memory", "100Mi"}, {"example.com/gpu", "1"}})),
                     C(RL({{"cpu", "250m"}}))},
                    RL({{"cpu", "2"}, {"memory", "1Gi"}}));
  PodRequests r = ComputePodRequests(pod);
  EXPECT_EQ(r.requests.milli_cpu, 2000);
  EXPECT_EQ(r.requests.memory, 1024 * kMi);
  EXPECT_EQ(r.requests.Scalar("example.com/gpu"), 1);
  EXPECT_EQ(r.non_zero_requests.milli_cpu, 2000);
  EXPECT_EQ(r.non_zero_requests.memory, 1024 * kMi);

  // Hugepages may be requested for the pod; overhead comes on top.
  Pod huge = PodWith({C(RL({{"hugepages-2Mi", "10Mi"}}))}, RL({{"hugepages-2Mi", "20Mi"}}),
                     RL({{"cpu", "100m"}}));
  r = ComputePodRequests(huge);
  EXPECT_EQ(r.requests.Scalar("hugepages-2Mi"), 20 * kMi);
  EXPECT_EQ(r.requests.milli_cpu, 100);
}

TEST(PodRequestsTest, IgnoringPodLevelCountsOnlyContainersAndOverhead) {
  // The PodLevelResources gate off: spec.resources is ignored, the defaults apply per container.
  Pod pod = PodWith({C(RL({{"cpu", "500m"}})), C(RL({{"memory", "100Mi"}}))},
                    RL({{"cpu", "2"}, {"memory", "1Gi"}}), RL({{"cpu", "10m"}}));
  EXPECT_TRUE(HasPodLevelRequests(pod));
  PodRequests r = ComputePodRequestsIgnoringPodLevel(pod);
  EXPECT_EQ(r.requests.milli_cpu, 510);
  EXPECT_EQ(r.requests.memory, 100 * kMi);
  EXPECT_EQ(r.non_zero_requests.milli_cpu, 610);  // 100m default for the second container
  EXPECT_EQ(ComputePodRequests(pod).requests.milli_cpu, 2010);
}

TEST(PodRequestsTest, PodLevelRequestsTakeScoringDefaultsOnlyForWhatNeitherLevelSets) {
  // cpu at the pod level, nothing in two containers: cpu is the pod's, memory the default per
  // container.
  Pod pod = PodWith({C({}), C({})}, RL({{"cpu", "1"}}));
  PodRequests r = ComputePodRequests(pod);
  EXPECT_EQ(r.requests.milli_cpu, 1000);
  EXPECT_EQ(r.requests.memory, 0);
  EXPECT_EQ(r.non_zero_requests.milli_cpu, 1000);
  EXPECT_EQ(r.non_zero_requests.memory, 400 * kMi);

  // Memory requested by a container counts as set: no default for it.
  Pod mem = PodWith({C(RL({{"memory", "64Mi"}})), C({})}, RL({{"cpu", "1"}}));
  r = ComputePodRequests(mem);
  EXPECT_EQ(r.non_zero_requests.memory, 64 * kMi);
}

TEST(PodRequestsTest, PodLevelLimitsAloneChangeNothing) {
  Pod pod = PodWith({C(RL({{"cpu", "300m"}}))}, {});
  pod.spec.resources->limits = RL({{"cpu", "4"}});
  PodRequests r = ComputePodRequests(pod);
  EXPECT_EQ(r.requests.milli_cpu, 300);
  EXPECT_EQ(r.non_zero_requests.memory, 200 * kMi);
}

Pod Resized(const char* spec_cpu, std::optional<const char*> allocated,
            std::optional<const char*> actuated, bool infeasible = false) {
  Pod pod;
  Container c = C(RL({{"cpu", spec_cpu}}));
  c.name = "app";
  pod.spec.containers.push_back(std::move(c));
  ContainerResourceStatus st;
  st.name = "app";
  if (allocated) st.allocated = RL({{"cpu", *allocated}});
  if (actuated) st.requests = RL({{"cpu", *actuated}});
  pod.status.container_resources.push_back(std::move(st));
  if (infeasible) pod.status.conditions.push_back({"PodResizePending", "True", "Infeasible", ""});
  return pod;
}

TEST(PodRequestsTest, InPlaceResizeCountsTheLargestOfSpecAllocatedAndActuated) {
  EXPECT_EQ(ComputePodRequests(Resized("1", "2", "2")).requests.milli_cpu, 2000);
  EXPECT_EQ(ComputePodRequests(Resized("2", "1", "1")).requests.milli_cpu, 2000);
  EXPECT_EQ(ComputePodRequests(Resized("1", "1", "3")).requests.milli_cpu, 3000);
  // An infeasible resize leaves the spec out: what the kubelet allocated and actuated counts.
  EXPECT_EQ(ComputePodRequests(Resized("4", "1", "1", true)).requests.milli_cpu, 1000);
  // Without actuated requests, the allocated ones stand in for them.
  EXPECT_EQ(ComputePodRequests(Resized("4", "1500m", std::nullopt, true)).requests.milli_cpu, 1500);
}

TEST(PodRequestsTest, InfeasibleResizeOfAContainerWithoutStatusCountsNothingForIt) {
  Pod pod = Resized("1", "1", "1", true);
  Container other = C(RL({{"cpu", "2"}}));
  other.name = "other";
  pod.spec.containers.push_back(std::move(other));
  PodRequests r = ComputePodRequests(pod);
  EXPECT_EQ(r.requests.milli_cpu, 1000);
  EXPECT_EQ(r.non_zero_requests.milli_cpu, 1100);  // the default stands in for "other"
}

}  // namespace berth
