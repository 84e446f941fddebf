// The OpenAPI documents: schemas with their fields, types and descriptions, references that
// resolve, and the v2 document in both of its representations.
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "apiserver/openapi_schema.h"
#include "apiserver/openapi_v2.h"
#include "apiserver/openapi_v3.h"
#include "apiserver/resources.h"
#include "apiserver/reviews.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

Json V3(std::string_view path) {
  auto doc = OpenApiV3Document(path);
  EXPECT_TRUE(doc.has_value()) << path;
  return doc ? Json::parse(*doc) : Json();
}

// Every "$ref" in `node`, with the prefix removed (checked).
void Refs(const Json& node, std::string_view prefix, std::set<std::string>* out) {
  if (node.is_object()) {
    for (const auto& [k, v] : node.items()) {
      if (k == "$ref") {
        std::string ref = v.get<std::string>();
        EXPECT_EQ(ref.rfind(prefix, 0), 0u) << ref;
        out->insert(ref.substr(prefix.size()));
      } else {
        Refs(v, prefix, out);
      }
    }
  } else if (node.is_array()) {
    for (const auto& v : node) Refs(v, prefix, out);
  }
}

TEST(OpenApiV3Test, IndexNamesEveryGroupVersionWithTheDataHash) {
  Json index = V3("/openapi/v3");
  const std::string hash(openapi_schema::DataHash());
  EXPECT_EQ(index["paths"]["api/v1"]["serverRelativeURL"], "/openapi/v3/api/v1?hash=" + hash);
  EXPECT_EQ(index["paths"]["apis/apps/v1"]["serverRelativeURL"],
            "/openapi/v3/apis/apps/v1?hash=" + hash);
  EXPECT_FALSE(OpenApiV3Document("/openapi/v3/apis/nosuch.group/v1").has_value());
  EXPECT_FALSE(OpenApiV3Document("/openapi/v3/apis/apps/v2").has_value());
  EXPECT_FALSE(OpenApiV3Document("/openapi/v3/api/v2").has_value());
}

TEST(OpenApiV3Test, PodSchemaHasFieldsTypesRequiredAndDescriptions) {
  Json doc = V3("/openapi/v3/api/v1");
  EXPECT_EQ(doc["openapi"], "3.0.0");
  Json& schemas = doc["components"]["schemas"];
  Json& pod = schemas["io.k8s.api.core.v1.Pod"];
  EXPECT_EQ(pod["x-kubernetes-group-version-kind"],
            Json::parse(R"([{"group":"","version":"v1","kind":"Pod"}])"));
  EXPECT_EQ(pod["type"], "object");
  EXPECT_FALSE(pod.value("description", "").empty());
  // A described reference is wrapped in allOf, as kube-apiserver's v3 documents have it.
  EXPECT_EQ(pod["properties"]["spec"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.PodSpec");
  EXPECT_FALSE(pod["properties"]["spec"].contains("$ref"));
  EXPECT_EQ(pod["properties"]["apiVersion"]["type"], "string");
  EXPECT_FALSE(pod["properties"]["metadata"].value("description", "").empty());

  Json& spec = schemas["io.k8s.api.core.v1.PodSpec"];
  EXPECT_EQ(spec["required"], Json::array({"containers"}));
  Json& containers = spec["properties"]["containers"];
  EXPECT_EQ(containers["type"], "array");
  EXPECT_EQ(containers["items"]["$ref"], "#/components/schemas/io.k8s.api.core.v1.Container");
  // What client-side apply merges the list by.
  EXPECT_EQ(containers["x-kubernetes-patch-merge-key"], "name");
  EXPECT_EQ(containers["x-kubernetes-patch-strategy"], "merge");
  EXPECT_FALSE(containers.value("description", "").empty());
  EXPECT_EQ(spec["properties"]["nodeSelector"]["additionalProperties"]["type"], "string");
  EXPECT_EQ(spec["properties"]["priority"]["format"], "int32");

  Json& container = schemas["io.k8s.api.core.v1.Container"];
  EXPECT_EQ(container["required"], Json::array({"name"}));
  EXPECT_EQ(container["properties"]["image"]["type"], "string");
  EXPECT_FALSE(container["properties"]["image"].value("description", "").empty());
  // A field Berth describes nothing of is served without a description, never upstream's.
  EXPECT_FALSE(container["properties"]["stdinOnce"].contains("description"));
  EXPECT_EQ(container["properties"]["stdinOnce"]["type"], "boolean");
  // The either-typed values say so in v3, as kube-apiserver's documents do.
  EXPECT_EQ(schemas["io.k8s.apimachinery.pkg.api.resource.Quantity"]["oneOf"],
            Json::parse(R"([{"type":"string"},{"type":"number"}])"));
  EXPECT_EQ(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"], "int-or-string");
  EXPECT_FALSE(schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].contains("type"));

  Json& node_status = schemas["io.k8s.api.core.v1.NodeStatus"];
  EXPECT_EQ(node_status["properties"]["allocatable"]["additionalProperties"]["$ref"],
            "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity");
}

TEST(OpenApiV3Test, EveryGroupVersionDocumentIsClosedAndHasItsServedKinds) {
  Json index = V3("/openapi/v3");
  for (const auto& [gv, entry] : index["paths"].items()) {
    std::string url = entry["serverRelativeURL"];
    Json doc = V3(url.substr(0, url.find('?')));
    Json& schemas = doc["components"]["schemas"];
    std::set<std::string> refs;
    Refs(schemas, "#/components/schemas/", &refs);
    for (const auto& ref : refs) EXPECT_TRUE(schemas.contains(ref)) << gv << ": " << ref;
    std::set<std::string> kinds;
    for (const auto& [name, schema] : schemas.items()) {
      for (const auto& gvk : schema.value("x-kubernetes-group-version-kind", Json::array())) {
        kinds.insert(gvk["group"].get<std::string>() + "/" + gvk["kind"].get<std::string>());
      }
    }
    for (const auto& r : ServedResources()) {
      if (IsReview(r) || r.GroupVersion() != (gv == "api/v1" ? "v1" : gv.substr(5))) continue;
      if (r.group == "apiextensions.k8s.io") continue;  // no published schema (docs/up.md)
      EXPECT_TRUE(kinds.count(r.group + "/" + r.kind)) << gv << ": " << r.kind;
    }
  }
}

TEST(OpenApiV3Test, DeploymentSpecIsTypedAndReachesThePodTemplate) {
  Json doc = V3("/openapi/v3/apis/apps/v1");
  Json& schemas = doc["components"]["schemas"];
  Json& spec = schemas["io.k8s.api.apps.v1.DeploymentSpec"];
  EXPECT_EQ(spec["properties"]["replicas"]["type"], "integer");
  EXPECT_EQ(spec["properties"]["replicas"]["format"], "int32");
  EXPECT_EQ(spec["properties"]["template"]["allOf"][0]["$ref"],
            "#/components/schemas/io.k8s.api.core.v1.PodTemplateSpec");
  EXPECT_TRUE(schemas.contains("io.k8s.api.core.v1.PodSpec"));
  EXPECT_FALSE(schemas.contains("io.k8s.api.core.v1.Pod"));  // another group's kind
  // The paths still tell kubectl that the server validates fields.
  Json& patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
  EXPECT_EQ(patch["parameters"][0]["name"], "fieldValidation");
  EXPECT_EQ(patch["x-kubernetes-group-version-kind"]["kind"], "Deployment");
  // Client-side apply computes a strategic merge patch from the schemas only when it is listed.
  EXPECT_TRUE(patch["requestBody"]["content"].contains("application/strategic-merge-patch+json"));
}

TEST(OpenApiV2Test, JsonDocumentHasEveryDefinitionWithResolvingReferences) {
  OpenApiV2Reply reply = OpenApiV2Document("application/json");
  EXPECT_EQ(reply.content_type, "application/json");
  Json doc = Json::parse(reply.body);
  EXPECT_EQ(doc["swagger"], "2.0");
  Json& defs = doc["definitions"];
  EXPECT_EQ(defs.size(), openapi_schema::Definitions().size());
  EXPECT_EQ(defs["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["$ref"],
            "#/definitions/io.k8s.api.core.v1.PodSpec");
  std::set<std::string> refs;
  Refs(defs, "#/definitions/", &refs);
  for (const auto& ref : refs) EXPECT_TRUE(defs.contains(ref)) << ref;
}

// A minimal protobuf reader: the length-delimited fields of a message, by number.
struct Field {
  int number;
  std::string_view bytes;  // wire type 2
  uint64_t value;          // wire type 0
};

uint64_t ReadVarint(std::string_view& in) {
  uint64_t v = 0;
  for (int shift = 0; !in.empty(); shift += 7) {
    auto b = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if (!(b & 0x80)) break;
  }
  return v;
}

std::vector<Field> Fields(std::string_view in) {
  std::vector<Field> out;
  while (!in.empty()) {
    uint64_t tag = ReadVarint(in);
    Field f{static_cast<int>(tag >> 3), {}, 0};
    if ((tag & 7) == 2) {
      uint64_t n = ReadVarint(in);
      EXPECT_LE(n, in.size());
      f.bytes = in.substr(0, n);
      in.remove_prefix(n);
    } else {
      EXPECT_EQ(tag & 7, 0u);
      f.value = ReadVarint(in);
    }
    out.push_back(f);
  }
  return out;
}

std::string_view Get(std::string_view msg, int number) {
  for (const Field& f : Fields(msg)) {
    if (f.number == number) return f.bytes;
  }
  return {};
}

TEST(OpenApiV2Test, ProtobufDocumentCarriesSchemasReferencesAndKinds) {
  OpenApiV2Reply reply =
      OpenApiV2Document("application/com.github.proto-openapi.spec.v2@v1.0+protobuf");
  EXPECT_EQ(reply.content_type, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
  EXPECT_EQ(Get(reply.body, 1), "2.0");
  std::string_view pod;
  size_t count = 0;
  for (const Field& named : Fields(Get(reply.body, 9))) {  // Definitions.additional_properties
    ++count;
    if (Get(named.bytes, 1) == "io.k8s.api.core.v1.Pod") pod = Get(named.bytes, 2);
  }
  EXPECT_EQ(count, openapi_schema::Definitions().size());
  ASSERT_FALSE(pod.empty());
  EXPECT_EQ(Get(Get(pod, 22), 1), "object");  // type
  EXPECT_FALSE(Get(pod, 4).empty());          // description
  std::string gvk_yaml;
  for (const Field& ext : Fields(pod)) {
    if (ext.number == 31 && Get(ext.bytes, 1) == "x-kubernetes-group-version-kind") {
      gvk_yaml = std::string(Get(Get(ext.bytes, 2), 2));  // NamedAny.value -> Any.yaml
    }
  }
  EXPECT_EQ(Json::parse(gvk_yaml), Json::parse(R"([{"group":"","kind":"Pod","version":"v1"}])"));
  std::string spec_ref;
  for (const Field& prop : Fields(Get(pod, 25))) {  // Properties.additional_properties
    if (Get(prop.bytes, 1) == "spec") spec_ref = std::string(Get(Get(prop.bytes, 2), 1));
  }
  EXPECT_EQ(spec_ref, "#/definitions/io.k8s.api.core.v1.PodSpec");
}

}  // namespace
}  // namespace berth::apiserver
