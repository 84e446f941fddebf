// Deleting through the API server's HTTP surface where several objects or a subresource are
// involved: deletecollection with a label selector, a pod's eviction, and a namespace (its
// lifecycle: Terminating, the namespace deleter, the finalize subresource). They answer once
// the deletions are durable, so they survive a restart.
#include <gtest/gtest.h>

#include "apiserver/namespace_deleter.h"
#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using testing::Json;
using testing::Reply;
using ServerDeleteTest = testing::ServerHttpTest;

std::string LabelledPod(const std::string& name, const std::string& team) {
  return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name +
         R"(","labels":{"team":")" + team +
         R"("}},"spec":{"containers":[{"name":"c","image":"x"}]}})";
}

std::vector<std::string> Names(const Reply& list) {
  std::vector<std::string> out;
  for (const auto& item : list.body["items"]) out.push_back(item["metadata"]["name"]);
  return out;
}

TEST_F(ServerDeleteTest, DeleteCollectionRemovesTheSelectedPodsDurably) {
  for (const auto& [name, team] : std::vector<std::pair<std::string, std::string>>{
           {"a1", "a"}, {"a2", "a"}, {"a3", "a"}, {"b1", "b"}}) {
    ASSERT_EQ(Do(http::verb::post, kPods, LabelledPod(name, team)).status, 201) << name;
  }
  Reply gone = Do(http::verb::delete_, std::string(kPods) + "?labelSelector=team%3Da");
  ASSERT_EQ(gone.status, 200) << gone.body.dump();
  EXPECT_EQ(gone.body["kind"], "PodList");
  EXPECT_EQ(Names(gone), (std::vector<std::string>{"a1", "a2", "a3"}));
  EXPECT_EQ(Names(Do(http::verb::get, kPods)), (std::vector<std::string>{"b1"}));

  // Nothing selected: an empty list, at once.
  Reply none = Do(http::verb::delete_, std::string(kPods) + "?labelSelector=team%3Dz");
  EXPECT_EQ(none.status, 200);
  EXPECT_TRUE(Names(none).empty());

  Restart();
  EXPECT_EQ(Names(Do(http::verb::get, kPods)), (std::vector<std::string>{"b1"}));
}

TEST_F(ServerDeleteTest, EvictionDeletesThePodDurably) {
  ASSERT_EQ(Do(http::verb::post, kPods, LabelledPod("p", "a")).status, 201);
  Reply evicted = Do(
      http::verb::post, std::string(kPods) + "/p/eviction",
      R"({"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p","namespace":"default"}})");
  EXPECT_EQ(evicted.status, 201) << evicted.body.dump();
  EXPECT_EQ(evicted.body["status"], "Success");
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p").status, 404);
  EXPECT_EQ(Do(http::verb::post, std::string(kPods) + "/p/eviction", "{}").status, 404);

  Restart();
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/p").status, 404);
}

TEST_F(ServerDeleteTest, BoundPodWaitsForItsKubeletUnboundPodGoesAtOnce) {
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("bound", R"("nodeName":"n1",)")).status, 201);
  ASSERT_EQ(Do(http::verb::post, kPods, PodJson("unbound")).status, 201);

  Reply marked = Do(http::verb::delete_, std::string(kPods) + "/bound",
                    R"({"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":20})");
  ASSERT_EQ(marked.status, 200) << marked.body.dump();
  EXPECT_EQ(marked.body["metadata"]["deletionGracePeriodSeconds"], 20);
  ASSERT_TRUE(marked.body["metadata"].contains("deletionTimestamp"));
  // Still there, terminating; an update (a kubelet's status write) does not finish it.
  Reply get = Do(http::verb::get, std::string(kPods) + "/bound");
  ASSERT_EQ(get.status, 200);
  EXPECT_EQ(get.body["metadata"]["deletionGracePeriodSeconds"], 20);
  EXPECT_EQ(Do(http::verb::patch, std::string(kPods) + "/bound/status",
               R"({"status":{"phase":"Running"}})", "application/merge-patch+json")
                .status,
            200);
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/bound").status, 200);
  // Deleting again with a longer grace changes nothing; the kubelet's grace 0 deletes it.
  Reply again = Do(http::verb::delete_, std::string(kPods) + "/bound?gracePeriodSeconds=60");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.body["metadata"]["deletionGracePeriodSeconds"], 20);
  Reply now = Do(http::verb::delete_, std::string(kPods) + "/bound",
                 R"({"gracePeriodSeconds":0,"preconditions":{"uid":")" +
                     marked.body["metadata"]["uid"].get<std::string>() + R"("}})");
  EXPECT_EQ(now.status, 200) << now.body.dump();
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/bound").status, 404);

  EXPECT_EQ(Do(http::verb::delete_, std::string(kPods) + "/unbound").status, 200);
  EXPECT_EQ(Do(http::verb::get, std::string(kPods) + "/unbound").status, 404);
}

constexpr const char* kTeam = "/api/v1/namespaces/team";
constexpr const char* kTeamConfigMaps = "/api/v1/namespaces/team/configmaps";

TEST_F(ServerDeleteTest, ANamespaceTerminatesUntilItsContentIsGoneThenGoes) {
  Reply created = Do(http::verb::post, "/api/v1/namespaces", R"({"metadata":{"name":"team"}})");
  ASSERT_EQ(created.status, 201);
  EXPECT_EQ(created.body["spec"]["finalizers"], Json::array({"kubernetes"}));
  // An update keeps the finalizers: only the finalize subresource changes them.
  Reply updated = Do(http::verb::patch, kTeam, R"({"spec":{"finalizers":null}})",
                     "application/merge-patch+json");
  ASSERT_EQ(updated.status, 200);
  EXPECT_EQ(updated.body["spec"]["finalizers"], Json::array({"kubernetes"}));
  for (int i = 0; i < 40; ++i) {
    ASSERT_EQ(Do(http::verb::post, kTeamConfigMaps,
                 R"({"metadata":{"name":"cm-)" + std::to_string(i) + R"("}})")
                  .status,
              201);
  }
  // Held by a finalizer: the namespace stays Terminating until it is removed.
  ASSERT_EQ(Do(http::verb::post, kTeamConfigMaps,
               R"({"metadata":{"name":"held","finalizers":["example.com/keep"]}})")
                .status,
            201);
  Reply deleted = Do(http::verb::delete_, kTeam);
  ASSERT_EQ(deleted.status, 200) << deleted.body.dump();
  EXPECT_EQ(deleted.body["kind"], "Namespace");
  EXPECT_EQ(deleted.body["status"]["phase"], "Terminating");
  EXPECT_TRUE(deleted.body["metadata"].contains("deletionTimestamp"));
  Reply terminating = Do(http::verb::get, kTeam);
  ASSERT_EQ(terminating.status, 200);
  EXPECT_EQ(terminating.body["status"]["phase"], "Terminating");
  EXPECT_EQ(Do(http::verb::delete_, kTeam).status, 200);
  Reply refused = Do(http::verb::post, kTeamConfigMaps, R"({"metadata":{"name":"late"}})");
  EXPECT_EQ(refused.status, 403);
  EXPECT_EQ(refused.body["message"],
            "configmaps \"late\" is forbidden: unable to create new content in namespace team "
            "because it is being terminated");
  EXPECT_EQ(refused.body["details"]["causes"][0]["reason"], "NamespaceTerminating");
  EXPECT_EQ(refused.body["details"]["causes"][0]["field"], "metadata.namespace");

  // A deletion cut short by a restart goes on after it.
  Restart();
  ASSERT_EQ(Do(http::verb::get, kTeam).body["status"]["phase"], "Terminating");
  ASSERT_EQ(Do(http::verb::patch, std::string(kTeamConfigMaps) + "/held",
               R"({"metadata":{"finalizers":null}})", "application/merge-patch+json")
                .status,
            200);
  ASSERT_TRUE(server_->namespace_deleter().WaitIdle(std::chrono::seconds(30)));
  EXPECT_EQ(Do(http::verb::get, kTeam).status, 404);
  EXPECT_EQ(Do(http::verb::get, std::string(kTeamConfigMaps) + "/held").status, 404);
  // Created again, it holds only what a new namespace holds.
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status,
            201);
  EXPECT_TRUE(Do(http::verb::get, kTeamConfigMaps).body["items"].empty());
  Restart();
  EXPECT_TRUE(Do(http::verb::get, kTeamConfigMaps).body["items"].empty());
}

TEST_F(ServerDeleteTest, TheFinalizeSubresourceSetsTheFinalizersOnly) {
  ASSERT_EQ(Do(http::verb::post, "/api/v1/namespaces", R"({"metadata":{"name":"team"}})").status,
            201);
  const std::string finalize = std::string(kTeam) + "/finalize";
  EXPECT_EQ(Do(http::verb::get, finalize).status, 405);
  EXPECT_EQ(Do(http::verb::patch, finalize, "{}", "application/merge-patch+json").status, 405);
  Reply done = Do(http::verb::put, finalize,
                  R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},
                      "spec":{"finalizers":["example.com/mine"]},"status":{"phase":"Gone"}})");
  ASSERT_EQ(done.status, 200) << done.body.dump();
  EXPECT_EQ(done.body["spec"]["finalizers"], Json::array({"example.com/mine"}));
  EXPECT_EQ(done.body["status"]["phase"], "Active");
  // Terminating, emptied, then held by the remaining finalizer until finalize removes it.
  ASSERT_EQ(Do(http::verb::delete_, kTeam).status, 200);
  ASSERT_TRUE(server_->namespace_deleter().WaitIdle(std::chrono::seconds(30)));
  Reply held = Do(http::verb::get, kTeam);
  ASSERT_EQ(held.status, 200);
  EXPECT_EQ(held.body["status"]["phase"], "Terminating");
  EXPECT_TRUE(Do(http::verb::get, "/api/v1/namespaces/team/serviceaccounts").body["items"].empty());
  Reply last = Do(http::verb::put, finalize,
                  R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"team"},
                      "spec":{"finalizers":[]}})");
  EXPECT_EQ(last.status, 200) << last.body.dump();
  EXPECT_EQ(Do(http::verb::get, kTeam).status, 404);
}

}  // namespace
}  // namespace berth::apiserver
