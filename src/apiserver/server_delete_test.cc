// Deleting through the API server's HTTP surface where several objects or a subresource are
// involved: deletecollection with a label selector, and a pod's eviction. Both answer once the
// deletions are durable, so they survive a restart.
#include <gtest/gtest.h>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
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

}  // namespace
}  // namespace berth::apiserver
