// The YAML reader (documents, scalars, errors, limits) and the streaming decoder of long JSON
// document streams.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "api/codec.h"
#include "api/codec_internal.h"

namespace berth::codec {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

struct YamlCase {
  std::string name;
  std::string text;
  // Expected documents as JSON text, with their 1-based positions in the stream.
  std::vector<std::pair<int, std::string>> want;
};

// Long by design: a table of YAML inputs and the documents they give, one row per case.
TEST(YamlTest, Documents) {
  const std::vector<YamlCase> cases = {
      {"empty documents are counted but dropped",
       "# c\n---\na: 1\n---\n---\nb: 2\n---\n",
       {{1, R"({"a": 1})"}, {3, R"({"b": 2})"}}},
      {"implicit then explicit", "a: 1\n---\nb: 2\n", {{1, R"({"a": 1})"}, {2, R"({"b": 2})"}}},
      {"only comments", "# nothing\n\n# here\n", {}},
      {"directive and document end", "%YAML 1.1\n---\na: 1\n...\n", {{1, R"({"a": 1})"}}},
      {"byte order mark",
       "\xEF\xBB\xBF"
       "a: 1\n",
       {{1, R"({"a": 1})"}}},
      {"crlf", "a: 1\r\nb:\r\n  - x\r\n  - 'y'\r\n", {{1, R"({"a": 1, "b": ["x", "y"]})"}}},
      {"tabs as separators",
       "a:\tb\nc: [1,\t2]\n# \tcomment\n",
       {{1, R"({"a": "b", "c": [1, 2]})"}}},
      {"top-level sequence", "- a\n- b: c\n  d: e\n", {{1, R"(["a", {"b": "c", "d": "e"}])"}}},
      {"top-level scalar", "just text\n", {{1, R"("just text")"}}},
      {"List",
       "apiVersion: v1\nkind: List\nitems:\n- kind: Pod\n  metadata: {name: a}\n- kind: Node\n"
       "  metadata:\n    name: n\n",
       {{1, R"({"apiVersion": "v1", "kind": "List", "items": [
              {"kind": "Pod", "metadata": {"name": "a"}},
              {"kind": "Node", "metadata": {"name": "n"}}]})"}}},
      {"block scalars",
       "a: |\n  line1\n    indented\n\n  line3\nb: |-\n  x\n  y\n\n\nc: |+\n  keep\n\n"
       "d: >\n  folded\n  text\ne: >-\n  one\n  two\nf: after\ng: >\n  one\n\n  two\n"
       "h: |2\n    two extra\n  base\ni: >\n  one\n    more\n  two\n",
       {{1, R"({"a": "line1\n  indented\n\nline3\n", "b": "x\ny", "c": "keep\n\n",
              "d": "folded text\n", "e": "one two", "f": "after", "g": "one\ntwo\n",
              "h": "  two extra\nbase\n", "i": "one\n  more\ntwo\n"})"}}},
      {"block scalar in sequence",
       "- |\n  one\n  two\n- name: x\n  script: |\n    echo hi\n    exit 0\n  next: 1\n",
       {{1, R"(["one\ntwo\n", {"name": "x", "script": "echo hi\nexit 0\n", "next": 1}])"}}},
      {"empty block scalar", "a: |\nb: 1\n", {{1, R"({"a": "", "b": 1})"}}},
      {"quoted",
       "a: \"q\\\"b\\\\c\\n\\u00e9\\x41\"\nb: 'it''s'\nc: \"\"\nd: ''\n'k:1': v\n\"k 2\": w\n",
       {{1, R"({"a": "q\"b\\c\n\u00e9A", "b": "it's", "c": "", "d": "", "k:1": "v",
              "k 2": "w"})"}}},
      {"multi-line plain and quoted",
       "a: one\n  two\nb: \"three\n  four\"\nc: x\n\n  y\n",
       {{1, R"({"a": "one two", "b": "three four", "c": "x\ny"})"}}},
      {"flow collections",
       "args: [a,\n  b, c]\nm: {x: 1,\n  y: [1, 2]}  # comment\nn: {\"j\": 1, \"k\": [true, "
       "null]}\ne: {}\nf: []\ng: [a, {b: c}, [d]]\nh: {a}\ni: {b: , c: }\n",
       {{1, R"({"args": ["a", "b", "c"], "m": {"x": 1, "y": [1, 2]},
              "n": {"j": 1, "k": [true, null]}, "e": {}, "f": [], "g": ["a", {"b": "c"}, ["d"]],
              "h": {"a": null}, "i": {"b": null, "c": null}})"}}},
      {"sequences at key indentation",
       "containers:\n- name: a\n  ports:\n  - containerPort: 80\n  - containerPort: 81\n- name: b\n"
       "volumes:\n- x\n-\n- y\n",
       {{1, R"({"containers": [{"name": "a", "ports": [{"containerPort": 80},
                                                        {"containerPort": 81}]},
                               {"name": "b"}],
              "volumes": ["x", null, "y"]})"}}},
      {"compact nested sequence", "- - a\n  - b\n", {{1, R"([["a", "b"]])"}}},
      {"plain edge cases",
       "color: red#1\nurl: http://x/y#frag\ncomment: b # c\nkey with space: v\na:b: c\n"
       "dash: -5\ntime: 2024-01-01T00:00:00Z\nempty:\ntilde: ~\ncolon: a:b\n",
       {{1, R"({"color": "red#1", "url": "http://x/y#frag", "comment": "b",
              "key with space": "v", "a:b": "c", "dash": -5, "time": "2024-01-01T00:00:00Z",
              "empty": null, "tilde": null, "colon": "a:b"})"}}},
      // Numbers only when they print back as written; YAML 1.1 extras (yes, 0x, 1_000) are text.
      {"plain scalar typing",
       "a: 1\nb: -1\nc: 1.5\nd: 1e3\ne: 0x10\nf: 007\ng: .5\nh: +1\ni: true\nj: yes\nk: null\n"
       "l: 1.10\nm: 18446744073709551615\nn: 99999999999999999999\no: -0\np: 1.0\nq: False\n"
       "r: NULL\ns: .inf\nt: 1_000\nu: 0.1\n",
       {{1, R"({"a": 1, "b": -1, "c": 1.5, "d": "1e3", "e": "0x10", "f": "007", "g": ".5",
              "h": "+1", "i": true, "j": "yes", "k": null, "l": "1.10",
              "m": 18446744073709551615, "n": "99999999999999999999", "o": "-0", "p": 1.0,
              "q": false, "r": null, "s": ".inf", "t": "1_000", "u": 0.1})"}}},
      {"quoted scalars stay strings",
       "a: '1'\nb: \"2\"\nc: 'true'\nd: \"null\"\ne: '1.10'\n",
       {{1, R"({"a": "1", "b": "2", "c": "true", "d": "null", "e": "1.10"})"}}},
      {"keys stay text",
       "1: a\ntrue: b\nnull: c\n~: d\n? e\n: f\n",
       {{1, R"({"1": "a", "true": "b", "null": "c", "~": "d", "e": "f"})"}}},
      {"later duplicate key wins", "a: 1\na: 2\n", {{1, R"({"a": 2})"}}},
      {"tags",
       "a: !!str 5\nb: !!int \"7\"\nc: !custom 8\nd: ! 9\ne: !!float 1.5\nf: !!bool true\n"
       "g: !!null ~\nh: !!map {x: 1}\n",
       {{1, R"({"a": "5", "b": 7, "c": "8", "d": "9", "e": 1.5, "f": true, "g": null,
              "h": {"x": 1}})"}}},
      {"anchors and aliases",
       "a: &x {b: 1}\nc: *x\nd: &v 10\ne: *v\n&k key: v\nother: *k\nf: &s name\n*s : 5\n",
       {{1, R"({"a": {"b": 1}, "c": {"b": 1}, "d": 10, "e": 10, "key": "v", "other": "key",
              "f": "name", "name": 5})"}}},
      {"anchors are per document",
       "a: &x 1\n---\na: &x 2\nb: *x\n",
       {{1, R"({"a": 1})"}, {2, R"({"a": 2, "b": 2})"}}},
      {"merge keys",
       "a: &x {b: 1, z: 0}\nb: &y {b: 2, c: 3}\nc:\n  <<: *x\n  d: 2\n"
       "e:\n  <<: [*x, *y]\n  b: 9\nf: {\"<<\": 1}\n",
       {{1, R"({"a": {"b": 1, "z": 0}, "b": {"b": 2, "c": 3}, "c": {"b": 1, "z": 0, "d": 2},
              "e": {"b": 9, "c": 3, "z": 0}, "f": {"<<": 1}})"}}},
      {"unicode",
       "name: \"\\u263A smile\"\nplain: h\xC3\xA9llo\n",
       {{1, "{\"name\": \"\xE2\x98\xBA smile\", \"plain\": \"h\xC3\xA9llo\"}"}}},
      {"json", R"({"a": [1, 2.5, "x"], "b": null})", {{1, R"({"a": [1, 2.5, "x"], "b": null})"}}},
      {"concatenated json",
       "{\"a\": 1}\n{\"b\": [2]}{\"c\": {}}\n",
       {{1, R"({"a": 1})"}, {2, R"({"b": [2]})"}, {3, R"({"c": {}})"}}},
      {"json documents in yaml",
       "---\n{\"a\":1}\n---\n[{\"b\": \"x\"}]\n",
       {{1, R"({"a": 1})"}, {2, R"([{"b": "x"}])"}}},
  };
  for (const auto& c : cases) {
    auto got = ParseSourceDocuments(c.text, "t.yaml");
    ASSERT_TRUE(got.ok()) << c.name << ": " << got.error().message;
    ASSERT_EQ(got->size(), c.want.size()) << c.name;
    for (size_t i = 0; i < c.want.size(); ++i) {
      const json want = json::parse(c.want[i].second);
      EXPECT_EQ((*got)[i].doc, want) << c.name << " doc " << i << "\ngot:  " << (*got)[i].doc.dump()
                                     << "\nwant: " << want.dump();
      EXPECT_EQ((*got)[i].index, c.want[i].first) << c.name << " doc " << i;
    }
  }
}

// Numbers keep their JSON type: unsigned beyond int64, floats only when exact text matches.
TEST(YamlTest, ScalarTypes) {
  auto docs =
      ParseSourceDocuments("a: 18446744073709551615\nb: -9223372036854775808\nc: 2.5\n", "t.yaml");
  ASSERT_TRUE(docs.ok());
  const json& d = (*docs)[0].doc;
  EXPECT_TRUE(d["a"].is_number_unsigned());
  EXPECT_TRUE(d["b"].is_number_integer());
  EXPECT_EQ(d["b"].get<int64_t>(), INT64_MIN);
  EXPECT_TRUE(d["c"].is_number_float());
}

TEST(YamlTest, Errors) {
  const std::pair<std::string, std::string> cases[] = {
      {"a: b: c\n",
       "bad.yaml: yaml: line 1, column 5: mapping values are not allowed in this "
       "context"},
      {"a:\n  - x\n y: 1\n",
       "bad.yaml: yaml: line 3, column 2: did not find expected key "
       "(while parsing a block mapping started at line 1, column 1)"},
      {"a: [1, 2\n",
       "bad.yaml: yaml: line 2, column 1: did not find expected ',' or ']' "
       "(while parsing a flow sequence started at line 1, column 4)"},
      {"a: {b: 1\n",
       "bad.yaml: yaml: line 2, column 1: did not find expected ',' or '}' "
       "(while parsing a flow mapping started at line 1, column 4)"},
      {"a: \"open\n",
       "bad.yaml: yaml: line 2, column 1: found unexpected end of stream "
       "(while scanning a quoted scalar started at line 1, column 4)"},
      {"a:\n\tb: 1\n",
       "bad.yaml: yaml: line 2, column 1: found character that cannot start "
       "any token (while scanning for the next token started at line 2, "
       "column 1)"},
      {"a: 1\nb: \xFF\n", "bad.yaml: yaml: line 2, column 4: invalid leading UTF-8 octet"},
      {"a: 1\nb: *nope\n", "bad.yaml: yaml: line 2, column 4: unknown anchor \"nope\" referenced"},
      {"x: &a [*a]\n", "bad.yaml: yaml: line 1, column 8: unknown anchor \"a\" referenced"},
      {"? [a, b]\n: c\n",
       "bad.yaml: yaml: line 1, column 3: complex mapping keys are not "
       "supported"},
      {"c:\n  <<: 5\n",
       "bad.yaml: yaml: line 2, column 7: merge key \"<<\" needs a map or a "
       "list of maps"},
      {"{a: 1}\n{b: 2}\n",
       "bad.yaml: yaml: line 2, column 1: did not find expected "
       "<document start>"},
  };
  for (const auto& [text, want] : cases) {
    auto r = ParseSourceDocuments(text, "bad.yaml");
    ASSERT_FALSE(r.ok()) << text;
    EXPECT_EQ(r.error().message, want) << text;
  }
}

TEST(YamlTest, LimitsAliasExpansion) {
  // Each level doubles the previous one: 2^30 copies if expanded.
  std::string bomb = "a0: &a0 [x, x]\n";
  for (int i = 1; i <= 30; ++i) {
    bomb += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [*a" + std::to_string(i - 1) +
            ", *a" + std::to_string(i - 1) + "]\n";
  }
  auto r = ParseSourceDocuments(bomb, "bomb.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("bomb.yaml: yaml: line "));
  EXPECT_THAT(r.error().message, HasSubstr("aliases expand to too many nodes"));
}

TEST(YamlTest, LimitsNesting) {
  auto r = ParseSourceDocuments(std::string(1000, '[') + std::string(1000, ']'), "deep.yaml");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("deep.yaml: yaml: line 1, column 513: nesting"));
  auto ok = ParseSourceDocuments(std::string(100, '[') + std::string(100, ']'), "deep.yaml");
  EXPECT_TRUE(ok.ok());
}

std::vector<SourceDocument> Streamed(std::string_view text, std::string* error = nullptr) {
  std::vector<SourceDocument> out;
  auto r = ForEachSourceDocument(text, "s.yaml", [&](SourceDocument&& d) -> VoidResult {
    out.push_back(std::move(d));
    return {};
  });
  if (!r.ok() && error) *error = r.error().message;
  return out;
}

// Streams of JSON objects between "---" lines take the JSON parser document by document; what
// they deliver, and how documents are numbered, must be what the YAML parser gives.
TEST(YamlTest, JsonDocumentStreamsReadAsYamlWould) {
  const std::string cases[] = {
      "---\n{\"a\": 1, \"b\": [true, null, 2.5, \"x\"]}\n---\n{\"c\": {\"d\": \"\\u00e9\"}}\n",
      "{\"first\": 1}\n---\n{\"second\": 2}\n",
      "# generated\n\n---\n{\"a\": 1}\n---\n---   # empty, still counted\n{\"b\": 2}\n---\n",
      // Flow YAML and a trailing comment are not JSON: those documents go to libyaml.
      "---\n{\"a\": 1}\n---\n{a: b, n: 3}\n---\n{\"c\": 1}   # trailing\n---\n{\"d\": [1,\n  2]}\n",
      "---\r\n{\"crlf\": \"yes\"}\r\n---\r\n{\"b\": 1}\r\n",
      "{\"dup\": 1, \"dup\": 2}\n---\n{}\n",
      // Not a stream of flow mappings: read by libyaml as a whole.
      "---\n{\"a\": 1}\n---\nb: 2\n",
      "--- {\"a\": 1}\n--- {\"b\": 2}\n",
      "{\"a\": 1}\n...\n---\n{\"b\": 2}\n",
  };
  for (const std::string& text : cases) {
    auto want = ParseSourceDocuments(text, "s.yaml");
    ASSERT_TRUE(want.ok()) << text << want.error().message;
    std::string error;
    auto got = Streamed(text, &error);
    ASSERT_EQ(error, "") << text;
    ASSERT_EQ(got.size(), want->size()) << text;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_EQ(got[i].index, (*want)[i].index) << text;
      EXPECT_EQ(got[i].doc, (*want)[i].doc) << text;
    }
  }
  // The numbering runs on past empty documents.
  auto numbered = Streamed("---\n---\n{\"a\": 1}\n---\n# nothing\n---\n{\"b\": 1}\n");
  ASSERT_EQ(numbered.size(), 2u);
  EXPECT_EQ(numbered[0].index, 2);
  EXPECT_EQ(numbered[1].index, 4);
}

TEST(YamlTest, JsonDocumentStreamErrorsPointIntoTheFile) {
  std::string error;
  auto docs =
      Streamed("---\n{\"a\": 1}\n---\n{\"b\": 1,\n \"c\": [1, 2}\n---\n{\"d\": 1}\n", &error);
  EXPECT_EQ(docs.size(), 1u);
  EXPECT_THAT(error, HasSubstr("s.yaml: yaml: line 5, column "));
  // Nesting beyond the limit is refused as in any other YAML document.
  Streamed("---\n{\"a\": " + std::string(600, '[') + std::string(600, ']') + "}\n", &error);
  EXPECT_THAT(error, HasSubstr("s.yaml: yaml: line 2, column "));
  EXPECT_THAT(error, HasSubstr("nesting deeper than 512 levels"));
}

}  // namespace
}  // namespace berth::codec

namespace berth {
namespace {

// A long stream of JSON documents is decoded on several threads; objects, their order and the
// error reported must be those of a sequential read.
TEST(CodecStreamTest, LongJsonStreamsDecodeTheSameOnSeveralThreads) {
  std::string text = "# generated\n";
  for (int i = 0; i < 6000; ++i) {
    text += "---\n";
    if (i % 1000 == 7) continue;  // an empty document
    if (i % 1000 == 9) {          // flow YAML, read by libyaml
      text += "{apiVersion: v1, kind: Node, metadata: {name: yaml-" + std::to_string(i) + "}}\n";
    } else if (i % 1000 == 11) {
      text +=
          "{\"apiVersion\": \"v1\", \"kind\": \"NodeList\", \"items\": [{\"metadata\": {\"name\": "
          "\"item-" +
          std::to_string(i) + "\"}}]}\n";
    } else {
      text += "{\"apiVersion\":\"v1\",\"kind\":\"Node\",\"metadata\":{\"name\":\"n-" +
              std::to_string(i) + "\"},\"status\":{\"allocatable\":{\"cpu\":\"" +
              std::to_string(i % 64 + 1) + "\"}}}\n";
    }
  }
  DecodeOptions one;
  one.threads = 1;
  DecodeOptions four;
  four.threads = 4;
  auto seq = DecodeObjects(text, "m.yaml", one);
  auto par = DecodeObjects(text, "m.yaml", four);
  ASSERT_TRUE(seq.ok()) << seq.error().message;
  ASSERT_TRUE(par.ok()) << par.error().message;
  ASSERT_EQ(seq->size(), 5994u);
  ASSERT_EQ(par->size(), seq->size());
  for (size_t i = 0; i < seq->size(); ++i) {
    const auto& a = std::get<std::shared_ptr<const Node>>((*seq)[i]);
    const auto& b = std::get<std::shared_ptr<const Node>>((*par)[i]);
    ASSERT_EQ(a->metadata.name, b->metadata.name) << i;
    EXPECT_EQ(a->status.allocatable, b->status.allocatable) << i;
  }
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>((*par)[8])->metadata.name, "yaml-9");
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>((*par)[5993])->metadata.name, "n-5999");

  // Two bad documents, in different threads' runs: the first one in the file is reported.
  std::string bad = text;
  auto break_node = [&](int i) {
    const std::string name = "\"n-" + std::to_string(i) + "\"}";
    bad.replace(bad.find(name), name.size(), "[1]}");
  };
  break_node(4500);
  break_node(2500);
  for (const DecodeOptions& o : {one, four}) {
    auto r = DecodeObjects(bad, "m.yaml", o);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, testing::HasSubstr("m.yaml: document 2501")) << o.threads;
  }
  // A syntax error is named by its line in the file on either path.
  std::string broken = text;
  broken.replace(broken.find("\"n-3000\""), 8, "\"n-3000");
  for (const DecodeOptions& o : {one, four}) {
    auto r = DecodeObjects(broken, "m.yaml", o);
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(r.error().message, testing::HasSubstr("m.yaml: yaml: line 6000, column"))
        << o.threads << r.error().message;
  }
}

TEST(CodecStreamTest, ObjectsKeepTheirDocumentsOnlyWhenAsked) {
  const std::string text =
      "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
      "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ns}\nspec: {x-unknown: 1}\n---\n"
      "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Node, metadata: {name: b}}\n";
  auto kept = DecodeObjects(text, "m.yaml");
  ASSERT_TRUE(kept.ok()) << kept.error().message;
  DecodeOptions lean;
  lean.keep_raw = false;
  auto dropped = DecodeObjects(text, "m.yaml", lean);
  ASSERT_TRUE(dropped.ok()) << dropped.error().message;
  ASSERT_EQ(kept->size(), 3u);
  ASSERT_EQ(dropped->size(), 3u);
  const auto& pod_kept = std::get<std::shared_ptr<const Pod>>((*kept)[1]);
  const auto& pod_lean = std::get<std::shared_ptr<const Pod>>((*dropped)[1]);
  ASSERT_NE(pod_kept->raw, nullptr);
  EXPECT_EQ((*pod_kept->raw)["spec"]["x-unknown"], 1);
  EXPECT_EQ(pod_lean->raw, nullptr);
  EXPECT_EQ(pod_lean->Key(), "ns/p");
  EXPECT_EQ(std::get<std::shared_ptr<const Node>>((*dropped)[2])->metadata.name, "b");
  // A bad document is named by its position, whichever way the stream is decoded.
  auto bad = DecodeObjects(text + "---\napiVersion: v1\nkind: Pod\nmetadata: {name: [1]}\n",
                           "m.yaml", lean);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("m.yaml: document 4"), std::string::npos)
      << bad.error().message;
}

}  // namespace
}  // namespace berth
