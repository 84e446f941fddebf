#include "client/informer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "apiserver/server.h"
#include "client/client_test_util.h"
#include "net/http_server.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

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

// keep_document: listed and watched objects alike keep only what it returns of their
// documents, and their typed fields whole.
TEST_F(ApiServerFixture, InformerKeepsWhatKeepDocumentReturns) {
  Start();
  auto create = [&](const std::string& name) {
    Json node = {{"apiVersion", "v1"},
                 {"kind", "Node"},
                 {"metadata", {{"name", name}, {"labels", {{"zone", "a"}}}}},
                 {"spec", {{"podCIDR", "10.64.0.0/24"}}}};
    return rest_->Post("/api/v1/nodes", node);
  };
  ASSERT_TRUE(create("listed").ok());
  std::atomic<int> adds{0};
  InformerOptions options{.path = "/api/v1/nodes", .kind = "Node"};
  options.keep_document = [](const Json& doc) {
    return std::make_shared<const Json>(Json{{"spec", doc.at("spec")}});
  };
  Informer inf(rest_.get(), options, {[&](const Object&) { ++adds; }, {}, {}});
  inf.Start();
  for (int i = 0; i < 200 && !inf.HasSynced(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ASSERT_TRUE(create("watched").ok());
  for (int i = 0; i < 200 && adds < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  inf.Stop();
  ASSERT_EQ(adds.load(), 2);
  for (const Object& o : inf.List()) {
    const auto& node = std::get<std::shared_ptr<const berth::Node>>(o);
    ASSERT_NE(node->raw, nullptr);
    EXPECT_EQ(*node->raw, (Json{{"spec", {{"podCIDR", "10.64.0.0/24"}}}})) << node->metadata.name;
    EXPECT_EQ(node->metadata.labels.at("zone"), "a");
  }
}

// An optional kind the server does not serve reads as synced and empty, and is asked again
// with a backoff from 800 ms (lists at about 0, 0.8 and 2.4 s), not in a tight loop.
TEST_F(ApiServerFixture, UnservedOptionalKindIsAskedAgainWithBackoff) {
  Start();
  InformerOptions options{.path = "/apis/example.com/v1/widgets", .kind = "Widget"};
  options.optional = true;
  Informer inf(rest_.get(), options, {});
  inf.Start();
  for (int i = 0; i < 200 && !inf.HasSynced(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(inf.HasSynced());
  std::this_thread::sleep_for(std::chrono::milliseconds(2000));
  inf.Stop();
  EXPECT_TRUE(inf.List().empty());
  EXPECT_GE(inf.lists(), 1);
  EXPECT_LE(inf.lists(), 3);
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

}  // namespace
}  // namespace berth::client
