#include "apiserver/crd_registry.h"

#include <gtest/gtest.h>

#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// The registry is the process's: each test uses a group of its own and unregisters it.
Json Crd(const std::string& group, Json versions, const char* established = "True") {
  return {{"metadata", {{"name", "things." + group}}},
          {"spec",
           {{"group", group},
            {"scope", "Cluster"},
            {"names", {{"plural", "things"}, {"kind", "Thing"}, {"shortNames", {"th"}}}},
            {"versions", versions}}},
          {"status", {{"conditions", {{{"type", "Established"}, {"status", established}}}}}}};
}

Json Version(const std::string& name, bool served, bool storage) {
  return {{"name", name},
          {"served", served},
          {"storage", storage},
          {"schema", {{"openAPIV3Schema", {{"type", "object"}}}}},
          {"subresources",
           {{"status", Json::object()},
            {"scale", {{"specReplicasPath", ".spec.n"}, {"statusReplicasPath", ".status.n"}}}}}};
}

TEST(CrdRegistryTest, ServedVersionsAreFoundUntilUnregistered) {
  RegisterCrd(Crd("reg1.berth.dev", {Version("v1", true, true), Version("v2", true, false),
                                     Version("v0", false, false)}));
  const ResourceInfo* v1 = FindResource("reg1.berth.dev", "v1", "things");
  ASSERT_NE(v1, nullptr);
  EXPECT_FALSE(v1->namespaced);
  EXPECT_EQ(v1->singular, "thing");
  EXPECT_EQ(v1->short_names, std::vector<std::string>{"th"});
  EXPECT_EQ(v1->subresources, (std::vector<std::string>{"status", "scale"}));
  EXPECT_EQ(v1->StorageName(), "things.reg1.berth.dev");
  const CustomResourceVersion* custom = CustomResourceOf(*v1);
  ASSERT_NE(custom, nullptr);
  EXPECT_TRUE(custom->storage);
  EXPECT_TRUE(custom->several_versions);
  EXPECT_EQ(custom->spec_replicas_path, ".spec.n");
  EXPECT_NE(FindResource("reg1.berth.dev", "v2", "things"), nullptr);
  EXPECT_EQ(FindResource("reg1.berth.dev", "v0", "things"), nullptr);  // not served
  EXPECT_EQ(FindResourceByKind("reg1.berth.dev", "Thing"), v1);
  // A built-in resource is not a custom one.
  EXPECT_EQ(CustomResourceOf(*FindResource("", "v1", "pods")), nullptr);
  UnregisterCrd("things.reg1.berth.dev");
  EXPECT_EQ(FindResource("reg1.berth.dev", "v1", "things"), nullptr);
  // What a request still holds stays valid and known.
  EXPECT_EQ(CustomResourceOf(*v1), custom);
  EXPECT_EQ(v1->kind, "Thing");
}

TEST(CrdRegistryTest, ACrdNotEstablishedIsNotServed) {
  RegisterCrd(Crd("reg2.berth.dev", {Version("v1", true, true)}, "False"));
  EXPECT_EQ(FindResource("reg2.berth.dev", "v1", "things"), nullptr);
  RegisterCrd(Crd("reg2.berth.dev", {Version("v1", true, true)}));
  EXPECT_NE(FindResource("reg2.berth.dev", "v1", "things"), nullptr);
  // Conflicting names later (a rewrite refused its names): no longer served.
  RegisterCrd(Crd("reg2.berth.dev", {Version("v1", true, true)}, "False"));
  EXPECT_EQ(FindResource("reg2.berth.dev", "v1", "things"), nullptr);
}

TEST(CrdRegistryTest, StorageViewsAndTerminatingCrds) {
  Json crd = Crd("reg3.berth.dev", {Version("v1", true, true), Version("v2", true, false)});
  RegisterCrd(crd);
  int found = 0;
  for (const ResourceInfo* r : CustomStorageResources()) found += r->group == "reg3.berth.dev";
  EXPECT_EQ(found, 1);  // one per CRD, not per version
  EXPECT_EQ(StorageResourceOf(crd).version, "v1");
  EXPECT_FALSE(CustomResourceOf(*FindResource("reg3.berth.dev", "v1", "things"))->terminating);
  crd["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z";
  RegisterCrd(crd);
  EXPECT_TRUE(CustomResourceOf(*FindResource("reg3.berth.dev", "v1", "things"))->terminating);
  UnregisterCrd("things.reg3.berth.dev");
}

TEST(CrdRegistryTest, ObjectsReadWithTheApiVersionAskedFor) {
  RegisterCrd(Crd("reg4.berth.dev", {Version("v1", true, true), Version("v2", true, false)}));
  const ResourceInfo& v2 = *FindResource("reg4.berth.dev", "v2", "things");
  Json list = {{"kind", "ThingList"},
               {"apiVersion", "reg4.berth.dev/v2"},
               {"items",
                {{{"kind", "Thing"}, {"apiVersion", "reg4.berth.dev/v1"}},
                 {{"kind", "Other"}, {"apiVersion", "reg4.berth.dev/v1"}}}}};
  Json out = Json::parse(WithServedVersion(v2, list.dump()));
  EXPECT_EQ(out["items"][0]["apiVersion"], "reg4.berth.dev/v2");
  EXPECT_EQ(out["items"][1]["apiVersion"], "reg4.berth.dev/v1");  // another kind: untouched
  Json event = {{"type", "ADDED"},
                {"object", {{"kind", "Thing"}, {"apiVersion", "reg4.berth.dev/v1"}}}};
  EXPECT_EQ(Json::parse(WithServedVersion(v2, event.dump()))["object"]["apiVersion"],
            "reg4.berth.dev/v2");
  // A Status (an error) is left as it is.
  const std::string status = R"({"kind":"Status","apiVersion":"v1","code":404})";
  EXPECT_EQ(Json::parse(WithServedVersion(v2, status)), Json::parse(status));
  UnregisterCrd("things.reg4.berth.dev");
}

}  // namespace
}  // namespace berth::apiserver
