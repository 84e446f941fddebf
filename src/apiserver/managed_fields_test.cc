#include "apiserver/managed_fields.h"

#include <gtest/gtest.h>

#include "apiserver/patch.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

FieldManagerContext Ctx(const std::string& manager,
                        const std::string& now = "2026-11-26T08:00:00Z") {
  FieldManagerContext ctx;
  ctx.manager = manager;
  ctx.manager_named = true;
  ctx.api_version = "v1";
  ctx.now = now;
  ctx.has_status_subresource = true;
  return ctx;
}

Json Config(const std::string& app, const std::string& image) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "p"}, {"labels", {{"app", app}}}}},
          {"spec", {{"containers", {{{"name", "c"}, {"image", image}}}}}}};
}

// Server-side apply as the server does it: merge, then ownership.
Result<Json> Apply(const Json* live, const Json& config, const FieldManagerContext& ctx, bool force,
                   std::vector<FieldConflict>* conflicts = nullptr) {
  Json next = config;
  if (live) {
    auto merged = ApplyPatch(*live, config, PatchType::kApplyPatch);
    if (!merged.ok()) return merged.error();
    next = *merged;
  }
  if (auto ok = ApplyManagedFields(live, config, next, ctx, force, conflicts); !ok.ok()) {
    return ok.error();
  }
  return next;
}

const Json* EntryOf(const Json& obj, const std::string& manager, const std::string& op) {
  for (const auto& e : obj["metadata"]["managedFields"]) {
    if (e["manager"] == manager && e["operation"] == op) return &e;
  }
  return nullptr;
}

// CoreDNS's port pair: one number, two protocols. Apply keys ports by both, so re-applying the
// same configuration changes nothing, and each port is owned on its own.
TEST(ManagedFieldsTest, PortsOfOneNumberAndTwoProtocolsStayTwo) {
  Json config = {{"apiVersion", "v1"},
                 {"kind", "Service"},
                 {"metadata", {{"name", "dns"}}},
                 {"spec",
                  {{"ports",
                    {{{"name", "dns"}, {"port", 53}, {"protocol", "UDP"}},
                     {{"name", "dns-tcp"}, {"port", 53}, {"protocol", "TCP"}}}}}}};
  auto first = Apply(nullptr, config, Ctx("kubectl"), false);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto second = Apply(&*first, config, Ctx("kubectl"), false);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ((*second)["spec"]["ports"], config["spec"]["ports"]);
  const std::string fields = EntryOf(*second, "kubectl", "Apply")->dump();
  EXPECT_NE(fields.find(R"(k:{\"port\":53,\"protocol\":\"UDP\"})"), std::string::npos) << fields;
  // A port without a protocol is the TCP one.
  Json tcp_only = config;
  tcp_only["spec"]["ports"] = {{{"name", "dns-tcp"}, {"port", 53}, {"targetPort", 5353}}};
  auto third = ApplyPatch(*second, tcp_only, PatchType::kApplyPatch);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ((*third)["spec"]["ports"][0]["protocol"], "UDP");
  EXPECT_EQ((*third)["spec"]["ports"][1]["targetPort"], 5353);
}

TEST(ManagedFieldsTest, ApplyRecordsTheAppliedFieldsAsFieldsV1) {
  auto obj = Apply(nullptr, Config("web", "nginx"), Ctx("alice"), false);
  ASSERT_TRUE(obj.ok()) << obj.error().message;
  const Json* e = EntryOf(*obj, "alice", "Apply");
  ASSERT_NE(e, nullptr) << obj->dump();
  EXPECT_EQ((*e)["apiVersion"], "v1");
  EXPECT_EQ((*e)["fieldsType"], "FieldsV1");
  EXPECT_EQ((*e)["time"], "2026-11-26T08:00:00Z");
  EXPECT_FALSE(e->contains("subresource"));
  // Name, apiVersion and kind are not owned; containers are owned per item by name.
  Json want = {
      {"f:metadata", {{"f:labels", {{"f:app", Json::object()}}}}},
      {"f:spec",
       {{"f:containers",
         {{"k:{\"name\":\"c\"}",
           {{".", Json::object()}, {"f:name", Json::object()}, {"f:image", Json::object()}}}}}}}};
  EXPECT_EQ((*e)["fieldsV1"], want);
}

TEST(ManagedFieldsTest, AnotherManagerChangingAnOwnedFieldConflictsUnlessForced) {
  auto first = Apply(nullptr, Config("web", "nginx"), Ctx("alice"), false);
  ASSERT_TRUE(first.ok());
  std::vector<FieldConflict> conflicts;
  auto second = Apply(&*first, Config("db", "nginx"), Ctx("bob"), false, &conflicts);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().code, ErrorCode::kConflict);
  EXPECT_EQ(second.error().message,
            "Apply failed with 1 conflict: conflict with \"alice\": .metadata.labels.app");
  ASSERT_EQ(conflicts.size(), 1u);
  EXPECT_EQ(conflicts[0].field, ".metadata.labels.app");

  // Two changed fields: both named, grouped by manager.
  auto two = Apply(&*first, Config("db", "redis"), Ctx("bob"), false, &conflicts);
  ASSERT_FALSE(two.ok());
  EXPECT_EQ(two.error().message,
            "Apply failed with 2 conflicts: conflicts with \"alice\":\n"
            "- .metadata.labels.app\n- .spec.containers[name=\"c\"].image");

  // The same value is shared, not a conflict.
  auto shared = Apply(&*first, Config("web", "nginx"), Ctx("bob"), false);
  ASSERT_TRUE(shared.ok()) << shared.error().message;
  EXPECT_NE(EntryOf(*shared, "alice", "Apply"), nullptr);
  EXPECT_NE(EntryOf(*shared, "bob", "Apply"), nullptr);

  // Forced: bob takes the label over; alice keeps the container.
  auto forced = Apply(&*first, Config("db", "nginx"), Ctx("bob"), true);
  ASSERT_TRUE(forced.ok());
  EXPECT_EQ((*forced)["metadata"]["labels"]["app"], "db");
  const Json* alice = EntryOf(*forced, "alice", "Apply");
  ASSERT_NE(alice, nullptr);
  EXPECT_FALSE((*alice)["fieldsV1"].contains("f:metadata")) << alice->dump();
  EXPECT_TRUE((*alice)["fieldsV1"].contains("f:spec"));
}

TEST(ManagedFieldsTest, FieldsNoLongerAppliedAreRemovedUnlessSomeoneElseOwnsThem) {
  Json config = Config("web", "nginx");
  config["metadata"]["labels"]["tier"] = "front";
  config["metadata"]["labels"]["team"] = "a";
  auto first = Apply(nullptr, config, Ctx("alice"), false);
  ASSERT_TRUE(first.ok());
  // bob applies the same team label: shared.
  Json bob = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"labels", {{"team", "a"}}}}}};
  auto shared = Apply(&*first, bob, Ctx("bob"), false);
  ASSERT_TRUE(shared.ok());
  // alice drops tier and team: tier goes, team stays (bob owns it).
  auto pruned = Apply(&*shared, Config("web", "nginx"), Ctx("alice"), false);
  ASSERT_TRUE(pruned.ok());
  EXPECT_EQ((*pruned)["metadata"]["labels"], (Json{{"app", "web"}, {"team", "a"}}));
}

TEST(ManagedFieldsTest, UpdatesTakeFieldsOverAndLaterAppliesConflictWithThem) {
  auto first = Apply(nullptr, Config("web", "nginx"), Ctx("alice"), false);
  ASSERT_TRUE(first.ok());
  Json labelled = *first;
  labelled["metadata"]["labels"]["app"] = "api";
  RecordUpdateManagedFields(&*first, labelled, Ctx("kubectl-label"));
  const Json* update = EntryOf(labelled, "kubectl-label", "Update");
  ASSERT_NE(update, nullptr);
  EXPECT_EQ((*update)["fieldsV1"],
            (Json{{"f:metadata", {{"f:labels", {{"f:app", Json::object()}}}}}}));
  EXPECT_FALSE(EntryOf(labelled, "alice", "Apply")->at("fieldsV1").contains("f:metadata"));
  // Apply entries come before Update entries.
  EXPECT_EQ(labelled["metadata"]["managedFields"][0]["operation"], "Apply");

  auto again = Apply(&labelled, Config("web", "nginx"), Ctx("alice"), false);
  ASSERT_FALSE(again.ok());
  EXPECT_EQ(again.error().message,
            "Apply failed with 1 conflict: conflict with \"kubectl-label\" using v1: "
            ".metadata.labels.app");
}

TEST(ManagedFieldsTest, UnnamedWritesToUnmanagedObjectsRecordNothing) {
  Json pod = Config("web", "nginx");
  FieldManagerContext ctx = Ctx("berth");
  ctx.manager_named = false;
  Json next = pod;
  next["spec"]["nodeName"] = "n1";
  RecordUpdateManagedFields(&pod, next, ctx);
  EXPECT_FALSE(next["metadata"].contains("managedFields"));
  // A named create records everything set, as an Update.
  Json created = pod;
  RecordUpdateManagedFields(nullptr, created, Ctx("kubectl-create"));
  const Json* e = EntryOf(created, "kubectl-create", "Update");
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE((*e)["fieldsV1"]["f:spec"]["f:containers"].contains("k:{\"name\":\"c\"}"));
}

TEST(ManagedFieldsTest, AppliedConfigurationsMayNotCarryManagedFields) {
  Json config = Config("web", "nginx");
  config["metadata"]["managedFields"] = Json::array({{{"manager", "x"}}});
  auto r = Apply(nullptr, config, Ctx("alice"), false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().code, ErrorCode::kBadRequest);
}

}  // namespace
}  // namespace berth::apiserver
