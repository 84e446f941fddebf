// The extender wire format: encoding, the readers of each document, and their errors.
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
#include "berth/extender/v1.h"
#include "extender/wire_internal.h"
#include "extender/wire_read.h"
#include "testing/builders.h"

namespace berth::extender {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- wire format

// A document nesting brackets thousands deep (a hostile or broken extender) is an error for
// every reader, not a stack overflow.
TEST(WireTest, DeeplyNestedDocumentsAreRefused) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& text :
       {R"({"Nodes":)" + deep + "}", R"({"NodeNames":["a"],"Extra":)" + deep + "}", deep}) {
    EXPECT_FALSE(v1::DecodeExtenderArgs(text).ok());
    EXPECT_FALSE(v1::read::Args(text).ok());
    EXPECT_FALSE(v1::DecodeExtenderFilterResult(text).ok());
    EXPECT_FALSE(v1::DecodeHostPriorityList(text).ok());
    (void)v1::DecodeFilterAnswer(text);  // must return
  }
}

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
  // Keys, names and scores read where they stand in the text, and everything else: escaped
  // keys, repeated keys (the last wins), nulls, a name with an escape after plain ones.
  auto odd = v1::DecodeHostPriorityList(
      R"([{"H\u006fst":"a","Sc\u006fre":4},{"Host":"x","Host":"y","Score":1,"Score":null},)"
      R"({"Host":null,"Score":-7},{"Host":"a\"b","Score":9223372036854775807}])");
  ASSERT_TRUE(odd.ok()) << odd.error().message;
  ASSERT_EQ(odd->size(), 4u);
  EXPECT_EQ((*odd)[0].host, "a");
  EXPECT_EQ((*odd)[0].score, 4);
  EXPECT_EQ((*odd)[1].host, "y");
  EXPECT_EQ((*odd)[1].score, 0);
  EXPECT_EQ((*odd)[2].host, "");
  EXPECT_EQ((*odd)[2].score, -7);
  EXPECT_EQ((*odd)[3].host, "a\"b");
  EXPECT_EQ((*odd)[3].score, INT64_MAX);
  EXPECT_EQ(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":"1"}])").error().message,
            "HostPriorityList[0].Score: expected an integer");
  EXPECT_EQ(v1::DecodeHostPriorityList(R"([{"Host":1,"Score":1}])").error().message,
            "HostPriorityList[0].Host: expected a string");
  EXPECT_FALSE(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":1.5}])").ok());
  EXPECT_FALSE(v1::DecodeHostPriorityList(R"([{"Host":"a","Score":1})").ok());

  v1::ExtenderFilterResult names;
  names.node_names = {"n1", long_name, "tab\there"};
  auto filter = v1::DecodeExtenderFilterResult(v1::Encode(names));
  ASSERT_TRUE(filter.ok()) << filter.error().message;
  EXPECT_EQ(*filter->node_names, *names.node_names);
}

}  // namespace
}  // namespace berth::extender
