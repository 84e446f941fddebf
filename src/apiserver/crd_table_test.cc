#include "apiserver/crd_table.h"

#include <gtest/gtest.h>

#include "api/codec.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

CustomResourceVersion PodGroupVersion() {
  CustomResourceVersion v;
  v.info.group = "scheduling.x-k8s.io";
  v.info.version = "v1alpha1";
  v.info.plural = "podgroups";
  v.info.kind = "PodGroup";
  v.printer_columns = Json::parse(R"([
    {"name":"Phase","type":"string","jsonPath":".status.phase"},
    {"name":"MinMember","type":"integer","jsonPath":".spec.minMember"},
    {"name":"Ready","type":"string","jsonPath":".status.conditions[?(@.type==\"Ready\")].status"},
    {"name":"First","type":"string","jsonPath":".spec.items[0].name","priority":1},
    {"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}])");
  v.spec_replicas_path = ".spec.minMember";
  v.status_replicas_path = ".status.running";
  v.label_selector_path = ".status.selector";
  return v;
}

constexpr int64_t kNow = 1'800'000'000;

Json PodGroup() {
  return {
      {"metadata",
       {{"name", "nginx"},
        {"namespace", "default"},
        {"creationTimestamp", FormatTimestamp(kNow - 125)}}},
      {"spec", {{"minMember", 3}, {"items", {{{"name", "a"}}, {{"name", "b"}}}}}},
      {"status",
       {{"phase", "Running"},
        {"running", 2},
        {"selector", "app=x"},
        {"conditions",
         {{{"type", "Other"}, {"status", "False"}}, {{"type", "Ready"}, {"status", "True"}}}}}}};
}

TEST(CrdTableTest, JsonPathsSelectFieldsIndexesAndFilters) {
  const Json obj = PodGroup();
  EXPECT_EQ(*JsonPathValue(obj, ".spec.minMember"), 3);
  EXPECT_EQ(*JsonPathValue(obj, "{.spec.items[1].name}"), "b");
  EXPECT_EQ(*JsonPathValue(obj, ".status.conditions[?(@.type==\"Ready\")].status"), "True");
  EXPECT_EQ(JsonPathValue(obj, ".spec.items[5].name"), nullptr);
  EXPECT_EQ(JsonPathValue(obj, ".spec.missing"), nullptr);
  EXPECT_EQ(JsonPathValue(obj, "spec"), nullptr);  // not a path this evaluator knows
}

TEST(CrdTableTest, RowsFollowThePrinterColumns) {
  const Json obj = PodGroup();
  Json t = CustomResourceTable(PodGroupVersion(), {&obj}, 7, IncludeObject::kMetadata, kNow, true);
  ASSERT_EQ(t["columnDefinitions"].size(), 6u);
  EXPECT_EQ(t["columnDefinitions"][0]["name"], "Name");
  EXPECT_EQ(t["columnDefinitions"][4]["priority"], 1);
  EXPECT_EQ(t["rows"][0]["cells"], Json::parse(R"(["nginx","Running",3,"True","a","2m5s"])"));
  EXPECT_EQ(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(t["metadata"]["resourceVersion"], "7");
  // A value of another type than its column's is an empty cell.
  Json odd = obj;
  odd["spec"]["minMember"] = "three";
  Json t2 = CustomResourceTable(PodGroupVersion(), {&odd}, 7, IncludeObject::kNone, kNow, false);
  EXPECT_TRUE(t2["rows"][0]["cells"][2].is_null());
  EXPECT_FALSE(t2["rows"][0].contains("object"));
}

TEST(CrdTableTest, WithoutPrinterColumnsThereIsAnAge) {
  CustomResourceVersion v = PodGroupVersion();
  v.printer_columns = Json::array();
  const Json obj = PodGroup();
  Json t = CustomResourceTable(v, {&obj}, 1, IncludeObject::kNone, kNow, true);
  ASSERT_EQ(t["columnDefinitions"].size(), 2u);
  EXPECT_EQ(t["columnDefinitions"][1]["name"], "Age");
  EXPECT_EQ(t["rows"][0]["cells"], Json::parse(R"(["nginx","2m5s"])"));
}

TEST(CrdTableTest, ScaleReadsAndWritesTheNamedPaths) {
  const CustomResourceVersion v = PodGroupVersion();
  Json scale = CustomScaleOf(v, PodGroup());
  EXPECT_EQ(scale["spec"]["replicas"], 3);
  EXPECT_EQ(scale["status"]["replicas"], 2);
  EXPECT_EQ(scale["status"]["selector"], "app=x");
  auto next = WithCustomScale(v, PodGroup(), {{"spec", {{"replicas", 5}}}}, "nginx");
  ASSERT_TRUE(next.ok());
  EXPECT_EQ((*next)["spec"]["minMember"], 5);
  auto negative = WithCustomScale(v, PodGroup(), {{"spec", {{"replicas", -1}}}}, "nginx");
  ASSERT_FALSE(negative.ok());
  EXPECT_EQ(negative.error().message,
            "Scale.autoscaling \"nginx\" is invalid: spec.replicas: Invalid value: -1: must be "
            "greater than or equal to 0");
}

}  // namespace
}  // namespace berth::apiserver
