// The HTTP extender client against the SDK server (real HTTP on ephemeral ports).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "api/codec.h"
#include "berth/config/plugin_args.h"
#include "berth/extender/server.h"
#include "berth/extender/v1.h"
#include "extender/extender_test_util.h"
#include "extender/http_extender.h"
#include "extender/wire_internal.h"
#include "net/http_server.h"
#include "net/tls_certs.h"
#include "testing/builders.h"

namespace berth::extender {
namespace {

using nlohmann::json;
using test_util::Config;
using test_util::Infos;
using test_util::Names;
using test_util::Ptrs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- client <-> SDK server

// An SDK server whose filter rejects node "n2" and records what it was sent.
struct RecordingServer {
  ExtenderServer server;
  std::mutex mu;
  std::vector<v1::ExtenderArgs> filter_args;
  std::vector<v1::ExtenderBindingArgs> binds;
  std::vector<v1::ExtenderPreemptionArgs> preempts;

  RecordingServer() {
    server.Filter("filter", [this](const v1::ExtenderArgs& args) {
      {
        std::lock_guard lock(mu);
        filter_args.push_back(args);
      }
      std::vector<std::string> keep;
      for (auto& n : NodeNamesOf(args))
        if (n != "n2") keep.push_back(n);
      v1::ExtenderFilterResult r = FilterResultFor(args, keep);
      r.failed_nodes["n2"] = "n2 is reserved";
      return r;
    });
    server.Prioritize("prioritize", [](const v1::ExtenderArgs& args) {
      v1::HostPriorityList out;
      int64_t s = 0;
      for (auto& n : NodeNamesOf(args)) out.push_back({n, s++});
      return out;
    });
    server.Bind("bind", [this](const v1::ExtenderBindingArgs& a) {
      std::lock_guard lock(mu);
      binds.push_back(a);
      return v1::ExtenderBindingResult{};
    });
    server.Preempt("preempt", [this](const v1::ExtenderPreemptionArgs& a) {
      std::lock_guard lock(mu);
      preempts.push_back(a);
      v1::ExtenderPreemptionResult r;
      // Keep only n1, naming its victims by UID.
      if (a.node_name_to_meta_victims && a.node_name_to_meta_victims->count("n1"))
        r.node_name_to_meta_victims["n1"] = a.node_name_to_meta_victims->at("n1");
      if (a.node_name_to_victims && a.node_name_to_victims->count("n1")) {
        v1::MetaVictims m;
        m.num_pdb_violations = a.node_name_to_victims->at("n1").num_pdb_violations;
        for (const auto& p : a.node_name_to_victims->at("n1").pods)
          m.pods.push_back({p->metadata.uid});
        r.node_name_to_meta_victims["n1"] = m;
      }
      return r;
    });
    EXPECT_TRUE(server.Start({}).ok());
  }
};

class HttpExtenderTest : public ::testing::TestWithParam<bool> {};

TEST_P(HttpExtenderTest, FilterPrioritizeBindPreempt) {
  const bool cache_capable = GetParam();
  RecordingServer rs;
  config::Extender cfg = Config(rs.server.url() + "/");
  cfg.node_cache_capable = cache_capable;
  auto ext = HttpExtender::Create(cfg, "extenders[0]");
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  auto pod = MakePod().Name("p").Label("app", "web").Obj();
  auto infos = Infos({"n1", "n2", "n3"});

  auto f = (*ext)->Filter(*pod, Ptrs(infos));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_THAT(Names(f->feasible), ElementsAre("n1", "n3"));
  EXPECT_EQ(f->feasible[0], infos[0].get());  // Berth's own NodeInfo, with its pods
  EXPECT_EQ(f->failed.at("n2"), "n2 is reserved");
  {
    std::lock_guard lock(rs.mu);
    ASSERT_EQ(rs.filter_args.size(), 1u);
    const v1::ExtenderArgs& sent = rs.filter_args[0];
    EXPECT_EQ(sent.pod->metadata.labels.at("app"), "web");
    EXPECT_EQ(sent.node_names.has_value(), cache_capable);
    EXPECT_EQ(sent.nodes.has_value(), !cache_capable);
    if (!cache_capable) {
      EXPECT_EQ((*sent.nodes)[2]->metadata.name, "n3");
      EXPECT_EQ((*sent.nodes)[2]->status.allocatable.at("cpu").MilliValue(), 4000);
    }
  }

  auto pr = (*ext)->Prioritize(*pod, Ptrs(infos));
  ASSERT_TRUE(pr.ok()) << pr.error().message;
  ASSERT_EQ(pr->size(), 3u);
  EXPECT_EQ((*pr)[2].host, "n3");
  EXPECT_EQ((*pr)[2].score, 2);

  ASSERT_TRUE((*ext)->Bind(*pod, "n3").ok());
  {
    std::lock_guard lock(rs.mu);
    ASSERT_EQ(rs.binds.size(), 1u);
    EXPECT_EQ(rs.binds[0].pod_name, "p");
    EXPECT_EQ(rs.binds[0].pod_namespace, "default");
    EXPECT_EQ(rs.binds[0].pod_uid, "uid-p");
    EXPECT_EQ(rs.binds[0].node, "n3");
  }

  // Preemption: victims go out in full or as UIDs, and come back resolved on the snapshot.
  auto v1pod = MakePod().Name("victim1").Node("n1").Obj();
  auto v2pod = MakePod().Name("victim2").Node("n3").Obj();
  Snapshot snap = Snapshot::Build({infos[0]->node_ptr(), infos[2]->node_ptr()}, {v1pod, v2pod});
  std::map<std::string, Victims> candidates;
  candidates["n1"].pods.push_back(snap.Get("n1")->pods()[0]);
  candidates["n1"].num_pdb_violations = 1;
  candidates["n3"].pods.push_back(snap.Get("n3")->pods()[0]);
  auto pe = (*ext)->ProcessPreemption(*pod, candidates, snap);
  ASSERT_TRUE(pe.ok()) << pe.error().message;
  ASSERT_EQ(pe->size(), 1u);
  EXPECT_EQ(pe->at("n1").pods[0]->pod->metadata.name, "victim1");
  EXPECT_EQ(pe->at("n1").num_pdb_violations, 1);
  std::lock_guard lock(rs.mu);
  ASSERT_EQ(rs.preempts.size(), 1u);
  EXPECT_EQ(rs.preempts[0].node_name_to_meta_victims.has_value(), cache_capable);
  EXPECT_EQ(rs.preempts[0].node_name_to_victims.has_value(), !cache_capable);
}

// Prioritize after a filter that kept every node resends the filter's arguments; anything else
// (fewer nodes, a node replaced behind the same NodeInfo, another pod) is encoded afresh.
TEST_P(HttpExtenderTest, PrioritizeResendsTheFilterArgumentsOnlyForTheSameNodes) {
  RecordingServer rs;
  config::Extender cfg = Config(rs.server.url());
  cfg.node_cache_capable = GetParam();
  auto ext = HttpExtender::Create(cfg, "extenders[0]");
  ASSERT_TRUE(ext.ok()) << ext.error().message;
  auto pod = MakePod().Name("p").Obj();
  auto infos = Infos({"n1", "n3", "n4"});
  auto hosts = [](const Result<std::vector<HostPriority>>& r) {
    std::vector<std::string> out;
    if (r.ok())
      for (const auto& h : *r) out.push_back(h.host);
    return out;
  };
  ASSERT_TRUE((*ext)->Filter(*pod, Ptrs(infos)).ok());
  EXPECT_THAT(hosts((*ext)->Prioritize(*pod, Ptrs(infos))), ElementsAre("n1", "n3", "n4"));
  const std::vector<const NodeInfo*> fewer = {infos[0].get(), infos[2].get()};
  EXPECT_THAT(hosts((*ext)->Prioritize(*pod, fewer)), ElementsAre("n1", "n4"));
  infos[1]->SetNode(MakeNode().Name("n5").Capacity({{"cpu", "4"}, {"pods", "110"}}).Obj());
  EXPECT_THAT(hosts((*ext)->Prioritize(*pod, Ptrs(infos))), ElementsAre("n1", "n5", "n4"));
  auto other = MakePod().Name("q").Label("app", "web").Obj();
  ASSERT_TRUE((*ext)->Filter(*other, Ptrs(infos)).ok());
  std::lock_guard lock(rs.mu);
  ASSERT_EQ(rs.filter_args.size(), 2u);
  EXPECT_EQ(rs.filter_args[1].pod->metadata.name, "q");
  EXPECT_EQ(rs.filter_args[1].pod->metadata.labels.at("app"), "web");
}

INSTANTIATE_TEST_SUITE_P(NodeCacheCapable, HttpExtenderTest, ::testing::Bool());

// A raw server answering every request with `answer` (status, body), after `delay`.
std::unique_ptr<net::HttpServer> RawServer(int status, std::string body,
                                           std::chrono::milliseconds delay = {}) {
  auto s = net::HttpServer::Start({}, [=](net::HttpRequest&) {
    if (delay.count()) std::this_thread::sleep_for(delay);
    net::HttpResponse r;
    r.status = status;
    r.body = body;
    return r;
  });
  EXPECT_TRUE(s.ok());
  return std::move(s).value();
}

TEST(HttpExtenderErrorsTest, EveryFailureNamesTheExtender) {
  auto pod = MakePod().Name("p").Obj();
  auto infos = Infos({"n1"});
  struct Case {
    std::string name;
    std::unique_ptr<net::HttpServer> server;
    std::string want;
  };
  std::vector<Case> cases;
  cases.push_back({"500", RawServer(500, "boom"), "code 500"});
  cases.push_back({"malformed", RawServer(200, "{not json"), "malformed JSON"});
  cases.push_back(
      {"error field", RawServer(200, R"({"Error":"extender is sad"})"), "extender is sad"});
  cases.push_back({"unknown node", RawServer(200, R"({"NodeNames":["ghost"]})"),
                   "claims a filtered node \"ghost\""});
  cases.push_back(
      {"timeout", RawServer(200, "{}", std::chrono::milliseconds(1500)), "failed filter"});
  for (auto& c : cases) {
    config::Extender cfg = Config(fmt::format("http://127.0.0.1:{}", c.server->port()));
    cfg.node_cache_capable = true;
    cfg.http_timeout_ms = 300;
    auto ext = HttpExtender::Create(cfg, "extenders[0]");
    ASSERT_TRUE(ext.ok());
    const auto start = std::chrono::steady_clock::now();
    auto f = (*ext)->Filter(*pod, Ptrs(infos));
    ASSERT_FALSE(f.ok()) << c.name;
    EXPECT_THAT(f.error().message, HasSubstr(c.want)) << c.name;
    if (c.name != "error field" && c.name != "unknown node") {
      EXPECT_THAT(f.error().message, HasSubstr(fmt::format("127.0.0.1:{}", c.server->port())))
          << c.name;
    }
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(1200)) << c.name;
  }
  // Nobody listening: the connection is refused.
  uint16_t port;
  {
    auto gone = RawServer(200, "{}");
    port = gone->port();
  }
  auto ext = HttpExtender::Create(Config(fmt::format("http://127.0.0.1:{}", port)), "e");
  ASSERT_TRUE(ext.ok());
  auto f = (*ext)->Filter(*pod, Ptrs(infos));
  ASSERT_FALSE(f.ok());
  EXPECT_THAT(f.error().message, HasSubstr(fmt::format("127.0.0.1:{}/filter", port)));
}

TEST(HttpExtenderTest, ManagedResourcesDecideInterest) {
  config::Extender cfg = Config("http://127.0.0.1:1");
  cfg.managed_resources = {{"example.com/gpu", false}};
  auto ext = HttpExtender::Create(cfg, "e");
  ASSERT_TRUE(ext.ok());
  EXPECT_FALSE((*ext)->IsInterested(*MakePod().Name("p").Req({{"cpu", "1"}}).Obj()));
  auto gpu = std::make_shared<Pod>(*MakePod().Name("g").Obj());
  gpu->spec.init_containers.push_back(Container{});
  gpu->spec.init_containers[0].resources.limits["example.com/gpu"] = testing::Q("1");
  EXPECT_TRUE((*ext)->IsInterested(*gpu));
  config::Extender all = Config("http://127.0.0.1:1");
  EXPECT_TRUE((*HttpExtender::Create(all, "e"))->IsInterested(*MakePod().Name("p").Obj()));
}

TEST(HttpExtenderTest, HttpsWithACustomCa) {
  auto ca = net::GenerateCa("extender-ca");
  ASSERT_TRUE(ca.ok());
  auto cert = net::GenerateServingCert(*ca, "extender", {"127.0.0.1"});
  ASSERT_TRUE(cert.ok());
  ExtenderServer server;
  server.Filter("filter", [](const v1::ExtenderArgs& a) { return FilterResultFor(a, {"n1"}); });
  ServerOptions so;
  so.tls_cert_pem = cert->cert_pem;
  so.tls_key_pem = cert->key_pem;
  ASSERT_TRUE(server.Start(so).ok());
  ASSERT_THAT(server.url(), ::testing::StartsWith("https://"));
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("berth-ext-{}", getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "ca.crt") << ca->cert_pem;
  auto pod = MakePod().Name("p").Obj();
  auto infos = Infos({"n1", "n2"});

  config::Extender cfg = Config(server.url());
  cfg.node_cache_capable = true;
  cfg.tls_config = config::ExtenderTLSConfig{};
  cfg.tls_config->ca_file = (dir / "ca.crt").string();
  auto trusted = HttpExtender::Create(cfg, "e");
  ASSERT_TRUE(trusted.ok()) << trusted.error().message;
  auto f = (*trusted)->Filter(*pod, Ptrs(infos));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_THAT(Names(f->feasible), ElementsAre("n1"));
  // Many calls reuse the pooled TLS connection.
  for (int i = 0; i < 20; ++i) ASSERT_TRUE((*trusted)->Filter(*pod, Ptrs(infos)).ok());

  // Without the CA the certificate is not trusted...
  config::Extender untrusted = Config(server.url());
  untrusted.node_cache_capable = true;
  auto u = HttpExtender::Create(untrusted, "e");
  ASSERT_TRUE(u.ok());
  EXPECT_FALSE((*u)->Filter(*pod, Ptrs(infos)).ok());
  // ...unless enableHTTPS without a CA asks for no verification, as upstream does.
  untrusted.enable_https = true;
  auto insecure = HttpExtender::Create(untrusted, "e");
  ASSERT_TRUE(insecure.ok());
  EXPECT_TRUE((*insecure)->Filter(*pod, Ptrs(infos)).ok());
  // A missing CA file is a configuration error naming the field.
  cfg.tls_config->ca_file = (dir / "missing.crt").string();
  auto bad = HttpExtender::Create(cfg, "extenders[2]");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("extenders[2].tlsConfig.ca"));
  std::filesystem::remove_all(dir);
}

Result<std::unique_ptr<net::HttpClient>> ClientFor(const std::string& url) {
  net::HttpClientOptions options;
  options.server = url;
  return net::HttpClient::Create(options);
}

TEST(ExtenderServerTest, BadRequestsAndHandlerFailures) {
  ExtenderServer server;
  server.Filter("filter", [](const v1::ExtenderArgs&) -> v1::ExtenderFilterResult {
    throw std::runtime_error("database down");
  });
  ASSERT_TRUE(server.Start({}).ok());
  auto client = ClientFor(server.url());
  ASSERT_TRUE(client.ok());
  auto health = (*client)->Do("GET", "/healthz");
  ASSERT_TRUE(health.ok());
  EXPECT_EQ(health->status, 200);
  auto bad = (*client)->Do("POST", "/filter", "{\"Pod\": 3}");
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("ExtenderArgs.Pod"));
  auto failed = (*client)->Do("POST", "/filter", "{}");
  ASSERT_TRUE(failed.ok());
  EXPECT_EQ(failed->status, 500);
  EXPECT_THAT(failed->body, HasSubstr("database down"));
  auto unknown = (*client)->Do("POST", "/nope", "{}");
  ASSERT_TRUE(unknown.ok());
  EXPECT_EQ(unknown->status, 404);
}

// Prioritize usually repeats the filter's arguments: the server decodes them once, and decodes a
// pod it has just seen once. Other arguments are never answered from that memory.
TEST(ExtenderServerTest, RepeatedArgumentsAreDecodedOnce) {
  struct Seen {
    const Pod* pod;
    std::string label;
    std::vector<std::string> names;
  };
  std::mutex mu;
  std::vector<Seen> seen;
  auto record = [&](const v1::ExtenderArgs& args) {
    std::lock_guard lock(mu);
    seen.push_back({args.pod.get(), args.pod->metadata.labels.at("v"), NodeNamesOf(args)});
  };
  ExtenderServer server;
  server.Filter("filter", [&](const v1::ExtenderArgs& args) {
    record(args);
    return FilterResultFor(args, NodeNamesOf(args));
  });
  server.Prioritize("prioritize", [&](const v1::ExtenderArgs& args) {
    record(args);
    return v1::HostPriorityList{};
  });
  ASSERT_TRUE(server.Start({}).ok());
  auto client = ClientFor(server.url());
  ASSERT_TRUE(client.ok());
  auto args = [](std::string_view label, std::string_view names) {
    return fmt::format(R"({{"Pod":{{"metadata":{{"name":"p","labels":{{"v":"{}"}}}}}},)"
                       R"("Nodes":null,"NodeNames":[{}]}})",
                       label, names);
  };
  const std::vector<std::pair<std::string, std::string>> requests = {
      {"/filter", args("1", R"("a","b")")}, {"/prioritize", args("1", R"("a","b")")},
      {"/prioritize", args("1", R"("b")")}, {"/filter", args("2", R"("a","b")")},
      {"/filter", args("2", R"("n1")")},    {"/prioritize", args("1", R"("a","b")")},
  };
  for (const auto& [path, body] : requests) {
    auto r = (*client)->Do("POST", path, body);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
  }
  std::lock_guard lock(mu);
  ASSERT_EQ(seen.size(), requests.size());
  EXPECT_THAT(seen[0].names, ElementsAre("a", "b"));
  EXPECT_EQ(seen[1].pod, seen[0].pod);  // the same arguments: decoded once
  EXPECT_THAT(seen[1].names, ElementsAre("a", "b"));
  EXPECT_EQ(seen[2].pod, seen[0].pod);  // the same pod with other nodes
  EXPECT_THAT(seen[2].names, ElementsAre("b"));
  EXPECT_NE(seen[3].pod, seen[0].pod);
  EXPECT_EQ(seen[3].label, "2");
  EXPECT_THAT(seen[4].names, ElementsAre("n1"));  // escaped: the general decoder
  EXPECT_EQ(seen[4].label, "2");
  EXPECT_EQ(seen[5].label, "1");
  EXPECT_THAT(seen[5].names, ElementsAre("a", "b"));
}

// Whole nodes are decoded once per text: a node that changes (same name, new text) is decoded
// again, and every request gets its own nodes in its own order.
TEST(ExtenderServerTest, WholeNodesAreDecodedOncePerText) {
  std::mutex mu;
  std::vector<std::vector<v1::NodePtr>> seen;
  ExtenderServer server;
  server.Filter("filter", [&](const v1::ExtenderArgs& args) {
    std::lock_guard lock(mu);
    seen.push_back(args.nodes.value_or(std::vector<v1::NodePtr>{}));
    return FilterResultFor(args, NodeNamesOf(args));
  });
  // Answers with some of the nodes sent, in another order, and one of its own.
  server.Filter("subset", [](const v1::ExtenderArgs& args) {
    v1::ExtenderFilterResult r;
    r.nodes.emplace();
    for (auto it = args.nodes->rbegin(); it != args.nodes->rend(); ++it)
      if ((*it)->metadata.labels.at("zone") != "z1") r.nodes->push_back(*it);
    r.nodes->push_back(MakeNode().Name("own").Label("zone", "z9").Obj());
    r.failed_nodes["a"] = "zone z1";
    return r;
  });
  ASSERT_TRUE(server.Start({}).ok());
  auto client = ClientFor(server.url());
  ASSERT_TRUE(client.ok());
  auto node = [](std::string_view name, std::string_view zone) {
    return fmt::format(R"({{"metadata":{{"name":"{}","labels":{{"zone":"{}"}}}}}})", name, zone);
  };
  auto args = [](std::string_view pod, const std::vector<std::string>& nodes) {
    return fmt::format(R"({{"Pod":{{"metadata":{{"name":"{}"}}}},"Nodes":{{"metadata":{{}},)"
                       R"("items":[{}]}},"NodeNames":null}})",
                       pod, fmt::join(nodes, ","));
  };
  const std::vector<std::string> requests = {
      args("p", {node("a", "z1"), node("b", "z2")}),
      args("q", {node("b", "z2"), node("a", "z1")}),
      args("r", {node("a", "z3")}),
  };
  for (const std::string& body : requests) {
    auto r = (*client)->Do("POST", "/filter", body);
    ASSERT_TRUE(r.ok());
    ASSERT_EQ(r->status, 200) << r->body;
    EXPECT_THAT(r->body, HasSubstr("\"name\":\"a\""));
  }
  auto bad = (*client)->Do("POST", "/filter", args("s", {node("a", "z1"), R"({"spec":3})"}));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->status, 400);
  EXPECT_THAT(bad->body, HasSubstr("ExtenderArgs.Nodes.items[1]"));

  auto subset = (*client)->Do("POST", "/subset",
                              args("t", {node("a", "z1"), node("b", "z2"), node("c", "z3")}));
  ASSERT_TRUE(subset.ok());
  ASSERT_EQ(subset->status, 200) << subset->body;
  auto answer = v1::DecodeExtenderFilterResult(subset->body);
  ASSERT_TRUE(answer.ok()) << answer.error().message << "\n" << subset->body;
  std::vector<std::string> names, zones;
  for (const auto& n : *answer->nodes) {
    names.push_back(n->metadata.name);
    zones.push_back(n->metadata.labels.at("zone"));
  }
  EXPECT_THAT(names, ElementsAre("c", "b", "own"));
  EXPECT_THAT(zones, ElementsAre("z3", "z2", "z9"));
  EXPECT_EQ(answer->failed_nodes.at("a"), "zone z1");
  EXPECT_FALSE(answer->node_names.has_value());

  std::lock_guard lock(mu);
  ASSERT_EQ(seen.size(), 3u);
  ASSERT_EQ(seen[1].size(), 2u);
  EXPECT_EQ(seen[1][0], seen[0][1]);  // "b" again: the node decoded for the first request
  EXPECT_EQ(seen[1][1], seen[0][0]);
  ASSERT_EQ(seen[2].size(), 1u);
  EXPECT_NE(seen[2][0], seen[0][0]);  // "a" changed
  EXPECT_EQ(seen[2][0]->metadata.labels.at("zone"), "z3");
  EXPECT_EQ(seen[0][0]->metadata.labels.at("zone"), "z1");
}

// Concurrent requests with different and repeated arguments: every answer is computed from its
// own request's pod and nodes, whatever the server remembered from the others.
TEST(ExtenderServerTest, ConcurrentRequestsGetTheirOwnArguments) {
  ExtenderServer server;
  server.Prioritize("prioritize", [](const v1::ExtenderArgs& args) {
    // Score = the pod's number, so the answer shows which pod the handler saw.
    const int64_t score = std::stoll(args.pod->metadata.labels.at("n"));
    v1::HostPriorityList out;
    for (const auto& name : NodeNamesOf(args)) out.push_back({name, score});
    return out;
  });
  ServerOptions options;
  options.threads = 4;
  ASSERT_TRUE(server.Start(options).ok());
  std::atomic<int> wrong = 0, failed = 0;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto client = ClientFor(server.url());
      if (!client.ok()) return void(++failed);
      for (int i = 0; i < 200; ++i) {
        const int pod = (t + i / 2) % 5;  // each body twice in a row, mixed across threads
        const int first = (i % 3) * 10, count = 1 + (i + t) % 4;
        std::vector<std::string> names;
        for (int k = 0; k < count; ++k) names.push_back(fmt::format("n{}", first + k));
        const std::string body = fmt::format(
            R"({{"Pod":{{"metadata":{{"name":"p","labels":{{"n":"{}"}}}}}},"NodeNames":["{}"]}})",
            pod, fmt::join(names, "\",\""));
        auto r = (*client)->Do("POST", "/prioritize", body);
        if (!r.ok() || r->status != 200) {
          ++failed;
          continue;
        }
        auto list = v1::DecodeHostPriorityList(r->body);
        bool right = list.ok() && list->size() == names.size();
        for (size_t k = 0; right && k < names.size(); ++k)
          right = (*list)[k].host == names[k] && (*list)[k].score == pod;
        if (!right) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace berth::extender
