#include "apiserver/field_types.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// The type error of `body` as group/v1 `kind`, or "" when there is none.
std::string TypeError(const char* group, const char* kind, const std::string& body) {
  const FieldSchema* schema = FindFieldSchema(group, kind);
  EXPECT_NE(schema, nullptr) << kind;
  if (!schema) return "?";
  return FindFieldTypeError(*schema, Json::parse(body)).value_or("");
}

std::string PodError(const std::string& container_extra, const std::string& rest = "") {
  return TypeError("", "Pod",
                   R"({"metadata":{"name":"p"},"spec":{"containers":[{"name":"c","image":"x")" +
                       container_extra + "}]}" + rest + "}");
}

TEST(FieldTypesTest, WellTypedObjectsPass) {
  EXPECT_EQ(PodError(R"(,"ports":[{"containerPort":80,"hostPort":8080,"protocol":"TCP"}],
      "resources":{"requests":{"cpu":"500m","memory":1024}},"stdin":true)",
                     R"(,"status":{"phase":"Running","conditions":[{"type":"Ready",
      "status":"True","lastTransitionTime":"2026-11-28T15:00:00Z"}],"startTime":null})"),
            "");
  EXPECT_EQ(TypeError("apps", "Deployment", R"({"spec":{"replicas":3,"strategy":{"rollingUpdate":
      {"maxSurge":"25%","maxUnavailable":1}}}})"),
            "");
  EXPECT_EQ(TypeError("coordination.k8s.io", "Lease",
                      R"({"spec":{"renewTime":"2026-11-28T15:00:00.123456+01:00"}})"),
            "");
  // Fields the schema does not declare are the unknown-field check's, whatever their type.
  EXPECT_EQ(TypeError("", "Node", R"({"spec":{"nope":[1]},"extra":{}})"), "");
  // Null leaves Go's zero value: accepted anywhere.
  EXPECT_EQ(TypeError("", "Node", R"({"metadata":null,"status":{"conditions":null}})"), "");
}

TEST(FieldTypesTest, NamesTheFieldAsGosDecoderDoes) {
  EXPECT_EQ(TypeError("", "Node", R"({"metadata":{"name":"n"},"status":{"conditions":"x"}})"),
            "json: cannot unmarshal string into Go struct field NodeStatus.status.conditions of "
            "type []v1.NodeCondition");
  EXPECT_EQ(TypeError("", "Node", R"({"metadata":{"name":"n","labels":[1]}})"),
            "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of type "
            "map[string]string");
  EXPECT_EQ(TypeError("", "Node", R"({"metadata":{"labels":{"a":1}}})"),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type "
            "string");
  EXPECT_EQ(TypeError("", "Pod", R"({"status":{"containerStatuses":"x"}})"),
            "json: cannot unmarshal string into Go struct field PodStatus.status.containerStatuses "
            "of type []v1.ContainerStatus");
  EXPECT_EQ(
      TypeError("", "Pod", R"({"metadata":"x"})"),
      "json: cannot unmarshal string into Go struct field Pod.metadata of type v1.ObjectMeta");
  // Array indexes are not part of Go's field path.
  EXPECT_EQ(
      PodError(R"(,"ports":[{"containerPort":"80"}])"),
      "json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports."
      "containerPort of type int32");
  EXPECT_EQ(PodError(R"(,"args":[1])"),
            "json: cannot unmarshal number into Go struct field Container.spec.containers.args of "
            "type string");
  EXPECT_EQ(PodError(R"(,"stdin":"yes")"),
            "json: cannot unmarshal string into Go struct field Container.spec.containers.stdin of "
            "type bool");
}

TEST(FieldTypesTest, IntegersMustFitTheirType) {
  EXPECT_EQ(PodError(R"(,"ports":[{"containerPort":99999999999}])"),
            "json: cannot unmarshal number 99999999999 into Go struct field ContainerPort.spec."
            "containers.ports.containerPort of type int32");
  EXPECT_EQ(
      TypeError("apps", "Deployment", R"({"spec":{"replicas":1.5}})"),
      "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of "
      "type int32");
  EXPECT_EQ(TypeError("", "Pod", R"({"spec":{"activeDeadlineSeconds":18446744073709551615}})"),
            "json: cannot unmarshal number 18446744073709551615 into Go struct field PodSpec.spec."
            "activeDeadlineSeconds of type int64");
  EXPECT_EQ(TypeError("", "Pod", R"({"spec":{"activeDeadlineSeconds":9223372036854775807}})"), "");
}

TEST(FieldTypesTest, IntOrStringQuantityAndTime) {
  EXPECT_EQ(
      TypeError("apps", "Deployment",
                R"({"spec":{"strategy":{"rollingUpdate":{"maxSurge":true}}}})"),
      "json: cannot unmarshal bool into Go struct field RollingUpdateDeployment.spec.strategy."
      "rollingUpdate.maxSurge of type int32");
  const std::string quantity =
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
  EXPECT_EQ(TypeError("", "Node", R"({"status":{"capacity":{"cpu":[1]}}})"), quantity);
  EXPECT_EQ(TypeError("", "Node", R"({"status":{"capacity":{"cpu":"1x"}}})"), quantity);
  EXPECT_EQ(TypeError("", "Node", R"({"status":{"capacity":{"cpu":2,"memory":"1Gi"}}})"), "");
  EXPECT_EQ(TypeError("", "Node", R"({"status":{"conditions":[{"lastHeartbeatTime":5}]}})"),
            "json: cannot unmarshal number into Go struct field NodeCondition.status.conditions."
            "lastHeartbeatTime of type string");
  EXPECT_EQ(TypeError("", "Node", R"({"status":{"conditions":[{"lastHeartbeatTime":"x"}]}})"),
            R"(parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as RFC 3339)");
  for (const char* bad : {"2026-13-01T00:00:00Z", "2026-11-28 15:00:00Z", "2026-11-28T15:00:00",
                          "2026-11-28T15:00:00.Z", "2026-11-28T15:00:00+0100"}) {
    EXPECT_NE(TypeError("", "Node",
                        std::string(R"({"metadata":{"creationTimestamp":")") + bad + R"("}})"),
              "")
        << bad;
  }
}

}  // namespace
}  // namespace berth::apiserver
