#include "apiserver/namespace_conditions.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const std::vector<std::string> kDeletionTypes = {
    "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
    "NamespaceDeletionContentFailure", "NamespaceContentRemaining", "NamespaceFinalizersRemaining"};

std::vector<std::string> TypesOf(const Json& status) {
  std::vector<std::string> out;
  for (const Json& c : status["conditions"]) out.push_back(c["type"]);
  return out;
}

const Json& ConditionOf(const Json& status, const std::string& type) {
  for (const Json& c : status["conditions"]) {
    if (c["type"] == type) return c;
  }
  static const Json kNone;
  ADD_FAILURE() << "no condition " << type;
  return kNone;
}

TEST(NamespaceConditionsTest, NothingLeftIsFiveFalseConditionsInOrder) {
  Json status = {{"phase", "Terminating"}};
  EXPECT_TRUE(UpdateNamespaceDeletionConditions(status, {}, "2026-03-01T10:00:00Z"));
  EXPECT_EQ(status["phase"], "Terminating");
  EXPECT_EQ(TypesOf(status), kDeletionTypes);
  const std::vector<std::pair<std::string, std::string>> ok = {
      {"ResourcesDiscovered", "All resources successfully discovered"},
      {"ParsedGroupVersions", "All legacy kube types successfully parsed"},
      {"ContentDeleted", "All content successfully deleted, may be waiting on finalization"},
      {"ContentRemoved", "All content successfully removed"},
      {"ContentHasNoFinalizers", "All content-preserving finalizers finished"}};
  for (size_t i = 0; i < ok.size(); ++i) {
    const Json& c = status["conditions"][i];
    EXPECT_EQ(c["status"], "False") << c;
    EXPECT_EQ(c["reason"], ok[i].first) << c;
    EXPECT_EQ(c["message"], ok[i].second) << c;
    EXPECT_EQ(c["lastTransitionTime"], "2026-03-01T10:00:00Z") << c;
  }
  // The same again later changes nothing, not even the times.
  const Json before = status;
  EXPECT_FALSE(UpdateNamespaceDeletionConditions(status, {}, "2026-03-01T10:05:00Z"));
  EXPECT_EQ(status, before);
}

TEST(NamespaceConditionsTest, RemainingContentIsCountedPerResourceAndPerFinalizer) {
  NamespaceContentLeft left;
  left.per_resource = {{"pods.", 2}, {"configmaps.", 1}, {"widgets.example.com", 3}};
  left.per_finalizer = {{"example.com/block", 4}, {"batch.kubernetes.io/job-tracking", 1}};
  EXPECT_EQ(left.Total(), 6);
  Json status;  // null: made an object
  EXPECT_TRUE(UpdateNamespaceDeletionConditions(status, left, "2026-03-01T10:00:00Z"));
  const Json& content = ConditionOf(status, "NamespaceContentRemaining");
  EXPECT_EQ(content["status"], "True");
  EXPECT_EQ(content["reason"], "SomeResourcesRemain");
  EXPECT_EQ(content["message"],
            "Some resources are remaining: configmaps. has 1 resource instances, pods. has 2 "
            "resource instances, widgets.example.com has 3 resource instances");
  const Json& finalizers = ConditionOf(status, "NamespaceFinalizersRemaining");
  EXPECT_EQ(finalizers["status"], "True");
  EXPECT_EQ(finalizers["reason"], "SomeFinalizersRemain");
  EXPECT_EQ(finalizers["message"],
            "Some content in the namespace has finalizers remaining: "
            "batch.kubernetes.io/job-tracking in 1 resource instances, example.com/block in 4 "
            "resource instances");
  EXPECT_EQ(ConditionOf(status, "NamespaceDeletionContentFailure")["status"], "False");
  // Content without finalizers: only the first says so.
  left.per_finalizer.clear();
  EXPECT_TRUE(UpdateNamespaceDeletionConditions(status, left, "2026-03-01T10:00:01Z"));
  EXPECT_EQ(ConditionOf(status, "NamespaceContentRemaining")["status"], "True");
  EXPECT_EQ(ConditionOf(status, "NamespaceFinalizersRemaining")["reason"],
            "ContentHasNoFinalizers");
}

TEST(NamespaceConditionsTest, FailuresAreCountedAndListedSorted) {
  EXPECT_EQ(UnexpectedContentMessage("team", "", "v1", "pods"),
            "unexpected items still remain in namespace: team for gvr: /v1, Resource=pods");
  EXPECT_EQ(UnexpectedContentMessage("team", "apps", "v1", "deployments"),
            "unexpected items still remain in namespace: team for gvr: apps/v1, "
            "Resource=deployments");
  NamespaceContentLeft left;
  left.per_resource = {{"pods.", 1}, {"deployments.apps", 1}};
  left.failures = {UnexpectedContentMessage("team", "", "v1", "pods"),
                   UnexpectedContentMessage("team", "apps", "v1", "deployments")};
  Json status = Json::object();
  UpdateNamespaceDeletionConditions(status, left, "2026-03-01T10:00:00Z");
  const Json& failure = ConditionOf(status, "NamespaceDeletionContentFailure");
  EXPECT_EQ(failure["status"], "True");
  EXPECT_EQ(failure["reason"], "ContentDeletionFailed");
  EXPECT_EQ(failure["message"],
            "Failed to delete all resource types, 2 remaining: unexpected items still remain in "
            "namespace: team for gvr: /v1, Resource=pods, unexpected items still remain in "
            "namespace: team for gvr: apps/v1, Resource=deployments");
}

TEST(NamespaceConditionsTest, TheTransitionTimeMovesOnlyWithTheStatus) {
  NamespaceContentLeft left;
  left.per_resource = {{"configmaps.", 2}};
  Json status = Json::object();
  UpdateNamespaceDeletionConditions(status, left, "2026-03-01T10:00:00Z");
  // One of the two goes: the message changes, the status and its time do not.
  left.per_resource = {{"configmaps.", 1}};
  EXPECT_TRUE(UpdateNamespaceDeletionConditions(status, left, "2026-03-01T10:00:30Z"));
  const Json& content = ConditionOf(status, "NamespaceContentRemaining");
  EXPECT_EQ(content["message"],
            "Some resources are remaining: configmaps. has 1 resource instances");
  EXPECT_EQ(content["lastTransitionTime"], "2026-03-01T10:00:00Z");
  // The last goes: False, at the time it went.
  EXPECT_TRUE(UpdateNamespaceDeletionConditions(status, {}, "2026-03-01T10:01:00Z"));
  const Json& gone = ConditionOf(status, "NamespaceContentRemaining");
  EXPECT_EQ(gone["status"], "False");
  EXPECT_EQ(gone["reason"], "ContentRemoved");
  EXPECT_EQ(gone["lastTransitionTime"], "2026-03-01T10:01:00Z");
  EXPECT_EQ(ConditionOf(status, "NamespaceDeletionDiscoveryFailure")["lastTransitionTime"],
            "2026-03-01T10:00:00Z");
}

TEST(NamespaceConditionsTest, OtherConditionsAndTheOrderFoundAreKept) {
  // Written by someone else, and one of the deletion conditions first.
  Json status = {{"conditions",
                  {{{"type", "NamespaceContentRemaining"},
                    {"status", "False"},
                    {"lastTransitionTime", "2026-03-01T09:00:00Z"},
                    {"reason", "ContentRemoved"},
                    {"message", "All content successfully removed"}},
                   {{"type", "example.com/Archived"}, {"status", "True"}, {"reason", "Done"}}}}};
  NamespaceContentLeft left;
  left.per_resource = {{"configmaps.", 1}};
  EXPECT_TRUE(UpdateNamespaceDeletionConditions(status, left, "2026-03-01T10:00:00Z"));
  EXPECT_EQ(TypesOf(status),
            (std::vector<std::string>{
                "NamespaceContentRemaining", "example.com/Archived",
                "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                "NamespaceDeletionContentFailure", "NamespaceFinalizersRemaining"}));
  EXPECT_EQ(status["conditions"][0]["status"], "True");
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "2026-03-01T10:00:00Z");
  EXPECT_EQ(status["conditions"][1],
            Json({{"type", "example.com/Archived"}, {"status", "True"}, {"reason", "Done"}}));
}

}  // namespace
}  // namespace berth::apiserver
