#include "apiserver/pod_extended_resource_status.h"

#include <gtest/gtest.h>

#include "apiserver/admission.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& Pods() { return *FindResource("", "v1", "pods"); }

Json GpuPod() {
  return Json::parse(R"({"apiVersion":"v1","kind":"Pod",
    "metadata":{"name":"p","namespace":"default"},
    "spec":{"initContainers":[{"name":"init","image":"i",
              "resources":{"requests":{"example.com/gpu":"1"}}}],
            "containers":[{"name":"c","image":"i",
              "resources":{"requests":{"example.com/gpu":"2","cpu":"1"}}}]}})");
}

Json Mapping(const char* container, const char* resource, const char* request) {
  return {{"containerName", container}, {"resourceName", resource}, {"requestName", request}};
}

// TestValidatePodStatusUpdate's extendedResourceClaimStatus cases: a valid status passes.
TEST(PodExtendedResourceClaimStatusTest, ValidStatusPasses) {
  Json pod = GpuPod();
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", "p-extended-resources-abcde"},
      {"requestMappings",
       {Mapping("c", "example.com/gpu", "container-1-request-1"),
        Mapping("init", "example.com/gpu", "container-0-request-0")}}};
  EXPECT_TRUE(ToStrings(PodExtendedResourceClaimStatusErrors(pod)).empty());
  Json old = GpuPod();
  EXPECT_TRUE(ValidateUpdate(Pods(), old, pod).ok());
}

TEST(PodExtendedResourceClaimStatusTest, EmptyMappingsAndMissingClaimNameAreRequired) {
  Json pod = GpuPod();
  pod["status"]["extendedResourceClaimStatus"] = {{"requestMappings", Json::array()}};
  EXPECT_EQ(ToStrings(PodExtendedResourceClaimStatusErrors(pod)),
            (std::vector<std::string>{
                "status.extendedResourceClaimStatus.requestMappings: Required value: at least "
                "one request mapping is required",
                "status.extendedResourceClaimStatus.resourceClaimName: Required value"}));
}

TEST(PodExtendedResourceClaimStatusTest, UnknownContainerResourceAndDuplicate) {
  Json pod = GpuPod();
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", "claim"},
      {"requestMappings",
       {Mapping("nope", "example.com/gpu", "r"), Mapping("c", "example.com/fpga", "r"),
        Mapping("c", "example.com/gpu", "Bad_Name"), Mapping("c", "example.com/gpu", "Bad_Name")}}};
  const auto errors = ToStrings(PodExtendedResourceClaimStatusErrors(pod));
  ASSERT_GE(errors.size(), 5u);
  EXPECT_EQ(errors[0],
            "status.extendedResourceClaimStatus.requestMappings[0].containerName: Invalid value: "
            "\"nope\": must match the name of an entry in spec.initContainers.name or "
            "spec.containers.name");
  EXPECT_EQ(errors[1],
            "status.extendedResourceClaimStatus.requestMappings[1].resourceName: Invalid value: "
            "\"example.com/fpga\": must match the extended resource name of an entry in "
            "spec.initContainers.resources.requests or spec.containers.resources.requests");
  EXPECT_NE(errors[2].find("status.extendedResourceClaimStatus.requestName: Invalid value: "
                           "\"Bad_Name\""),
            std::string::npos);
  EXPECT_EQ(errors.back(),
            "status.extendedResourceClaimStatus.requestMappings[3].requestName: Duplicate value: "
            "\"Bad_Name\"");
  // The update is refused as kube-apiserver words it.
  Json old = GpuPod();
  auto r = ValidateUpdate(Pods(), old, pod);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(r.error().message.rfind("Pod \"p\" is invalid: [", 0), 0u) << r.error().message;
}

TEST(PodExtendedResourceClaimStatusTest, ClaimNameMustBeASubdomain) {
  Json pod = GpuPod();
  pod["status"]["extendedResourceClaimStatus"] = {
      {"resourceClaimName", "Not A Name"},
      {"requestMappings", {Mapping("c", "example.com/gpu", "r")}}};
  const auto errors = ToStrings(PodExtendedResourceClaimStatusErrors(pod));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].rfind("status.extendedResourceClaimStatus.resourceClaimName: Invalid value: "
                            "\"Not A Name\"",
                            0),
            0u);
}

}  // namespace
}  // namespace berth::apiserver
