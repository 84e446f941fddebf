#include "apiserver/name_validation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const ResourceInfo& Kind(const char* group, const char* plural) {
  return *FindResource(group, "v1", plural);
}

// The 422 message of creating `meta` as resource `r`, or "" when it is accepted.
std::string Refusal(const ResourceInfo& r, const Json& meta) {
  auto ok = ValidateNewName(r, Json{{"metadata", meta}});
  if (ok.ok()) return "";
  EXPECT_EQ(ok.error().code, ErrorCode::kInvalid);
  return ok.error().message;
}

constexpr const char* kSubdomain =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

TEST(NameValidationTest, MostKindsTakeADns1123Subdomain) {
  const ResourceInfo& cms = Kind("", "configmaps");
  EXPECT_EQ(Refusal(cms, {{"name", "kube-root-ca.crt"}}), "");
  EXPECT_EQ(Refusal(cms, {{"name", "a/b"}}),
            std::string("ConfigMap \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": ") +
                kSubdomain);
  for (const char* bad : {"..", ".", "a%b", "A", "-a", "a-", "a..b", "a_b"}) {
    EXPECT_THAT(Refusal(cms, {{"name", bad}}), HasSubstr("RFC 1123 subdomain")) << bad;
  }
  EXPECT_THAT(Refusal(cms, {{"name", std::string(65536, 'a')}}),
              HasSubstr("metadata.name: Invalid value: \"aaa"));
  EXPECT_THAT(Refusal(cms, {{"name", std::string(254, 'a')}}),
              HasSubstr(": must be no more than 253 characters"));
  EXPECT_EQ(Refusal(cms, {{"name", std::string(253, 'a')}}), "");
  EXPECT_THAT(Refusal(Kind("apps", "deployments"), {{"name", "Web"}}),
              StartsWith("Deployment \"Web\" is invalid: metadata.name:"));
}

TEST(NameValidationTest, NamespacesServicesAndRbacHaveTheirOwnRules) {
  const ResourceInfo& ns = Kind("", "namespaces");
  EXPECT_EQ(Refusal(ns, {{"name", "team-a"}}), "");
  EXPECT_THAT(Refusal(ns, {{"name", "a.b"}}), HasSubstr("a lowercase RFC 1123 label must"));
  EXPECT_THAT(Refusal(ns, {{"name", std::string(64, 'a')}}),
              HasSubstr("must be no more than 63 characters"));
  const ResourceInfo& svc = Kind("", "services");
  EXPECT_EQ(Refusal(svc, {{"name", "web"}}), "");
  EXPECT_THAT(Refusal(svc, {{"name", "1web"}}), HasSubstr("a DNS-1035 label must"));
  const ResourceInfo& roles = Kind("rbac.authorization.k8s.io", "clusterroles");
  EXPECT_EQ(Refusal(roles, {{"name", "system:controller:Job"}}), "");
  EXPECT_THAT(Refusal(roles, {{"name", ".."}}),
              HasSubstr("Invalid value: \"..\": may not be '..'"));
  EXPECT_THAT(Refusal(roles, {{"name", "."}}), HasSubstr("may not be '.'"));
  EXPECT_THAT(Refusal(roles, {{"name", "a/b"}}), HasSubstr("may not contain '/'"));
  EXPECT_THAT(Refusal(roles, {{"name", "a%b"}}), HasSubstr("may not contain '%'"));
  EXPECT_THAT(Refusal(roles, {{"name", std::string(254, 'a')}}),
              HasSubstr("must be no more than 253 characters"));
  EXPECT_THAT(Refusal(Kind("batch", "cronjobs"), {{"name", std::string(53, 'a')}}),
              HasSubstr("must be no more than 52 characters"));
}

TEST(NameValidationTest, GenerateNameIsAPrefixAndWhatItGenerates) {
  const ResourceInfo& pods = Kind("", "pods");
  EXPECT_EQ(Refusal(pods, {{"generateName", "web-"}}), "");
  EXPECT_EQ(Refusal(pods, {{"generateName", std::string(200, 'a')}}), "") << "cut to 58";
  EXPECT_THAT(Refusal(pods, {{"generateName", std::string(254, 'a')}}),
              HasSubstr("metadata.generateName: Invalid value: \"aaa"));
  EXPECT_THAT(Refusal(pods, {{"generateName", "Web-"}}),
              HasSubstr("metadata.generateName: Invalid value: \"Web-\": a lowercase RFC 1123"));
  EXPECT_THAT(Refusal(pods, {{"generateName", "a/"}}), HasSubstr("metadata.generateName"));
  EXPECT_EQ(Refusal(Kind("", "services"), {{"generateName", std::string(62, 'a') + "-"}}), "");
  // 50 characters and 5 generated ones are more than a CronJob's 52.
  EXPECT_THAT(Refusal(Kind("batch", "cronjobs"), {{"generateName", std::string(50, 'a')}}),
              HasSubstr("must be no more than 52 characters"));
  // Neither: the store answers that one is required.
  EXPECT_EQ(Refusal(pods, Json::object()), "");
}

}  // namespace
}  // namespace berth::apiserver
