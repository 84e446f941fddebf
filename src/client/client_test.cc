#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <set>
#include <thread>

#include "apiserver/server.h"
#include "client/api_cluster_client.h"
#include "client/informer.h"
#include "client/kubeconfig.h"
#include "client/leader_election.h"
#include "client/rest_client.h"
#include "net/http_server.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("berth-client-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name, const std::string& text) const {
    std::string p = (path_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  fs::path path_;
};

std::unique_ptr<RestClient> RestFor(const std::string& server, const std::string& token = "",
                                    RestOptions ro = {}) {
  net::HttpClientOptions o;
  o.server = server;
  o.bearer_token = token;
  o.timeout = std::chrono::seconds(5);
  auto http = net::HttpClient::Create(o);
  EXPECT_TRUE(http.ok());
  return std::make_unique<RestClient>(std::move(http).value(), ro);
}

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

// ---------------------------------------------------------------- informers

class ApiServerFixture : public ::testing::Test {
 protected:
  void Start(size_t watch_window = 200000) {
    apiserver::ServerOptions o;
    o.data_dir = dir_.path() + "/data";
    o.port = 0;
    o.plain_http = true;
    o.watch_window = watch_window;
    auto s = apiserver::Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(s).value();
    rest_ = RestFor(server_->url(), server_->token(), RestOptions{.qps = 0});
  }
  Json Pod(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  }
  TempDir dir_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<RestClient> rest_;
};

// Watches end every second (timeoutSeconds=1) while pods are created: every pod is delivered
// exactly once and the informer's copy ends up complete.
TEST_F(ApiServerFixture, InformerLosesAndRepeatsNothingAcrossReconnects) {
  Start();
  std::mutex mu;
  std::map<std::string, int> adds;
  InformerOptions io{"/api/v1/pods", "Pod", 50, true, {}, 1};
  Informer inf(rest_.get(), io,
               {[&](const Object& o) {
                  std::lock_guard lock(mu);
                  ++adds[std::get<std::shared_ptr<const berth::Pod>>(o)->metadata.name];
                },
                {},
                {}});
  for (int i = 0; i < 120; ++i)
    ASSERT_TRUE(
        rest_->Post("/api/v1/namespaces/default/pods", Pod("pre-" + std::to_string(i))).ok());
  inf.Start();
  for (int i = 0; i < 1500; ++i) {
    ASSERT_TRUE(rest_->Post("/api/v1/namespaces/default/pods", Pod("p-" + std::to_string(i))).ok());
    if (i % 300 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(400));
  }
  for (int i = 0; i < 200; ++i) {
    {
      std::lock_guard lock(mu);
      if (adds.size() == 1620) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  inf.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(adds.size(), 1620u);
  for (int i = 0; i < 1620; ++i) {
    std::string name = i < 120 ? "pre-" + std::to_string(i) : "p-" + std::to_string(i - 120);
    EXPECT_TRUE(adds.count(name)) << name << " was never delivered";
  }
  for (const auto& [name, n] : adds) EXPECT_EQ(n, 1) << name;
  EXPECT_GE(inf.watches(), 2);  // the stream really was cut and resumed
  EXPECT_EQ(inf.List().size(), 1620u);
  // Informer copies of pods keep their typed fields only, not the decoded document.
  for (const Object& o : inf.List()) {
    EXPECT_EQ(std::get<std::shared_ptr<const berth::Pod>>(o)->raw, nullptr);
  }
}

// Objects written by server-side apply carry managedFields on the server; what the informers
// keep (list and watch alike) does not.
TEST_F(ApiServerFixture, InformerCopiesDropManagedFields) {
  Start();
  auto apply = [&](const std::string& name) {
    Json svc = {{"apiVersion", "v1"},
                {"kind", "Service"},
                {"metadata", {{"name", name}, {"labels", {{"app", "web"}}}}},
                {"spec", {{"selector", {{"app", "web"}}}}}};
    return rest_->Patch("/api/v1/namespaces/default/services/" + name + "?fieldManager=tester", svc,
                        "application/apply-patch+yaml");
  };
  ASSERT_TRUE(apply("listed").ok());
  auto got = rest_->Get("/api/v1/namespaces/default/services/listed");
  ASSERT_TRUE(got.ok());
  ASSERT_TRUE((*got)["metadata"].contains("managedFields"));  // the server keeps them
  std::atomic<int> adds{0};
  Informer inf(rest_.get(), {"/api/v1/services", "Service"},
               {[&](const Object&) { ++adds; }, {}, {}});
  inf.Start();
  for (int i = 0; i < 200 && !inf.HasSynced(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(apply("watched").ok());
  // The two applied, and the `kubernetes` service every cluster has.
  for (int i = 0; i < 200 && adds < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  inf.Stop();
  ASSERT_EQ(adds.load(), 3);
  for (const Object& o : inf.List()) {
    const auto& svc = std::get<std::shared_ptr<const berth::Service>>(o);
    ASSERT_NE(svc->raw, nullptr);
    if (svc->metadata.name == "kubernetes") continue;
    EXPECT_FALSE((*svc->raw)["metadata"].contains("managedFields")) << svc->metadata.name;
    EXPECT_EQ((*svc->raw)["metadata"]["labels"]["app"], "web");
  }
}

// A watch answered 410 Gone relists and delivers only the difference. The list's items carry
// no kind or apiVersion, as kube-apiserver sends them.
TEST(InformerTest, GoneRelistsAndDeliversTheDifference) {
  std::atomic<int> lists{0}, watches{0};
  auto item = [](const std::string& name, int rv) {
    return Json{{"metadata", {{"name", name}, {"resourceVersion", std::to_string(rv)}}}};
  };
  std::vector<std::shared_ptr<net::StreamSink>> open;
  std::mutex open_mu;
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.Query("watch")) {
      int n = watches++;
      r.stream = [&, n](std::shared_ptr<net::StreamSink> sink) {
        if (n == 0) {
          sink->Write(R"({"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired"}})"
                      "\n");
          sink->Close();
        } else {
          std::lock_guard lock(open_mu);
          open.push_back(sink);  // held open until the test ends
        }
      };
      return r;
    }
    Json list = {{"kind", "NodeList"},
                 {"apiVersion", "v1"},
                 {"metadata", {{"resourceVersion", lists == 0 ? "10" : "20"}}}};
    list["items"] =
        lists++ == 0 ? Json{item("a", 1), item("b", 2)} : Json{item("b", 15), item("c", 16)};
    r.body = list.dump();
    return r;
  });
  ASSERT_TRUE(server.ok());
  auto rest =
      RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", RestOptions{.qps = 0});
  std::mutex mu;
  std::vector<std::string> events;
  auto name = [](const Object& o) {
    return std::get<std::shared_ptr<const Node>>(o)->metadata.name;
  };
  Informer inf(rest.get(), {"/api/v1/nodes", "Node"},
               {[&](const Object& o) {
                  std::lock_guard lock(mu);
                  events.push_back("add " + name(o));
                },
                [&](const Object&, const Object& o) {
                  std::lock_guard lock(mu);
                  events.push_back("update " + name(o));
                },
                [&](const Object& o) {
                  std::lock_guard lock(mu);
                  events.push_back("delete " + name(o));
                }});
  inf.Start();
  for (int i = 0; i < 100 && watches < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  inf.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(events, (std::vector<std::string>{"add a", "add b", "delete a", "update b", "add c"}));
  EXPECT_EQ(inf.lists(), 2);
  {
    std::lock_guard l2(open_mu);
    for (auto& s : open) s->Close();
  }
}

// An index of the store follows every add, update (moving between values) and delete, and
// lists its objects in key order.
TEST(InformerTest, IndexFollowsAddsUpdatesAndDeletes) {
  auto node = [](const std::string& name, int rv, const std::string& owner) {
    Json n = {{"kind", "Node"},
              {"apiVersion", "v1"},
              {"metadata", {{"name", name}, {"resourceVersion", std::to_string(rv)}}}};
    if (!owner.empty()) n["metadata"]["labels"]["owner"] = owner;
    return n;
  };
  std::shared_ptr<net::StreamSink> stream;
  std::mutex stream_mu;
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.Query("watch")) {
      r.stream = [&](std::shared_ptr<net::StreamSink> sink) {
        std::lock_guard lock(stream_mu);
        stream = sink;
      };
      return r;
    }
    Json list = {
        {"kind", "NodeList"}, {"apiVersion", "v1"}, {"metadata", {{"resourceVersion", "10"}}}};
    list["items"] = Json{node("b", 2, "x"), node("a", 1, "x"), node("c", 3, "")};
    r.body = list.dump();
    return r;
  });
  ASSERT_TRUE(server.ok());
  auto rest =
      RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", RestOptions{.qps = 0});
  std::atomic<int> events{0};
  InformerOptions options{"/api/v1/nodes", "Node"};
  options.keep_documents = true;
  auto count = [&](const Object&) { ++events; };
  Informer inf(rest.get(), options,
               {count, [&](const Object&, const Object&) { ++events; }, count});
  inf.AddIndex("owner", [](const Object& o) -> std::vector<std::string> {
    const Json& doc = *std::get<std::shared_ptr<const Node>>(o)->raw;
    const Json& labels = doc["metadata"].value("labels", Json::object());
    if (!labels.contains("owner")) return {};
    return {labels["owner"].get<std::string>()};
  });
  auto names = [&](const std::string& value) {
    std::vector<std::string> out;
    for (const Object& o : inf.ByIndex("owner", value))
      out.push_back(std::get<std::shared_ptr<const Node>>(o)->metadata.name);
    return out;
  };
  auto wait_for = [&](auto done) {
    for (int i = 0; i < 500 && !done(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  inf.Start();
  wait_for([&] {
    std::lock_guard lock(stream_mu);
    return stream != nullptr && events == 3;
  });
  EXPECT_EQ(names("x"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(names("y").empty());
  // A second index of the same name is not added: the first stays.
  inf.AddIndex("owner", [](const Object&) -> std::vector<std::string> { return {"z"}; });
  EXPECT_TRUE(names("z").empty());
  {
    std::lock_guard lock(stream_mu);
    ASSERT_NE(stream, nullptr);
    stream->Write(Json{{"type", "MODIFIED"}, {"object", node("b", 11, "y")}}.dump() + "\n");
    stream->Write(Json{{"type", "DELETED"}, {"object", node("a", 12, "x")}}.dump() + "\n");
    stream->Write(Json{{"type", "ADDED"}, {"object", node("d", 13, "x")}}.dump() + "\n");
    stream->Write(Json{{"type", "MODIFIED"}, {"object", node("c", 14, "x")}}.dump() + "\n");
  }
  wait_for([&] { return events == 7; });
  EXPECT_EQ(events, 7);
  EXPECT_EQ(names("x"), (std::vector<std::string>{"c", "d"}));
  EXPECT_EQ(names("y"), (std::vector<std::string>{"b"}));
  EXPECT_TRUE(names("nobody").empty());
  EXPECT_TRUE(inf.ByIndex("no-such-index", "x").empty());
  inf.Stop();
  std::lock_guard lock(stream_mu);
  if (stream) stream->Close();
}

// Lines that are not watch events (a proxy's error page, an object where an event belongs, an
// event whose object is not a map, a Status with a code of the wrong type) are logged and the
// watch is opened again: nothing is applied, nothing crashes, and real events still arrive.
TEST(InformerTest, MalformedWatchLinesAreLoggedAndTheWatchReopened) {
  std::atomic<int> watches{0};
  std::vector<std::shared_ptr<net::StreamSink>> open;
  std::mutex open_mu;
  const std::vector<std::string> bad = {
      "<html>502 Bad Gateway</html>",
      R"({"kind":"NodeList","items":[]})",
      R"({"type":"ADDED","object":"n1"})",
      R"({"type":"ERROR","object":{"code":"410"}})",
  };
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.Query("watch")) {
      const int n = watches++;
      r.stream = [&, n](std::shared_ptr<net::StreamSink> sink) {
        if (n < static_cast<int>(bad.size())) {
          sink->Write(bad[n] + "\n");
          sink->Close();
          return;
        }
        sink->Write(R"({"type":"ADDED","object":{"kind":"Node","apiVersion":"v1",)"
                    R"("metadata":{"name":"good","resourceVersion":"7"}}})"
                    "\n");
        std::lock_guard lock(open_mu);
        open.push_back(sink);
      };
      return r;
    }
    r.body = R"({"kind":"NodeList","apiVersion":"v1","metadata":{"resourceVersion":"5"},)"
             R"("items":[]})";
    return r;
  });
  ASSERT_TRUE(server.ok());
  auto rest =
      RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", RestOptions{.qps = 0});
  std::mutex mu;
  std::vector<std::string> added, logged;
  InformerOptions options{"/api/v1/nodes", "Node"};
  options.log = [&](const std::string& line) {
    std::lock_guard lock(mu);
    logged.push_back(line);
  };
  Informer inf(rest.get(), options,
               {[&](const Object& o) {
                  std::lock_guard lock(mu);
                  added.push_back(std::get<std::shared_ptr<const Node>>(o)->metadata.name);
                },
                {},
                {}});
  inf.Start();
  for (int i = 0; i < 500; ++i) {
    {
      std::lock_guard lock(mu);
      if (!added.empty()) break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  inf.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(added, std::vector<std::string>{"good"});
  int not_events = 0;
  for (const auto& l : logged) not_events += l.find("not a watch event") != std::string::npos;
  EXPECT_EQ(not_events, 3);   // the ERROR line ends the watch without being applied
  EXPECT_EQ(inf.lists(), 1);  // a Status code that is not the number 410 is no relist
  {
    std::lock_guard l2(open_mu);
    for (auto& s : open) s->Close();
  }
}

// ---------------------------------------------------------------- binding

// A binding answered 409 is settled by reading the pod; when that read fails too (the
// connection cut again, the server briefly unavailable) beyond the REST client's own retries,
// it is read again rather than the earlier, successful binding being reported as a conflict.
TEST(ApiClusterClientTest, BindConflictSettledThroughAFailingRead) {
  std::atomic<int> reads{0};
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method == "POST") {
      r.status = 409;
      r.body = R"({"kind":"Status","reason":"Conflict","message":"pod p is already assigned"})";
    } else if (reads++ < 4) {
      r.status = 503;
      r.body = R"({"kind":"Status","message":"unavailable"})";
    } else {
      r.body = R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"default",)"
               R"("uid":"u1"},"spec":{"nodeName":"n1"}})";
    }
    return r;
  });
  ASSERT_TRUE(server.ok());
  RestOptions ro{.qps = 0};
  ro.initial_backoff = std::chrono::milliseconds(1);
  ro.max_retries = 1;
  ApiClusterClient client(RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro));
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = "u1";
  auto bound = client.Bind(pod, "n1");
  EXPECT_TRUE(bound.ok()) << bound.error().message;
  EXPECT_EQ(reads.load(), 5);
  auto elsewhere = client.Bind(pod, "n2");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ErrorCode::kConflict);
}

// Bindings and events are written without a document tree: what arrives must still be the
// JSON the API expects, with text escaped, in events.k8s.io/v1 or, when the server does not
// serve that group, core/v1.
TEST(ApiClusterClientTest, BindingAndEventBodiesForBothEventApis) {
  for (bool events_api : {true, false}) {
    std::mutex mu;
    std::map<std::string, std::vector<Json>> posted;  // path -> bodies
    auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
      net::HttpResponse r;
      if (req.method != "POST") {  // informers: empty lists, short watches
        r.body = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
        return r;
      }
      if (!events_api && req.path.rfind("/apis/events.k8s.io/", 0) == 0) {
        r.status = 404;
        r.body = R"({"kind":"Status","reason":"NotFound","message":"not found"})";
        return r;
      }
      std::lock_guard lock(mu);
      posted[req.path].push_back(Json::parse(req.body));
      r.status = 201;
      r.body = "{}";
      return r;
    });
    ASSERT_TRUE(server.ok());
    RestOptions ro{.qps = 0};
    ApiClusterClient client(
        RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", ro));
    berth::Pod pod;
    pod.metadata.name = "web-1";
    pod.metadata.namespace_ = "team-a";
    pod.metadata.uid = "u-1";
    pod.metadata.resource_version = "42";
    ASSERT_TRUE(client.Bind(pod, "node-7").ok());
    client.Start();
    const std::string message = "0/3 nodes are available: \"quoted\"\n\ttab \\ back";
    client.RecordPodEvent(pod, "Warning", "FailedScheduling", "Scheduling", message,
                          "default-scheduler");
    client.Stop();

    std::lock_guard lock(mu);
    const auto& bindings = posted["/api/v1/namespaces/team-a/pods/web-1/binding"];
    ASSERT_EQ(bindings.size(), 1u);
    EXPECT_EQ(bindings[0], Json::parse(R"({"apiVersion":"v1","kind":"Binding",
        "metadata":{"name":"web-1","namespace":"team-a","uid":"u-1"},
        "target":{"apiVersion":"v1","kind":"Node","name":"node-7"}})"));
    const Json pod_ref = {{"apiVersion", "v1"},    {"kind", "Pod"},           {"name", "web-1"},
                          {"namespace", "team-a"}, {"resourceVersion", "42"}, {"uid", "u-1"}};
    if (events_api) {
      const auto& events = posted["/apis/events.k8s.io/v1/namespaces/team-a/events"];
      ASSERT_EQ(events.size(), 1u);
      const Json& ev = events[0];
      EXPECT_EQ(ev["apiVersion"], "events.k8s.io/v1");
      EXPECT_EQ(ev["kind"], "Event");
      EXPECT_EQ(ev["metadata"]["namespace"], "team-a");
      EXPECT_EQ(ev["metadata"]["name"].get<std::string>().rfind("web-1.", 0), 0u);
      EXPECT_EQ(ev["note"], message);
      EXPECT_EQ(ev["reason"], "FailedScheduling");
      EXPECT_EQ(ev["type"], "Warning");
      EXPECT_EQ(ev["action"], "Scheduling");
      EXPECT_EQ(ev["reportingController"], "default-scheduler");
      EXPECT_EQ(ev["reportingInstance"], "default-scheduler-berth");
      EXPECT_EQ(ev["regarding"], pod_ref);
      EXPECT_EQ(ev["eventTime"].get<std::string>().size(), 27u);  // 2026-11-27T10:00:00.000000Z
    } else {
      const auto& events = posted["/api/v1/namespaces/team-a/events"];
      ASSERT_EQ(events.size(), 1u);
      const Json& ev = events[0];
      EXPECT_EQ(ev["apiVersion"], "v1");
      EXPECT_EQ(ev["message"], message);
      EXPECT_EQ(ev["involvedObject"], pod_ref);
      EXPECT_EQ(ev["source"]["component"], "default-scheduler");
      EXPECT_EQ(ev["count"], 1);
      const std::string first = ev["firstTimestamp"];
      EXPECT_EQ(first.size(), 20u);
      EXPECT_EQ(first.back(), 'Z');
      EXPECT_EQ(first, ev["lastTimestamp"]);
      EXPECT_EQ(ev["eventTime"].get<std::string>().substr(0, 19), first.substr(0, 19));
    }
  }
}

// Events queued together go out together, pipelined over several connections: the server holds
// every answer until 20 requests wait at once (writers sending one event per round trip would
// never have more than two outstanding), and every event arrives once. How many are outstanding
// at the very end depends on how the batches split, so a tail that stops growing is answered
// after a quiet moment; the test asserts that the holding point was reached.
TEST(ApiClusterClientTest, QueuedEventsAreSentTogether) {
  std::mutex mu;
  std::set<std::string> names;
  std::vector<std::function<void(net::HttpResponse)>> waiting;
  size_t most_waiting = 0;
  auto last_arrival = std::chrono::steady_clock::now();
  const auto answer_all = [&] {  // with mu held
    for (auto& w : waiting) {
      net::HttpResponse created;
      created.status = 201;
      created.body = "{}";
      w(std::move(created));
    }
    waiting.clear();
  };
  net::HttpServerOptions options;
  options.threads = 1;
  options.pin_connections = true;
  auto server = net::HttpServer::Start(options, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method != "POST") {
      r.body = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
      return r;
    }
    std::lock_guard lock(mu);
    names.insert(Json::parse(req.body)["metadata"]["name"].get<std::string>());
    r.deferred = [&](std::function<void(net::HttpResponse)> reply) {
      std::lock_guard lock(mu);
      waiting.push_back(std::move(reply));
      last_arrival = std::chrono::steady_clock::now();
      most_waiting = std::max(most_waiting, waiting.size());
      if (waiting.size() >= 20) answer_all();
    };
    return r;
  });
  ASSERT_TRUE(server.ok());
  std::jthread tail([&](std::stop_token stop) {
    while (!stop.stop_requested()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      std::lock_guard lock(mu);
      if (!waiting.empty() &&
          std::chrono::steady_clock::now() - last_arrival > std::chrono::milliseconds(500)) {
        answer_all();
      }
    }
    std::lock_guard lock(mu);
    answer_all();
  });
  ApiClusterClient client(
      RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "", RestOptions{.qps = 0}));
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  for (int i = 0; i < 200; ++i) {
    client.RecordPodEvent(pod, "Normal", "Scheduled", "Binding", "bound", "default-scheduler");
  }
  client.Start();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  bool all_arrived = false;
  while (!all_arrived && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::lock_guard lock(mu);
    all_arrived = names.size() == 200 && waiting.empty();
  }
  client.Stop();
  tail.request_stop();
  tail.join();
  std::lock_guard lock(mu);
  EXPECT_TRUE(all_arrived) << names.size() << " events arrived";
  EXPECT_GE(most_waiting, 20u) << "events were not sent together";
}

// Events wait in a bounded queue; past it they are dropped, and the log says so once, not once
// per event.
TEST(ApiClusterClientTest, EventsPastTheQueueAreDroppedAndReportedOnce) {
  std::vector<std::string> logged;
  ApiClusterClient client(RestFor("http://127.0.0.1:1", "", RestOptions{.qps = 0}),
                          [&](const std::string& line) { logged.push_back(line); });
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  // Not started: nothing writes the queue out.
  for (int i = 0; i < 10003; ++i) {
    client.RecordPodEvent(pod, "Normal", "Scheduled", "Binding", "bound", "default-scheduler");
  }
  ASSERT_EQ(logged.size(), 1u);
  EXPECT_EQ(logged[0].rfind("events dropped: 1 since the last report (10000 wait", 0), 0u)
      << logged[0];
}

// Stopping with a backlog of events: what is not written within the drain budget (3 s) is
// dropped and counted in the log, rather than written at the rate limit's pace (1,000 events
// at 50 requests a second would take 20 s, past the kubelet's 30 s with the rest of a stop).
TEST(ApiClusterClientTest, StopWithABacklogDropsWhatTheDrainBudgetDoesNotWrite) {
  std::atomic<int> received{0};
  auto server = net::HttpServer::Start({}, [&](net::HttpRequest& req) {
    net::HttpResponse r;
    if (req.method == "POST") {
      ++received;
      r.status = 201;
      r.body = "{}";
    } else {
      r.body = R"({"kind":"List","metadata":{"resourceVersion":"1"},"items":[]})";
    }
    return r;
  });
  ASSERT_TRUE(server.ok());
  std::mutex mu;
  std::vector<std::string> logged;
  ApiClusterClient client(RestFor("http://127.0.0.1:" + std::to_string((*server)->port()), "",
                                  RestOptions{.qps = 50, .burst = 1}),
                          [&](const std::string& line) {
                            std::lock_guard lock(mu);
                            logged.push_back(line);
                          });
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  for (int i = 0; i < 1000; ++i)
    client.RecordPodEvent(pod, "Normal", "Scheduled", "Binding", "bound", "default-scheduler");
  client.Start();
  const auto start = std::chrono::steady_clock::now();
  client.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_LT(received.load(), 1000);
  std::lock_guard lock(mu);
  bool said = false;
  for (const auto& line : logged)
    said = said || line.find("events not written within 3 s are dropped") != std::string::npos;
  EXPECT_TRUE(said) << ::testing::PrintToString(logged);
}

// A repeated binding (the answer to the first was lost) is answered 409 by the server and
// counts as done when the pod is bound to that node; a pod bound elsewhere, or recreated under
// another UID, is a Conflict, which the scheduler forgets rather than retries.
TEST_F(ApiServerFixture, BindAnsweredConflictIsSettledByThePod) {
  Start();
  for (const char* n : {"n1", "n2"}) {
    ASSERT_TRUE(
        rest_
            ->Post("/api/v1/nodes",
                   Json{{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", n}}}})
            .ok());
  }
  auto created = rest_->Post("/api/v1/namespaces/default/pods", Pod("p"));
  ASSERT_TRUE(created.ok()) << created.error().message;
  berth::Pod pod;
  pod.metadata.name = "p";
  pod.metadata.namespace_ = "default";
  pod.metadata.uid = (*created)["metadata"]["uid"];
  ApiClusterClient client(RestFor(server_->url(), server_->token(), RestOptions{.qps = 0}));

  ASSERT_TRUE(client.Bind(pod, "n1").ok());
  auto again = client.Bind(pod, "n1");
  EXPECT_TRUE(again.ok()) << again.error().message;
  auto elsewhere = client.Bind(pod, "n2");
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_EQ(elsewhere.error().code, ErrorCode::kConflict);
  EXPECT_NE(elsewhere.error().message.find("already assigned to node \"n1\""), std::string::npos)
      << elsewhere.error().message;
  berth::Pod other = pod;
  other.metadata.uid = "another-uid";
  auto recreated = client.Bind(other, "n1");
  ASSERT_FALSE(recreated.ok());
  EXPECT_EQ(recreated.error().code, ErrorCode::kConflict);
  auto live = rest_->Get("/api/v1/namespaces/default/pods/p");
  ASSERT_TRUE(live.ok());
  EXPECT_EQ((*live)["spec"]["nodeName"], "n1");
}

// ---------------------------------------------------------------- leader election

TEST_F(ApiServerFixture, OnlyOneLeadsAndAFollowerTakesOverAfterRelease) {
  Start();
  auto rest_b = RestFor(server_->url(), server_->token(), RestOptions{.qps = 0});
  auto options = [](const std::string& id) {
    LeaderElectionOptions o;
    o.identity = id;
    o.lease_duration = std::chrono::milliseconds(1500);
    o.renew_deadline = std::chrono::milliseconds(1000);
    o.retry_period = std::chrono::milliseconds(100);
    return o;
  };
  LeaderElector a(rest_.get(), options("a"));
  a.Start();
  for (int i = 0; i < 50 && !a.IsLeader(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_TRUE(a.IsLeader());
  LeaderElector b(rest_b.get(), options("b"));
  b.Start();
  std::this_thread::sleep_for(std::chrono::milliseconds(600));
  EXPECT_FALSE(b.IsLeader());
  auto released = std::chrono::steady_clock::now();
  a.Stop();  // releases the lease
  for (int i = 0; i < 100 && !b.IsLeader(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(b.IsLeader());
  EXPECT_LT(std::chrono::steady_clock::now() - released, std::chrono::milliseconds(1500));
  auto lease =
      rest_->Get("/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler");
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ((*lease)["spec"]["holderIdentity"], "b");
  EXPECT_EQ((*lease)["spec"]["leaseTransitions"], 0);  // a released; b took a free lease
  b.Stop();
}

}  // namespace
}  // namespace berth::client
