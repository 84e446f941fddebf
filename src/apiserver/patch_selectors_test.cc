#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "apiserver/patch.h"
#include "apiserver/selectors.h"
#include "apiserver/table.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

TEST(PatchTest, StrategicMergeMergesContainersByNameAndDeletesNulls) {
  Json pod = {
      {"metadata", {{"labels", {{"a", "1"}, {"b", "2"}}}}},
      {"spec",
       {{"containers", {{{"name", "c1"}, {"image", "x"}}, {{"name", "c2"}, {"image", "y"}}}},
        {"tolerations", {{{"key", "k1"}}}}}}};
  Json patch = {{"metadata", {{"labels", {{"b", nullptr}, {"c", "3"}}}}},
                {"spec",
                 {{"$setElementOrder/containers", {{{"name", "c1"}}, {{"name", "c2"}}}},
                  {"containers", {{{"name", "c2"}, {"image", "z"}}}},
                  {"tolerations", {{{"key", "k2"}}}}}}};
  auto out = ApplyPatch(pod, patch, PatchType::kStrategicMergePatch);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)["metadata"]["labels"], (Json{{"a", "1"}, {"c", "3"}}));
  EXPECT_EQ((*out)["spec"]["containers"][0]["image"], "x");
  EXPECT_EQ((*out)["spec"]["containers"][1]["image"], "z");
  // Tolerations have no merge key: replaced, as kube-apiserver does.
  EXPECT_EQ((*out)["spec"]["tolerations"], (Json{{{"key", "k2"}}}));
}

TEST(PatchTest, StrategicMergeUpdatesConditionsByType) {
  Json pod = {{"status",
               {{"conditions",
                 {{{"type", "Ready"}, {"status", "False"}},
                  {{"type", "PodScheduled"}, {"status", "True"}}}}}}};
  Json patch = {
      {"status",
       {{"conditions",
         {{{"type", "PodScheduled"}, {"status", "False"}, {"reason", "Unschedulable"}}}}}}};
  auto out = ApplyPatch(pod, patch, PatchType::kStrategicMergePatch);
  ASSERT_TRUE(out.ok());
  ASSERT_EQ((*out)["status"]["conditions"].size(), 2u);
  EXPECT_EQ((*out)["status"]["conditions"][1]["reason"], "Unschedulable");
}

TEST(PatchTest, MergeAndJsonPatchAndUnsupportedType) {
  Json node = {{"spec", {{"unschedulable", true}}}};
  auto merged = ApplyPatch(node, {{"spec", {{"unschedulable", nullptr}}}}, PatchType::kMergePatch);
  ASSERT_TRUE(merged.ok());
  EXPECT_FALSE((*merged)["spec"].contains("unschedulable"));
  auto jp = ApplyPatch(
      node, Json::parse(R"([{"op":"replace","path":"/spec/unschedulable","value":false}])"),
      PatchType::kJsonPatch);
  ASSERT_TRUE(jp.ok());
  EXPECT_EQ((*jp)["spec"]["unschedulable"], false);
  auto bad =
      ApplyPatch(node, Json::parse(R"([{"op":"remove","path":"/nope"}])"), PatchType::kJsonPatch);
  EXPECT_FALSE(bad.ok());
  auto type = PatchTypeFor("application/xml");
  ASSERT_FALSE(type.ok());
  EXPECT_EQ(type.error().code, ErrorCode::kUnsupportedMediaType);
}

TEST(SelectorTest, LabelSelectorForms) {
  Json web = {{"metadata", {{"labels", {{"app", "web"}, {"tier", "3"}}}}}};
  Json canary = {{"metadata", {{"labels", {{"app", "db"}, {"canary", "y"}}}}}};
  auto match = [](std::string_view sel, const Json& o) {
    auto f = ParseLabelSelector(sel);
    EXPECT_TRUE(f.ok()) << sel;
    return !*f || (*f)(o);
  };
  EXPECT_TRUE(match("app in (web,db),!canary", web));
  EXPECT_FALSE(match("app in (web,db),!canary", canary));
  EXPECT_TRUE(match("app!=db", web));
  EXPECT_TRUE(match("missing!=x", web));  // != also matches objects without the key
  EXPECT_TRUE(match("tier>2", web));
  EXPECT_FALSE(match("tier<3", web));
  EXPECT_TRUE(match("app==web", web));
  EXPECT_TRUE(match("canary", canary));
  EXPECT_TRUE(match("", canary));
  EXPECT_FALSE(ParseLabelSelector("app in web").ok());
  // Keys and values follow the labels' own rules (`kubectl get -l 'a=-b'` is a 400).
  auto bad_value = ParseLabelSelector("a=-b");
  ASSERT_FALSE(bad_value.ok());
  EXPECT_EQ(bad_value.error().code, ErrorCode::kBadRequest);
  EXPECT_THAT(bad_value.error().message,
              ::testing::HasSubstr("values[0][a]: Invalid value: \"-b\": a valid label must be"));
  // `a=b=c` reads `a=b`, then an `=` where a `,` should be.
  EXPECT_EQ(ParseLabelSelector("a=b=c").error().message,
            "found '=', expected: ',' or 'end of string'");
  EXPECT_FALSE(ParseLabelSelector("app in (web,-db)").ok());
  EXPECT_FALSE(ParseLabelSelector("Bad_Prefix.com/x=1").ok());
  EXPECT_FALSE(ParseLabelSelector("tier>two").ok());
  EXPECT_TRUE(ParseLabelSelector("example.com/tier in (a, b),x=").ok());
}

TEST(SelectorTest, FieldSelectorAllowlistAndEmptyValues) {
  const ResourceInfo& pods = *FindResource("", "v1", "pods");
  Json pending = {{"metadata", {{"name", "p"}}},
                  {"spec", {{"schedulerName", "s"}}},
                  {"status", {{"phase", "Pending"}}}};
  auto unscheduled = ParseFieldSelector(pods, "spec.nodeName=,status.phase!=Succeeded");
  ASSERT_TRUE(unscheduled.ok());
  EXPECT_TRUE((*unscheduled)(pending));
  auto bad = ParseFieldSelector(pods, "foo=bar");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kBadRequest);
  EXPECT_EQ(bad.error().message, "field label not supported: foo");
}

TEST(TableTest, PodRowsCarryTheUsualColumns) {
  const ResourceInfo& pods = *FindResource("", "v1", "pods");
  Json pod = {
      {"metadata",
       {{"name", "web"}, {"namespace", "default"}, {"creationTimestamp", "2026-01-01T00:00:00Z"}}},
      {"spec", {{"nodeName", "n1"}, {"containers", {{{"name", "c"}}}}}},
      {"status", {{"phase", "Pending"}}}};
  Json t = ToTable(pods, {&pod}, 7, IncludeObject::kMetadata, 1767225600 + 90);
  EXPECT_EQ(t["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(t["columnDefinitions"][6]["name"], "Node");
  EXPECT_EQ(t["columnDefinitions"][6]["priority"], 1);
  EXPECT_EQ(t["rows"][0]["cells"],
            (Json{"web", "0/1", "Pending", "0", "90s", "<none>", "n1", "<none>", "<none>"}));
  EXPECT_EQ(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(HumanDuration(3 * 3600 + 5 * 60), "3h5m");
  EXPECT_EQ(HumanDuration(10 * 86400), "10d");
}

}  // namespace
}  // namespace berth::apiserver
