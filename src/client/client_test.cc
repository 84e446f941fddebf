#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "apiserver/server.h"
#include "client/client_test_util.h"
#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "net/http_server.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------- kubeconfig

TEST(KubeconfigTest, ContextsTokensFilesAndMergedKubeconfigs) {
  TempDir dir;
  std::string token_file = dir.File("token", "file-token\n");
  std::string a = dir.File("a.yaml", R"(
apiVersion: v1
kind: Config
current-context: one
clusters:
- name: c1
  cluster: {server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true}
users:
- name: u1
  user: {token: inline-token}
contexts:
- name: one
  context: {cluster: c1, user: u1}
)");
  std::string b = dir.File("b.yaml", R"(
apiVersion: v1
kind: Config
current-context: ignored-because-a-wins
clusters:
- name: c2
  cluster: {server: "http://127.0.0.1:8001/prefix"}
users:
- name: u2
  user: {tokenFile: token}
contexts:
- name: two
  context: {cluster: c2, user: u2}
)");
  auto one = ResolveConnection({.explicit_path = a});
  ASSERT_TRUE(one.ok()) << one.error().message;
  EXPECT_EQ(one->server, "https://10.0.0.1:6443");
  EXPECT_EQ(one->bearer_token, "inline-token");
  EXPECT_TRUE(one->insecure_skip_verify);

  setenv("KUBECONFIG", (a + ":" + b).c_str(), 1);
  auto two = ResolveConnection({.context = "two"});
  unsetenv("KUBECONFIG");
  ASSERT_TRUE(two.ok()) << two.error().message;
  EXPECT_EQ(two->server, "http://127.0.0.1:8001/prefix");
  EXPECT_EQ(two->bearer_token, "file-token");

  auto master = ResolveConnection({.explicit_path = a, .master = "http://127.0.0.1:9"});
  ASSERT_TRUE(master.ok());
  EXPECT_EQ(master->server, "http://127.0.0.1:9");
}

TEST(KubeconfigTest, ErrorsNameTheFileAndContext) {
  TempDir dir;
  std::string a = dir.File("a.yaml", "apiVersion: v1\nkind: Config\ncurrent-context: x\n");
  auto missing_ctx = ResolveConnection({.explicit_path = a});
  ASSERT_FALSE(missing_ctx.ok());
  EXPECT_EQ(missing_ctx.error().message, "kubeconfig " + a + ": context \"x\" not found");
  auto unreadable = ResolveConnection({.explicit_path = dir.path() + "/none.yaml"});
  ASSERT_FALSE(unreadable.ok());
  EXPECT_NE(unreadable.error().message.find("none.yaml"), std::string::npos);
  std::string bad_ca = dir.File("b.yaml", R"(
clusters: [{name: c, cluster: {server: "https://x:1", certificate-authority: missing-ca.crt}}]
contexts: [{name: c, context: {cluster: c}}]
current-context: c
)");
  auto ca = ResolveConnection({.explicit_path = bad_ca});
  ASSERT_FALSE(ca.ok());
  EXPECT_NE(ca.error().message.find("certificate-authority"), std::string::npos);
}

TEST(KubeconfigTest, InClusterConfiguration) {
  TempDir dir;
  InClusterPaths paths{dir.File("token", "sa-token\n"), dir.File("ca.crt", "PEM")};
  unsetenv("KUBECONFIG");
  setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1", 1);
  setenv("KUBERNETES_SERVICE_PORT", "443", 1);
  auto c = ResolveConnection({}, paths);
  unsetenv("KUBERNETES_SERVICE_HOST");
  unsetenv("KUBERNETES_SERVICE_PORT");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->server, "https://10.96.0.1:443");
  EXPECT_EQ(c->bearer_token, "sa-token");
  EXPECT_EQ(c->ca_pem, "PEM");
}

// ---------------------------------------------------------------- REST

TEST(RestClientTest, RetriesServerErrorsAndMapsStatusCodes) {
  std::atomic<int> calls{0};
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.path == "/flaky" && calls++ < 2) {
      r.status = 500;
      r.body = R"({"kind":"Status","message":"try later"})";
    } else if (req.path == "/conflict") {
      r.status = 409;
      r.body = R"({"kind":"Status","reason":"Conflict","message":"the object has been modified"})";
    } else {
      r.body = R"({"ok":true})";
    }
    return r;
  });
  ASSERT_TRUE(server.ok());
  RestOptions ro;
  ro.initial_backoff = std::chrono::milliseconds(1);
  auto rest = RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro);
  auto ok = rest->Get("/flaky");
  ASSERT_TRUE(ok.ok()) << ok.error().message;
  EXPECT_EQ(calls.load(), 3);
  auto conflict = rest->Post("/conflict", Json::object());
  ASSERT_FALSE(conflict.ok());
  EXPECT_EQ(conflict.error().code, ErrorCode::kConflict);
  EXPECT_NE(conflict.error().message.find("the object has been modified"), std::string::npos);
  auto refused = RestFor("http://127.0.0.1:1", "", ro)->Get("/x");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, ErrorCode::kUnavailable);
  // A connection never made is known as such from the error itself, not from its words: the
  // same code and message made elsewhere carry no such fact.
  EXPECT_TRUE(refused.error().never_sent);
  EXPECT_EQ(refused.error().http_status, 0);
  EXPECT_FALSE(ClientError(Error{refused.error().message, refused.error().code}).never_sent);
  EXPECT_FALSE(conflict.error().never_sent);
  EXPECT_EQ(conflict.error().http_status, 409);
  EXPECT_EQ(conflict.error().reason, "Conflict");
  // At an SDK boundary the plain Error keeps the code and message.
  Result<Json> plain = std::move(refused);
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.error().code, ErrorCode::kUnavailable);
}

TEST(RestClientTest, StatusDetailsAndCausesAreReadFromTheBody) {
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest&) {
    net::HttpResponse r;
    r.status = 422;
    r.body = R"({"kind":"Status","status":"Failure","reason":"Invalid",)"
             R"("message":"Pod \"p\" is invalid: spec.containers: Required value",)"
             R"("details":{"name":"p","kind":"Pod","causes":[)"
             R"({"reason":"FieldValueRequired","message":"Required value",)"
             R"("field":"spec.containers"},{"reason":"FieldValueInvalid","message":"Bad"}]},)"
             R"("code":422})";
    return r;
  });
  ASSERT_TRUE(server.ok());
  auto rest = RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", {});
  auto invalid = rest->Post("/api/v1/namespaces/default/pods", Json::object());
  ASSERT_FALSE(invalid.ok());
  const ClientError& e = invalid.error();
  EXPECT_EQ(e.code, ErrorCode::kInvalid);
  EXPECT_EQ(e.http_status, 422);
  EXPECT_FALSE(e.never_sent);
  EXPECT_EQ(e.reason, "Invalid");
  EXPECT_EQ(e.details_name, "p");
  EXPECT_EQ(e.details_kind, "Pod");
  ASSERT_EQ(e.causes.size(), 2u);
  EXPECT_EQ(e.causes[0].reason, "FieldValueRequired");
  EXPECT_EQ(e.causes[0].field, "spec.containers");
  EXPECT_EQ(e.causes[1].message, "Bad");
  EXPECT_EQ(e.causes[1].field, "");
  // The same through the write path that does not read the answer.
  auto sent = rest->Send("POST", "/api/v1/namespaces/default/pods", Json::object());
  ASSERT_FALSE(sent.ok());
  EXPECT_EQ(sent.error().causes.size(), 2u);
}

TEST(RestClientTest, RateLimiterHoldsRequestsToQps) {
  auto server = net::HttpServer::Start({}, [](net::HttpRequest&) { return net::HttpResponse{}; });
  ASSERT_TRUE(server.ok());
  RestOptions ro;
  ro.qps = 20;
  ro.burst = 2;
  auto rest = RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro);
  auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 12; ++i) ASSERT_TRUE(rest->Get("/").ok());
  auto took = std::chrono::steady_clock::now() - start;
  // 2 from the burst, then 10 at 20 per second: about half a second.
  EXPECT_GE(took, std::chrono::milliseconds(400));
}

// ---------------------------------------------------------------- leader election

TEST_F(ApiServerFixture, OnlyOneLeadsAndAFollowerTakesOverAfterRelease) {
  Start();
  auto rest_b = RestFor(server_->url(), server_->token(), RestOptions{.qps = 0});
  auto options = [](const std::string& id) {
    LeaderElectionOptions o;
    o.identity = id;
    // Generous against a loaded machine (ThreadSanitizer on two busy cores): a leader that
    // misses renewals for 4 s would lose the lease, and a take-over by expiry takes 5 s.
    o.lease_duration = std::chrono::milliseconds(5000);
    o.renew_deadline = std::chrono::milliseconds(4000);
    o.retry_period = std::chrono::milliseconds(100);
    return o;
  };
  LeaderElector a(rest_.get(), options("a"));
  a.Start();
  for (int i = 0; i < 500 && !a.IsLeader(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(a.IsLeader());
  LeaderElector b(rest_b.get(), options("b"));
  b.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(b.IsLeader());
  auto released = std::chrono::steady_clock::now();
  a.Stop();  // releases the lease
  for (int i = 0; i < 250 && !b.IsLeader(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(b.IsLeader());
  // Sooner than the lease could have expired: the release handed it over.
  EXPECT_LT(std::chrono::steady_clock::now() - released, std::chrono::milliseconds(4500));
  auto lease =
      rest_->Get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "b");
  EXPECT_EQ((*lease)["spec"]["leaseTransitions"], 0);  // a released; b took a free lease
  b.Stop();
}

}  // namespace
}  // namespace berth::client
