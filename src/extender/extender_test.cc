// The extender wire format, the HTTP extender client against the SDK server (real HTTP on
// ephemeral ports), the example extenders, and `berth simulate` with extenders configured.
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
#include "config/load.h"
#include "extender/examples.h"
#include "extender/http_extender.h"
#include "extender/wire_internal.h"
#include "extender/wire_read.h"
#include "net/http_server.h"
#include "net/tls_certs.h"
#include "plugins/registry.h"
#include "sim/simulator.h"
#include "testing/builders.h"
#include "testing/fake_prometheus.h"

namespace berth::extender {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- wire format

TEST(WireTest, EncodesGoFieldNames) {
  v1::ExtenderArgs args;
  args.pod = MakePod().Name("p").Obj();
  args.node_names = std::vector<std::string>{"a", "b"};
  json doc = json::parse(v1::Encode(args));
  EXPECT_EQ(doc["Pod"]["metadata"]["name"], "p");
  EXPECT_TRUE(doc["Nodes"].is_null());
  EXPECT_EQ(doc["NodeNames"], json({"a", "b"}));

  v1::ExtenderFilterResult r;
  r.node_names = std::vector<std::string>{"a"};
  r.failed_nodes = {{"b", "full"}};
  doc = json::parse(v1::Encode(r));
  EXPECT_EQ(doc, json::parse(R"({"Nodes":null,"NodeNames":["a"],"FailedNodes":{"b":"full"},
                                 "FailedAndUnresolvableNodes":{},"Error":""})"));
  EXPECT_EQ(json::parse(v1::Encode(v1::HostPriorityList{{"a", 3}})),
            json::parse(R"([{"Host":"a","Score":3}])"));
  EXPECT_EQ(json::parse(v1::Encode(v1::ExtenderBindingArgs{"p", "ns", "u1", "n1"})),
            json::parse(R"({"PodName":"p","PodNamespace":"ns","PodUID":"u1","Node":"n1"})"));
}

TEST(WireTest, DecodesAnyCaseAndNull) {
  auto r = v1::DecodeExtenderFilterResult(
      R"({"nodenames":["a"],"failedNodes":null,"FAILEDANDUNRESOLVABLENODES":{"b":"x"},"error":""})");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_THAT(*r->node_names, ElementsAre("a"));
  EXPECT_TRUE(r->failed_nodes.empty());
  EXPECT_EQ(r->failed_and_unresolvable_nodes.at("b"), "x");
  EXPECT_FALSE(r->nodes.has_value());

  auto h = v1::DecodeHostPriorityList(R"([{"host":"a","score":7},{"Host":"b","Score":0}])");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ((*h)[0].host, "a");
  EXPECT_EQ((*h)[0].score, 7);
  EXPECT_TRUE(v1::DecodeHostPriorityList("null")->empty());

  auto p = v1::DecodeExtenderPreemptionResult(
      R"({"NodeNameToMetaVictims":{"n1":{"Pods":[{"UID":"u1"}],"NumPDBViolations":1}}})");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->node_name_to_meta_victims.at("n1").pods[0].uid, "u1");
  EXPECT_EQ(p->node_name_to_meta_victims.at("n1").num_pdb_violations, 1);
}

TEST(WireTest, FilterAnswerKeepsOnlyNodeNames) {
  auto a = v1::DecodeFilterAnswer(R"({"Nodes":{"metadata":{},"items":[
      {"metadata":{"labels":{"name":"not-this"},"name":"a"},"spec":{"taints":[{"key":"k"}]}},
      {"kind":"Node","metadata":{"name":"b"}}]},
      "Extra":[1,{"x":[2]}],"FailedNodes":{"c":"full"},"Error":""})");
  ASSERT_TRUE(a.ok()) << a.error().message;
  ASSERT_TRUE(a->node_item_names.has_value());
  EXPECT_THAT(*a->node_item_names, ElementsAre("a", "b"));
  EXPECT_EQ(a->result.failed_nodes.at("c"), "full");
  EXPECT_FALSE(a->result.node_names.has_value());
  // An answer outside the fast path's shape still decodes (or fails) like the full decoder.
  auto b = v1::DecodeFilterAnswer(R"({"Nodes":"all of them"})");
  ASSERT_FALSE(b.ok());
  auto c = v1::DecodeFilterAnswer(R"({"NodeNames":null,"Nodes":null,"Error":"sad"})");
  ASSERT_TRUE(c.ok());
  EXPECT_EQ(c->result.error, "sad");
  EXPECT_FALSE(c->node_item_names.has_value());
}

// Whole-node filter answers: the names the scheduler reads are the tree decoder's, whichever
// reader took the document.
TEST(WireTest, WholeNodeAnswersReadAsTheTreeDecoderReadsThem) {
  const std::vector<std::string> docs = {
      R"({"Nodes":{"metadata":{},"items":[{"metadata":{"labels":{"name":"x"},"name":"a"},)"
      R"("spec":{"taints":[{"key":"k","value":"a\"]}"}]}},{"kind":"Node","metadata":{"name":"b"}}]},)"
      R"("NodeNames":null,"FailedNodes":{"c":"full"},"FailedAndUnresolvableNodes":{},"Error":""})",
      " { \"Nodes\" : { \"items\" : [ { \"metadata\" : { \"name\" : \"a\" } } ] } } ",
      R"({"Nodes":{"items":[]},"Error":"no"})",
      R"({"Nodes":{"items":[{"metadata":{"name":"a","name":"b"}}]}})",
      R"({"Nodes":{"items":[{"metadata":{"name":"a"},"metadata":{"name":"b"}}]}})",
      R"({"Nodes":{"items":[{"metadata":{"name":"a\u0062"}}]}})",
      R"({"Nodes":{"items":[{"metadata":{"name":"a"}}]},"FailedNodes":{"x":3}})",
      R"({"Nodes":{"items":[{"metadata":{"name":"a"}}]})",
      R"({"Nodes":{"items":[{"spec":{}},{"metadata":{"name":"a"}}]},"Extra":1})",
      R"({"Nodes":{"items":[{"metadata":{"name":"a"},"metadata":{"name":"b"}}]},"Extra":1})",
  };
  for (const std::string& doc : docs) {
    auto fast = v1::DecodeFilterAnswer(doc);
    auto tree = v1::DecodeExtenderFilterResult(doc);
    ASSERT_EQ(fast.ok(), tree.ok()) << doc;
    if (!tree.ok()) continue;
    std::vector<std::string> names;
    for (const auto& n : tree->nodes.value_or(std::vector<v1::NodePtr>{}))
      names.push_back(n->metadata.name);
    ASSERT_TRUE(fast->node_item_names.has_value()) << doc;
    EXPECT_EQ(*fast->node_item_names, names) << doc;
    EXPECT_EQ(fast->result.failed_nodes, tree->failed_nodes) << doc;
    EXPECT_EQ(fast->result.error, tree->error) << doc;
  }
}

// The hand-written readers and the general decoders agree, including on what only the general
// decoders handle (escapes, unknown fields, whitespace, floats).
TEST(WireTest, FastReadersAgreeWithTheTreeDecoder) {
  auto h = v1::DecodeHostPriorityList(
      " [ {\"Host\" : \"a\\u0062\", \"Score\": 3 } ,{\"host\":\"c\",\"score\":-1}] ");
  ASSERT_TRUE(h.ok()) << h.error().message;
  ASSERT_EQ(h->size(), 2u);
  EXPECT_EQ((*h)[0].host, "ab");
  EXPECT_EQ((*h)[1].score, -1);
  EXPECT_FALSE(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":5.0}])").ok());
  EXPECT_FALSE(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":5}] x)").ok());
  auto extra = v1::DecodeHostPriorityList(R"([{"Host":"a","Score":5,"Note":"x"}])");
  ASSERT_TRUE(extra.ok());
  EXPECT_EQ((*extra)[0].score, 5);

  auto args = v1::DecodeExtenderArgs(
      R"({"Pod":{"metadata":{"name":"p","labels":{"q":"a\"}b"}}},"Nodes":null,"NodeNames":["n1","n2"]})");
  ASSERT_TRUE(args.ok()) << args.error().message;
  EXPECT_EQ(args->pod->metadata.labels.at("q"), "a\"}b");
  EXPECT_THAT(*args->node_names, ElementsAre("n1", "n2"));
  EXPECT_FALSE(args->nodes.has_value());
  auto escaped =
      v1::DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":["n\u0031"]})");
  ASSERT_TRUE(escaped.ok());
  EXPECT_THAT(*escaped->node_names, ElementsAre("n1"));

  auto f = v1::DecodeExtenderFilterResult(
      R"({"NodeNames":["a"],"FailedNodes":{"b":"x\ny"},"FailedAndUnresolvableNodes":null,"Error":""})");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->failed_nodes.at("b"), "x\ny");
  EXPECT_FALSE(v1::DecodeExtenderFilterResult(R"({"NodeNames":["a"]} {})").ok());
}

TEST(WireTest, BadAnswersNameTheField) {
  auto a = v1::DecodeHostPriorityList(R"([{"Host":"a","Score":"high"}])");
  ASSERT_FALSE(a.ok());
  EXPECT_THAT(a.error().message, HasSubstr("HostPriorityList[0].Score"));
  auto b = v1::DecodeExtenderFilterResult("{not json");
  ASSERT_FALSE(b.ok());
  EXPECT_THAT(b.error().message, HasSubstr("malformed JSON"));
  auto c = v1::DecodeExtenderFilterResult(R"({"NodeNames":"a"})");
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("ExtenderFilterResult.NodeNames"));
}

// One reader per document: its errors name the first faulty field in the decoder's field order
// whatever the order in the text, and any fault in the JSON itself, even in a field nobody reads,
// makes the whole document malformed.
TEST(WireTest, TheReaderChecksTheWholeDocumentAndOrdersItsErrors) {
  auto order = v1::DecodeExtenderFilterResult(R"({"Error":3,"NodeNames":"x"})");
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.error().message, "ExtenderFilterResult.NodeNames: expected a list of strings");
  EXPECT_EQ(order.error().code, ErrorCode::kBadRequest);
  auto hidden = v1::DecodeFilterAnswer(R"({"NodeNames":["a"],"Extra":{"x":[tru]}})");
  ASSERT_FALSE(hidden.ok());
  EXPECT_EQ(hidden.error().message, "ExtenderFilterResult: malformed JSON");
  EXPECT_EQ(v1::DecodeHostPriorityList(R"([{"Host":"a"},null])").error().message,
            "HostPriorityList[1]: expected an object");
  EXPECT_EQ(v1::DecodeHostPriorityList(R"({"Host":"a"})").error().message,
            "HostPriorityList: expected a list");
  EXPECT_EQ(
      v1::DecodeHostPriorityList(R"([{"Host":"a","Score":99999999999999999999}])").error().message,
      "HostPriorityList[0].Score: expected an integer");  // a float to Go and nlohmann
  EXPECT_EQ(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":1e400}])").error().message,
            "HostPriorityList: malformed JSON");
  // A failed reason of null is "", as Go's decoder leaves it.
  auto null_reason = v1::DecodeExtenderFilterResult(R"({"FailedNodes":{"n":null}})");
  ASSERT_TRUE(null_reason.ok());
  EXPECT_EQ(null_reason->failed_nodes.at("n"), "");
  // A node item whose name is not a string is read by the Node codec, whichever decoder.
  for (const std::string odd : {R"({"Nodes":{"items":[{"metadata":{"name":7}}]}})",
                                R"({"Nodes":{"items":[{"metadata":"x"}]}})"}) {
    auto names = v1::DecodeFilterAnswer(odd);
    auto nodes = v1::DecodeExtenderFilterResult(odd);
    ASSERT_EQ(names.ok(), nodes.ok()) << odd;
    if (!nodes.ok()) {
      EXPECT_EQ(names.error().message, nodes.error().message);
      continue;
    }
    ASSERT_TRUE(names->node_item_names.has_value());
    EXPECT_THAT(*names->node_item_names, ElementsAre((*nodes->nodes)[0]->metadata.name)) << odd;
  }
}

TEST(WireTest, ArgumentsKeepThePodAndTheNodesAsTheirText) {
  const std::string text =
      R"({"Pod":{"metadata":{"name":"p"}},"Nodes":{"items":[{"metadata":{"name":"a"}},)"
      R"( {"metadata":{"name":"b"}}]},"NodeNames":null})";
  auto parts = v1::read::Args(text);
  ASSERT_TRUE(parts.ok()) << parts.error().message;
  ASSERT_TRUE(parts->pod_json.has_value());
  EXPECT_EQ(*parts->pod_json, R"({"metadata":{"name":"p"}})");
  EXPECT_GE(parts->pod_json->data(), text.data());  // a view of the text itself
  EXPECT_LT(parts->pod_json->data(), text.data() + text.size());
  ASSERT_TRUE(parts->node_items.has_value());
  EXPECT_THAT(*parts->node_items,
              ElementsAre(R"({"metadata":{"name":"a"}})", R"({"metadata":{"name":"b"}})"));
  EXPECT_FALSE(parts->node_names.has_value());
  auto args = v1::DecodeExtenderArgs(text);
  ASSERT_TRUE(args.ok()) << args.error().message;
  ASSERT_EQ(args->nodes->size(), 2u);
  EXPECT_EQ((*args->nodes)[1]->metadata.name, "b");
  EXPECT_EQ(v1::DecodeExtenderArgs(R"({"Pod":3})").error().message,
            "ExtenderArgs.Pod: expected a Pod object");
  // A pod that is not JSON makes the document malformed, as any other fault would.
  EXPECT_EQ(v1::DecodeExtenderArgs(R"({"Pod":{"metadata":{"name":p}},"NodeNames":["a"]})")
                .error()
                .message,
            "ExtenderArgs: malformed JSON");
  EXPECT_EQ(v1::DecodeExtenderArgs(R"({"Pod":null,"NodeNames":["a",1]})").error().message,
            "ExtenderArgs.NodeNames[1]: expected a string");
}

// ---------------------------------------------------------------- client <-> SDK server

std::vector<std::shared_ptr<NodeInfo>> Infos(const std::vector<std::string>& names) {
  std::vector<std::shared_ptr<NodeInfo>> out;
  for (const auto& n : names)
    out.push_back(std::make_shared<NodeInfo>(
        MakeNode().Name(n).Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj()));
  return out;
}

std::vector<const NodeInfo*> Ptrs(const std::vector<std::shared_ptr<NodeInfo>>& infos) {
  std::vector<const NodeInfo*> out;
  for (const auto& i : infos) out.push_back(i.get());
  return out;
}

std::vector<std::string> Names(const std::vector<const NodeInfo*>& nodes) {
  std::vector<std::string> out;
  for (const NodeInfo* n : nodes) out.push_back(n->name());
  return out;
}

config::Extender Config(const std::string& url) {
  config::Extender c;
  c.url_prefix = url;
  c.filter_verb = "filter";
  c.prioritize_verb = "prioritize";
  c.bind_verb = "bind";
  c.preempt_verb = "preempt";
  c.weight = 1;
  return c;
}

// An SDK server whose filter rejects node "n2" and records what it was sent.
// Entries in the compact form are read without looking at keys; any other entry, before or after
// one, goes through the general reader, and the result is the same.
TEST(WireTest, CompactAndOtherHostPrioritiesDecodeAlike) {
  const std::string long_name(200, 'x');
  v1::HostPriorityList list = {
      {"n1", 3}, {long_name, 10}, {"quote\"back\\slash\ttab", -4}, {"", 0}, {"n5", 1234567}};
  auto round = v1::DecodeHostPriorityList(v1::Encode(list));
  ASSERT_TRUE(round.ok()) << round.error().message;
  ASSERT_EQ(round->size(), list.size());
  for (size_t i = 0; i < list.size(); ++i) {
    EXPECT_EQ((*round)[i].host, list[i].host) << i;
    EXPECT_EQ((*round)[i].score, list[i].score) << i;
  }
  auto mixed = v1::DecodeHostPriorityList(
      R"([{"Host":"a","Score":1},{"Score":2,"Host":"b"},{"Host":"c","Score":3}, {"host":"d"}])");
  ASSERT_TRUE(mixed.ok()) << mixed.error().message;
  ASSERT_EQ(mixed->size(), 4u);
  EXPECT_EQ((*mixed)[1].host, "b");
  EXPECT_EQ((*mixed)[1].score, 2);
  EXPECT_EQ((*mixed)[2].score, 3);
  EXPECT_EQ((*mixed)[3].host, "d");
  EXPECT_EQ((*mixed)[3].score, 0);
  EXPECT_FALSE(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":1.5}])").ok());
  EXPECT_FALSE(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":1})").ok());

  v1::ExtenderFilterResult names;
  names.node_names = {"n1", long_name, "tab\there"};
  auto filter = v1::DecodeExtenderFilterResult(v1::Encode(names));
  ASSERT_TRUE(filter.ok()) << filter.error().message;
  EXPECT_EQ(*filter->node_names, *names.node_names);
}

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

// ---------------------------------------------------------------- example extenders

TEST(LabelRuleTest, LabelledPodsOnlyOnTheListedNodes) {
  auto options = ParseLabelRule("want=you", "10-9-101-66");
  ASSERT_TRUE(options.ok());
  EXPECT_FALSE(ParseLabelRule("want", "n").ok());
  EXPECT_FALSE(ParseLabelRule("want=you", ",").ok());
  ExtenderServer server;
  RegisterLabelRule(server, *options);
  ASSERT_TRUE(server.Start({}).ok());
  config::Extender cfg = Config(server.url());
  auto ext = HttpExtender::Create(cfg, "e");
  ASSERT_TRUE(ext.ok());
  auto infos = Infos({"10-9-101-65", "10-9-101-66"});
  auto wanted = MakePod().Name("w").Label("want", "you").Obj();
  auto f = (*ext)->Filter(*wanted, Ptrs(infos));
  ASSERT_TRUE(f.ok()) << f.error().message;
  EXPECT_THAT(Names(f->feasible), ElementsAre("10-9-101-66"));
  EXPECT_THAT(f->failed.at("10-9-101-65"), HasSubstr("want=you"));
  auto other = MakePod().Name("o").Label("want", "me").Obj();
  EXPECT_EQ((*ext)->Filter(*other, Ptrs(infos))->feasible.size(), 2u);
  auto pr = (*ext)->Prioritize(*wanted, Ptrs(infos));
  ASSERT_TRUE(pr.ok());
  EXPECT_EQ((*pr)[0].score, 0);
  EXPECT_EQ((*pr)[1].score, 10);
}

TEST(NetworkTrafficTest, PrefersQuietNodes) {
  testing::FakePrometheus prom({{"quiet", 100}, {"busy", 1000}, {"half", 500}});
  NetworkTrafficOptions o;
  o.prometheus_address = prom.url();
  o.network_interface = "ens192";
  o.cache_for = std::chrono::milliseconds(60000);
  ExtenderServer server;
  ASSERT_TRUE(RegisterNetworkTraffic(server, o).ok());
  ASSERT_TRUE(server.Start({}).ok());
  config::Extender cfg = Config(server.url());
  cfg.filter_verb.clear();
  auto ext = HttpExtender::Create(cfg, "e");
  ASSERT_TRUE(ext.ok());
  auto infos = Infos({"quiet", "busy", "half", "unknown"});
  auto pod = MakePod().Name("p").Obj();
  for (int i = 0; i < 3; ++i) {
    auto pr = (*ext)->Prioritize(*pod, Ptrs(infos));
    ASSERT_TRUE(pr.ok()) << pr.error().message;
    std::map<std::string, int64_t> got;
    for (const auto& h : *pr) got[h.host] = h.score;
    EXPECT_EQ(got["quiet"], 10);  // the quietest gets the most an extender gives
    EXPECT_EQ(got["busy"], 0);
    EXPECT_EQ(got["half"], 5);  // 10 x (1000 - 500) / (1000 - 100), rounded down
    EXPECT_EQ(got["unknown"], 0);
  }
  EXPECT_EQ(prom.queries, 1);  // cached
  EXPECT_THAT(prom.last_query(),
              HasSubstr("node_network_receive_bytes_total{device=\"ens192\"}[5m]"));

  NetworkTrafficOptions bad = o;
  bad.network_interface = "eth0\"}";
  ExtenderServer s2;
  EXPECT_FALSE(RegisterNetworkTraffic(s2, bad).ok());
}

TEST(NetworkTrafficTest, UnreachablePrometheusIsAnIgnoredPrioritizeError) {
  NetworkTrafficOptions o;
  o.prometheus_address = "http://127.0.0.1:1";
  ExtenderServer server;
  ASSERT_TRUE(RegisterNetworkTraffic(server, o).ok());
  ASSERT_TRUE(server.Start({}).ok());
  auto ext = HttpExtender::Create(Config(server.url()), "e");
  auto infos = Infos({"a"});
  auto pr = (*ext)->Prioritize(*MakePod().Name("p").Obj(), Ptrs(infos));
  ASSERT_FALSE(pr.ok());
  EXPECT_THAT(pr.error().message, HasSubstr("code 500"));
}

// ---------------------------------------------------------------- berth simulate

TEST(SimulateWithExtendersTest, ExtenderDecisionsAndScoresInTheReport) {
  ExtenderServer server;
  auto options = ParseLabelRule("want=you", "node-b");
  RegisterLabelRule(server, *options);
  ASSERT_TRUE(server.Start({}).ok());
  Registry registry = InTreeRegistry();
  for (bool cache : {true, false}) {
    const std::string yaml = fmt::format(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: {}
  filterVerb: filter
  prioritizeVerb: prioritize
  weight: 2
  nodeCacheCapable: {}
)",
                                         server.url(), cache);
    auto config = config::LoadConfig(yaml, "cfg.yaml", registry);
    ASSERT_TRUE(config.ok()) << config.error().message;
    std::vector<Object> objects;
    for (std::string n : {"node-a", "node-b", "node-c"})
      objects.push_back(
          Object(MakeNode().Name(n).Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj()));
    objects.push_back(Object(MakePod().Name("wanted").Label("want", "you").Obj()));
    objects.push_back(Object(MakePod().Name("free").Req({{"cpu", "100m"}}).Obj()));
    auto result = sim::Simulate(*config, registry, objects, {});
    ASSERT_TRUE(result.ok()) << result.error().message;
    ASSERT_EQ(result->results.size(), 2u);
    const sim::PodResult& wanted =
        result->results[0].pod == "default/wanted" ? result->results[0] : result->results[1];
    EXPECT_EQ(wanted.result, "Scheduled");
    EXPECT_EQ(wanted.node, "node-b");
    json report = sim::ToJson(*result);
    EXPECT_THAT(report.dump(), HasSubstr(server.url()));
  }
}

TEST(SimulateWithExtendersTest, UnreachableExtenderFailsTheAttemptNamingIt) {
  Registry registry = InTreeRegistry();
  auto config = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:1/sched
  filterVerb: filter
  httpTimeout: 1s
)",
                                   "cfg.yaml", registry);
  ASSERT_TRUE(config.ok()) << config.error().message;
  std::vector<Object> objects{Object(MakeNode().Name("n").Capacity({{"cpu", "4"}}).Obj()),
                              Object(MakePod().Name("p").Obj())};
  sim::SimulationOptions so;
  so.max_attempts = 1;
  auto result = sim::Simulate(*config, registry, objects, so);
  ASSERT_TRUE(result.ok()) << result.error().message;
  EXPECT_EQ(result->results[0].result, "Error");
  EXPECT_THAT(result->results[0].message, HasSubstr("http://127.0.0.1:1/sched/filter"));
}

TEST(ExtenderConfigTest, ValidationNamesThePath) {
  Registry registry = InTreeRegistry();
  auto bad_url = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: 127.0.0.1:8888
  filterVerb: filter
)",
                                    "cfg.yaml", registry);
  ASSERT_FALSE(bad_url.ok());
  EXPECT_THAT(bad_url.error().message, HasSubstr("extenders[0].urlPrefix"));
  auto ignored = config::LoadConfig(R"(apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
extenders:
- urlPrefix: http://127.0.0.1:8888
  filterVerb: filter
  managedResources:
  - name: example.com/foo
    ignoredByScheduler: true
)",
                                    "cfg.yaml", registry);
  ASSERT_TRUE(ignored.ok()) << ignored.error().message;
  const auto* fit = dynamic_cast<const config::NodeResourcesFitArgs*>(
      ignored->profiles[0].ArgsFor("NodeResourcesFit"));
  ASSERT_NE(fit, nullptr);
  EXPECT_THAT(fit->ignored_resources, ElementsAre("example.com/foo"));
}

}  // namespace
}  // namespace berth::extender
