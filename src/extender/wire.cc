// The extender wire format: encoding with Go's exact field names, decoding as Go's encoding/json
// does (field names in any case, null for empty).
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>
#include <unordered_map>

#include "api/codec.h"
#include "api/json_text.h"
#include "api/text.h"
#include "berth/extender/v1.h"
#include "extender/json_scan.h"
#include "extender/wire_internal.h"

namespace berth::extender::v1 {
namespace {

using nlohmann::json;

// The field `name` of `obj`: an exact match first, then one that differs only in letter case.
// Null when absent (a null value reads as absent too).
const json* Field(const json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(name);
  if (it != obj.end()) return it->is_null() ? nullptr : &*it;
  for (auto i = obj.begin(); i != obj.end(); ++i)
    if (EqualsIgnoreCase(i.key(), name)) return i->is_null() ? nullptr : &*i;
  return nullptr;
}

Result<json> Parse(std::string_view text, std::string_view what) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded())
    return Error{fmt::format("{}: malformed JSON", what), ErrorCode::kBadRequest};
  return doc;
}

Error Invalid(std::string_view field, std::string_view want) {
  return Error{fmt::format("{}: expected {}", field, want), ErrorCode::kBadRequest};
}

Result<std::string> String(const json* v, std::string_view field) {
  if (!v) return std::string();
  if (!v->is_string()) return Invalid(field, "a string");
  return v->get<std::string>();
}

Result<int64_t> Int(const json* v, std::string_view field) {
  if (!v) return int64_t{0};
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_unsigned() && v->get<uint64_t>() <= uint64_t(INT64_MAX))
    return static_cast<int64_t>(v->get<uint64_t>());
  return Invalid(field, "an integer");
}

Result<PodPtr> DecodePodField(const json* v, std::string_view field) {
  if (!v) return PodPtr();
  if (!v->is_object()) return Invalid(field, "a Pod object");
  auto pod = DecodePod(*v, field);
  if (!pod.ok()) return Error{pod.error().message, ErrorCode::kBadRequest};
  return PodPtr(std::make_shared<Pod>(std::move(pod).value()));
}

Result<std::optional<std::vector<std::string>>> StringList(const json* v, std::string_view field) {
  if (!v) return std::optional<std::vector<std::string>>();
  if (!v->is_array()) return Invalid(field, "a list of strings");
  std::vector<std::string> out;
  out.reserve(v->size());
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) return Invalid(fmt::format("{}[{}]", field, i), "a string");
    out.push_back((*v)[i].get<std::string>());
  }
  return std::optional<std::vector<std::string>>(std::move(out));
}

// A NodeList: {"items": [...]}.
Result<NodePtr> NodeItem(const json& item, const std::string& where) {
  if (!item.is_object()) return Invalid(where, "a Node object");
  auto node = DecodeNode(item, where);
  if (!node.ok()) return Error{node.error().message, ErrorCode::kBadRequest};
  return NodePtr(std::make_shared<Node>(std::move(node).value()));
}

Result<std::optional<std::vector<NodePtr>>> NodeListField(const json* v, std::string_view field) {
  if (!v) return std::optional<std::vector<NodePtr>>();
  if (!v->is_object()) return Invalid(field, "a NodeList object");
  std::vector<NodePtr> out;
  if (const json* items = Field(*v, "items")) {
    if (!items->is_array()) return Invalid(fmt::format("{}.items", field), "a list");
    out.reserve(items->size());
    for (size_t i = 0; i < items->size(); ++i) {
      BERTH_TRY_ASSIGN(node, NodeItem((*items)[i], fmt::format("{}.items[{}]", field, i)));
      out.push_back(std::move(node));
    }
  }
  return std::optional<std::vector<NodePtr>>(std::move(out));
}

Result<FailedNodesMap> FailedMap(const json* v, std::string_view field) {
  FailedNodesMap out;
  if (!v) return out;
  if (!v->is_object()) return Invalid(field, "a map of node name to reason");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it->is_string()) return Invalid(fmt::format("{}[{}]", field, it.key()), "a string");
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

Result<MetaVictims> DecodeMetaVictims(const json& v, std::string_view field) {
  if (!v.is_object()) return Invalid(field, "a MetaVictims object");
  MetaVictims out;
  if (const json* pods = Field(v, "Pods")) {
    if (!pods->is_array()) return Invalid(fmt::format("{}.Pods", field), "a list");
    for (size_t i = 0; i < pods->size(); ++i) {
      const std::string where = fmt::format("{}.Pods[{}]", field, i);
      if (!(*pods)[i].is_object()) return Invalid(where, "a MetaPod object");
      BERTH_TRY_ASSIGN(uid, String(Field((*pods)[i], "UID"), where + ".UID"));
      out.pods.push_back(MetaPod{std::move(uid)});
    }
  }
  BERTH_TRY_ASSIGN(n, Int(Field(v, "NumPDBViolations"), fmt::format("{}.NumPDBViolations", field)));
  out.num_pdb_violations = n;
  return out;
}

Result<std::map<std::string, MetaVictims>> MetaVictimsMap(const json* v, std::string_view field) {
  std::map<std::string, MetaVictims> out;
  if (!v) return out;
  if (!v->is_object()) return Invalid(field, "a map of node name to victims");
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (it->is_null()) {
      out[it.key()] = MetaVictims{};
      continue;
    }
    BERTH_TRY_ASSIGN(m, DecodeMetaVictims(*it, fmt::format("{}[{}]", field, it.key())));
    out[it.key()] = std::move(m);
  }
  return out;
}

json MetaVictimsJson(const MetaVictims& m) {
  json pods = json::array();
  for (const auto& p : m.pods) pods.push_back({{"UID", p.uid}});
  return {{"Pods", std::move(pods)}, {"NumPDBViolations", m.num_pdb_violations}};
}

json FailedJson(const FailedNodesMap& m) {
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v;
  return out;
}

json NodeListJson(const std::vector<NodePtr>& nodes) {
  json items = json::array();
  for (const auto& n : nodes) items.push_back(EncodeNode(*n));
  return {{"metadata", json::object()}, {"items", std::move(items)}};
}

// ---- fast paths: the documents read on every cycle are first tried with the hand-written
// readers of json_scan.h, then with a SAX parser (no tree), and only then decoded as a tree.
// Each faster path gives up on anything outside its shape; the tree decoder then decides (and
// words the error).

// The parts of nlohmann's SAX interface every fast path shares: an unexpected event gives up.
struct SaxBase : nlohmann::json_sax<json> {
  bool boolean(bool) override { return false; }
  bool number_integer(number_integer_t) override { return false; }
  bool number_unsigned(number_unsigned_t) override { return false; }
  bool number_float(number_float_t, const string_t&) override { return false; }
  bool binary(binary_t&) override { return false; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override {
    return false;
  }
};

// [{"Host": "n1", "Score": 3}, ...]
struct HostPrioritySax final : SaxBase {
  HostPriorityList* out;
  int depth = 0;
  enum { kNone, kHost, kScore } field = kNone;
  explicit HostPrioritySax(HostPriorityList* o) : out(o) {}
  bool null() override { return depth == 0 || (depth == 2 && field != kNone); }
  bool number_integer(number_integer_t v) override {
    if (depth != 2 || field != kScore) return false;
    out->back().score = v;
    return true;
  }
  bool number_unsigned(number_unsigned_t v) override {
    if (depth != 2 || field != kScore || v > uint64_t(INT64_MAX)) return false;
    out->back().score = static_cast<int64_t>(v);
    return true;
  }
  bool string(string_t& v) override {
    if (depth != 2 || field != kHost) return false;
    out->back().host = std::move(v);
    return true;
  }
  bool start_object(std::size_t) override {
    if (depth != 1) return false;
    out->emplace_back();
    depth = 2;
    return true;
  }
  bool key(string_t& k) override {
    field = EqualsIgnoreCase(k, "Host") ? kHost : EqualsIgnoreCase(k, "Score") ? kScore : kNone;
    return field != kNone;
  }
  bool end_object() override {
    depth = 1;
    return true;
  }
  bool start_array(std::size_t) override { return depth++ == 0; }
  bool end_array() override {
    --depth;
    return true;
  }
};

// {"NodeNames": [...], "FailedNodes": {...}, "FailedAndUnresolvableNodes": {...}, "Error": "",
//  "Nodes": {"items": [{"metadata": {"name": ...}}, ...]}}: with `item_names`, only the names of
// the nodes in "Nodes" are kept (all the scheduler needs of them); without, a "Nodes" object
// gives up (the DOM decoder builds the nodes). Unknown fields are skipped.
struct FilterResultSax final : SaxBase {
  ExtenderFilterResult* out;
  std::optional<std::vector<std::string>>* item_names;
  // Containers entered: 1 the result, 2 a names list / failed map / the NodeList, 3 its items,
  // 4 a node, 5 its metadata.
  int depth = 0;
  enum { kOther, kNodes, kNames, kFailed, kUnresolvable, kError } field = kOther;
  enum { kNone, kItems, kMetadata, kName } node_key = kNone;
  std::string map_key;
  int skip = 0;            // nesting inside a skipped value
  bool skip_next = false;  // the next value is skipped

  FilterResultSax(ExtenderFilterResult* o, std::optional<std::vector<std::string>>* names)
      : out(o), item_names(names) {}
  FailedNodesMap& Map() {
    return field == kFailed ? out->failed_nodes : out->failed_and_unresolvable_nodes;
  }
  bool SkipScalar() {
    if (skip) return true;
    if (!skip_next) return false;
    skip_next = false;
    return true;
  }
  bool SkipOpen() {
    if (skip) return ++skip;
    if (!skip_next) return false;
    skip_next = false;
    skip = 1;
    return true;
  }
  bool InMap() const { return depth == 2 && (field == kFailed || field == kUnresolvable); }

  bool null() override {
    if (SkipScalar() || depth == 1) return true;
    if (!InMap()) return false;
    Map()[map_key] = "";
    return true;
  }
  bool boolean(bool) override { return SkipScalar(); }
  bool number_integer(number_integer_t) override { return SkipScalar(); }
  bool number_unsigned(number_unsigned_t) override { return SkipScalar(); }
  bool number_float(number_float_t, const string_t&) override { return SkipScalar(); }
  bool string(string_t& v) override {
    if (SkipScalar()) return true;
    if (depth == 1 && field == kError) {
      out->error = std::move(v);
    } else if (depth == 2 && field == kNames) {
      out->node_names->push_back(std::move(v));
    } else if (InMap()) {
      Map()[map_key] = std::move(v);
    } else if (depth == 5 && field == kNodes && node_key == kName) {
      (*item_names)->back() = std::move(v);  // a repeated name or metadata: the last one counts
      node_key = kNone;
    } else {
      return false;
    }
    return true;
  }
  bool start_object(std::size_t) override {
    if (SkipOpen()) return true;
    if (depth == 0 || (depth == 1 && (field == kFailed || field == kUnresolvable))) {
      ++depth;
      return true;
    }
    if (field != kNodes) return false;
    if (depth == 1) {
      if (!item_names) return false;
      item_names->emplace();
    } else if (depth == 3) {
      (*item_names)->emplace_back();  // a node: named "" unless its metadata says otherwise
    } else if (!(depth == 4 && node_key == kMetadata)) {
      return false;
    }
    ++depth;
    node_key = kNone;
    return true;
  }
  bool key(string_t& k) override {
    if (skip) return true;
    if (depth == 1) {
      field = EqualsIgnoreCase(k, "NodeNames")                    ? kNames
              : EqualsIgnoreCase(k, "FailedNodes")                ? kFailed
              : EqualsIgnoreCase(k, "FailedAndUnresolvableNodes") ? kUnresolvable
              : EqualsIgnoreCase(k, "Error")                      ? kError
              : EqualsIgnoreCase(k, "Nodes")                      ? kNodes
                                                                  : kOther;
      skip_next = field == kOther;
    } else if (InMap()) {
      map_key = std::move(k);
    } else if (field == kNodes && (depth == 2 || depth == 4 || depth == 5)) {
      const std::string_view want = depth == 2 ? "items" : depth == 4 ? "metadata" : "name";
      if (EqualsIgnoreCase(k, want)) {
        node_key = depth == 2 ? kItems : depth == 4 ? kMetadata : kName;
      } else {
        skip_next = true;
      }
    } else {
      return false;
    }
    return true;
  }
  bool end_object() override {
    if (skip) return --skip, true;
    --depth;
    return true;
  }
  bool start_array(std::size_t) override {
    if (SkipOpen()) return true;
    if (depth == 1 && field == kNames) {
      out->node_names.emplace();
    } else if (!(depth == 2 && field == kNodes && node_key == kItems)) {
      return false;
    }
    ++depth;
    return true;
  }
  bool end_array() override {
    if (skip) return --skip, true;
    --depth;
    return true;
  }
};

// True if `s` goes into a JSON string literal as it is, without escapes.
bool IsPlain(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return c != '"' && c != '\\' && static_cast<unsigned char>(c) >= 0x20;
  });
}

void AppendFailed(const FailedNodesMap& m, std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const auto& [node, reason] : m) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(node, out);
    out->push_back(':');
    AppendJsonString(reason, out);
  }
  out->push_back('}');
}

}  // namespace

Result<FilterAnswer> DecodeFilterAnswer(std::string_view text) {
  FilterAnswer answer;
  if (auto fast = scan::FilterResultWithNames(text)) {
    answer.result = std::move(*fast);
    return answer;
  }
  {
    std::vector<std::string> item_names;
    if (auto fast = scan::FilterResultWithNodeItems(text, &item_names)) {
      answer.result = std::move(*fast);
      answer.node_item_names = std::move(item_names);
      return answer;
    }
  }
  {
    FilterResultSax sax(&answer.result, &answer.node_item_names);
    if (json::sax_parse(text, &sax)) return answer;
  }
  BERTH_TRY_ASSIGN(full, DecodeExtenderFilterResult(text));
  answer = FilterAnswer{};
  if (full.nodes) {
    answer.node_item_names.emplace();
    for (const auto& n : *full.nodes) answer.node_item_names->push_back(n->metadata.name);
    full.nodes.reset();
  }
  answer.result = std::move(full);
  return answer;
}

std::string PodJson(const Pod& pod) { return EncodePod(pod).dump(); }
std::string NodeJson(const Node& node) { return EncodeNode(node).dump(); }

std::string Encode(const ExtenderArgs& args) {
  json doc;
  doc["Pod"] = args.pod ? EncodePod(*args.pod) : json();
  doc["Nodes"] = args.nodes ? NodeListJson(*args.nodes) : json();
  doc["NodeNames"] = args.node_names ? json(*args.node_names) : json();
  return doc.dump();
}

namespace {

// Appends the fields of a filter result after "Nodes": `,"NodeNames":…,"Error":…}`.
void AppendFilterResultAfterNodes(const ExtenderFilterResult& r, std::string* out) {
  *out += ",\"NodeNames\":";
  if (r.node_names) {
    size_t bytes = out->size() + 128;
    for (const auto& name : *r.node_names) bytes += name.size() + 3;
    out->reserve(bytes);
    out->push_back('[');
    for (size_t i = 0; i < r.node_names->size(); ++i) {
      if (i) out->push_back(',');
      AppendJsonString((*r.node_names)[i], out);
    }
    out->push_back(']');
  } else {
    *out += "null";
  }
  *out += ",\"FailedNodes\":";
  AppendFailed(r.failed_nodes, out);
  *out += ",\"FailedAndUnresolvableNodes\":";
  AppendFailed(r.failed_and_unresolvable_nodes, out);
  *out += ",\"Error\":";
  AppendJsonString(r.error, out);
  out->push_back('}');
}

}  // namespace

std::string Encode(const ExtenderFilterResult& r) {
  if (!r.nodes) {
    std::string out = "{\"Nodes\":null";
    AppendFilterResultAfterNodes(r, &out);
    return out;
  }
  json doc;
  doc["Nodes"] = r.nodes ? NodeListJson(*r.nodes) : json();
  doc["NodeNames"] = r.node_names ? json(*r.node_names) : json();
  doc["FailedNodes"] = FailedJson(r.failed_nodes);
  doc["FailedAndUnresolvableNodes"] = FailedJson(r.failed_and_unresolvable_nodes);
  doc["Error"] = r.error;
  return doc.dump();
}

std::string EncodeFilterResultEchoingNodes(const ExtenderFilterResult& r,
                                           const std::vector<NodePtr>& sent,
                                           const std::vector<std::string_view>& sent_texts) {
  if (!r.nodes || sent.size() != sent_texts.size()) return Encode(r);
  size_t bytes = 256;
  for (std::string_view t : sent_texts) bytes += t.size() + 1;
  std::string out;
  out.reserve(bytes);
  out += "{\"Nodes\":{\"metadata\":{},\"items\":[";
  // Answers usually keep the arguments' order: match in one pass, looking up only when not.
  std::unordered_map<const Node*, size_t> index;
  size_t next = 0;
  for (size_t i = 0; i < r.nodes->size(); ++i) {
    if (i) out.push_back(',');
    const Node* node = (*r.nodes)[i].get();
    std::optional<size_t> at;
    if (next < sent.size() && sent[next].get() == node) {
      at = next++;
    } else {
      if (index.empty())
        for (size_t k = 0; k < sent.size(); ++k) index.emplace(sent[k].get(), k);
      if (auto it = index.find(node); it != index.end()) at = it->second;
    }
    if (at) {
      out.append(sent_texts[*at]);
    } else {
      out += node ? EncodeNode(*node).dump() : std::string("null");
    }
  }
  out += "]}";
  AppendFilterResultAfterNodes(r, &out);
  return out;
}

std::string Encode(const HostPriorityList& list) {
  std::string out = "[";
  out.reserve(list.size() * 40 + 2);
  for (size_t i = 0; i < list.size(); ++i) {
    if (i) out.push_back(',');
    const std::string_view host = list[i].host;
    // A plain name's whole entry is assembled here and appended at once.
    constexpr std::string_view kHost = "{\"Host\":\"", kScore = "\",\"Score\":";
    char entry[192];
    if (IsPlain(host) && host.size() <= sizeof(entry) - kHost.size() - kScore.size() - 24) {
      char* p = std::copy(kHost.begin(), kHost.end(), entry);
      p = std::copy(host.begin(), host.end(), p);
      p = std::copy(kScore.begin(), kScore.end(), p);
      p = std::to_chars(p, entry + sizeof(entry) - 1, list[i].score).ptr;
      *p++ = '}';
      out.append(entry, p - entry);
      continue;
    }
    out += "{\"Host\":";
    AppendJsonString(host, &out);
    out += ",\"Score\":";
    out += std::to_string(list[i].score);
    out.push_back('}');
  }
  out.push_back(']');
  return out;
}

std::string Encode(const ExtenderBindingArgs& a) {
  return json{{"PodName", a.pod_name},
              {"PodNamespace", a.pod_namespace},
              {"PodUID", a.pod_uid},
              {"Node", a.node}}
      .dump();
}

std::string Encode(const ExtenderBindingResult& r) { return json{{"Error", r.error}}.dump(); }

std::string Encode(const ExtenderPreemptionArgs& a) {
  json doc;
  doc["Pod"] = a.pod ? EncodePod(*a.pod) : json();
  if (a.node_name_to_victims) {
    json m = json::object();
    for (const auto& [node, v] : *a.node_name_to_victims) {
      json pods = json::array();
      for (const auto& p : v.pods) pods.push_back(EncodePod(*p));
      m[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
    }
    doc["NodeNameToVictims"] = std::move(m);
  } else {
    doc["NodeNameToVictims"] = json();
  }
  if (a.node_name_to_meta_victims) {
    json m = json::object();
    for (const auto& [node, v] : *a.node_name_to_meta_victims) m[node] = MetaVictimsJson(v);
    doc["NodeNameToMetaVictims"] = std::move(m);
  } else {
    doc["NodeNameToMetaVictims"] = json();
  }
  return doc.dump();
}

std::string Encode(const ExtenderPreemptionResult& r) {
  json m = json::object();
  for (const auto& [node, v] : r.node_name_to_meta_victims) m[node] = MetaVictimsJson(v);
  return json{{"NodeNameToMetaVictims", std::move(m)}}.dump();
}

Result<PodPtr> DecodeArgsPod(std::string_view pod_json) {
  BERTH_TRY_ASSIGN(pod, Parse(pod_json, "ExtenderArgs.Pod"));
  return DecodePodField(&pod, "ExtenderArgs.Pod");
}

Result<NodePtr> DecodeArgsNode(std::string_view node_json, size_t index) {
  const std::string where = fmt::format("ExtenderArgs.Nodes.items[{}]", index);
  BERTH_TRY_ASSIGN(doc, Parse(node_json, where));
  return NodeItem(doc, where);
}

Result<ExtenderArgs> DecodeExtenderArgs(std::string_view text) {
  if (auto fast = scan::Args(text); fast && !fast->node_items) {
    // Only the pod needs a tree; the names were read directly.
    json pod = json::parse(fast->pod_json, nullptr, /*allow_exceptions=*/false);
    if (!pod.is_discarded()) {
      BERTH_TRY_ASSIGN(decoded, DecodePodField(&pod, "ExtenderArgs.Pod"));
      ExtenderArgs out;
      out.pod = std::move(decoded);
      out.node_names = std::move(fast->node_names);
      return out;
    }
  }
  BERTH_TRY_ASSIGN(doc, Parse(text, "ExtenderArgs"));
  if (!doc.is_object()) return Invalid("ExtenderArgs", "an object");
  ExtenderArgs out;
  BERTH_TRY_ASSIGN(pod, DecodePodField(Field(doc, "Pod"), "ExtenderArgs.Pod"));
  BERTH_TRY_ASSIGN(nodes, NodeListField(Field(doc, "Nodes"), "ExtenderArgs.Nodes"));
  BERTH_TRY_ASSIGN(names, StringList(Field(doc, "NodeNames"), "ExtenderArgs.NodeNames"));
  out.pod = std::move(pod);
  out.nodes = std::move(nodes);
  out.node_names = std::move(names);
  return out;
}

Result<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view text) {
  if (auto fast = scan::FilterResultWithNames(text)) return std::move(*fast);
  {
    ExtenderFilterResult fast;
    FilterResultSax sax(&fast, nullptr);
    if (json::sax_parse(text, &sax)) return fast;
  }
  BERTH_TRY_ASSIGN(doc, Parse(text, "ExtenderFilterResult"));
  if (!doc.is_object()) return Invalid("ExtenderFilterResult", "an object");
  ExtenderFilterResult out;
  BERTH_TRY_ASSIGN(nodes, NodeListField(Field(doc, "Nodes"), "ExtenderFilterResult.Nodes"));
  BERTH_TRY_ASSIGN(names, StringList(Field(doc, "NodeNames"), "ExtenderFilterResult.NodeNames"));
  BERTH_TRY_ASSIGN(failed,
                   FailedMap(Field(doc, "FailedNodes"), "ExtenderFilterResult.FailedNodes"));
  BERTH_TRY_ASSIGN(unresolvable, FailedMap(Field(doc, "FailedAndUnresolvableNodes"),
                                           "ExtenderFilterResult.FailedAndUnresolvableNodes"));
  BERTH_TRY_ASSIGN(error, String(Field(doc, "Error"), "ExtenderFilterResult.Error"));
  out.nodes = std::move(nodes);
  out.node_names = std::move(names);
  out.failed_nodes = std::move(failed);
  out.failed_and_unresolvable_nodes = std::move(unresolvable);
  out.error = std::move(error);
  return out;
}

Result<HostPriorityList> DecodeHostPriorityList(std::string_view text) {
  if (auto fast = scan::HostPriorities(text)) return std::move(*fast);
  {
    HostPriorityList fast;
    HostPrioritySax sax(&fast);
    if (json::sax_parse(text, &sax)) return fast;
  }
  BERTH_TRY_ASSIGN(doc, Parse(text, "HostPriorityList"));
  HostPriorityList out;
  if (doc.is_null()) return out;
  if (!doc.is_array()) return Invalid("HostPriorityList", "a list");
  out.reserve(doc.size());
  for (size_t i = 0; i < doc.size(); ++i) {
    const std::string where = fmt::format("HostPriorityList[{}]", i);
    if (!doc[i].is_object()) return Invalid(where, "an object");
    BERTH_TRY_ASSIGN(host, String(Field(doc[i], "Host"), where + ".Host"));
    BERTH_TRY_ASSIGN(score, Int(Field(doc[i], "Score"), where + ".Score"));
    out.push_back(HostPriority{std::move(host), score});
  }
  return out;
}

Result<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view text) {
  BERTH_TRY_ASSIGN(doc, Parse(text, "ExtenderBindingArgs"));
  if (!doc.is_object()) return Invalid("ExtenderBindingArgs", "an object");
  ExtenderBindingArgs out;
  BERTH_TRY_ASSIGN(name, String(Field(doc, "PodName"), "ExtenderBindingArgs.PodName"));
  BERTH_TRY_ASSIGN(ns, String(Field(doc, "PodNamespace"), "ExtenderBindingArgs.PodNamespace"));
  BERTH_TRY_ASSIGN(uid, String(Field(doc, "PodUID"), "ExtenderBindingArgs.PodUID"));
  BERTH_TRY_ASSIGN(node, String(Field(doc, "Node"), "ExtenderBindingArgs.Node"));
  out.pod_name = std::move(name);
  out.pod_namespace = std::move(ns);
  out.pod_uid = std::move(uid);
  out.node = std::move(node);
  return out;
}

Result<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view text) {
  BERTH_TRY_ASSIGN(doc, Parse(text, "ExtenderBindingResult"));
  if (!doc.is_object()) return Invalid("ExtenderBindingResult", "an object");
  BERTH_TRY_ASSIGN(error, String(Field(doc, "Error"), "ExtenderBindingResult.Error"));
  return ExtenderBindingResult{std::move(error)};
}

Result<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view text) {
  BERTH_TRY_ASSIGN(doc, Parse(text, "ExtenderPreemptionArgs"));
  if (!doc.is_object()) return Invalid("ExtenderPreemptionArgs", "an object");
  ExtenderPreemptionArgs out;
  BERTH_TRY_ASSIGN(pod, DecodePodField(Field(doc, "Pod"), "ExtenderPreemptionArgs.Pod"));
  out.pod = std::move(pod);
  if (const json* v = Field(doc, "NodeNameToVictims")) {
    if (!v->is_object()) return Invalid("ExtenderPreemptionArgs.NodeNameToVictims", "a map");
    std::map<std::string, Victims> m;
    for (auto it = v->begin(); it != v->end(); ++it) {
      const std::string where =
          fmt::format("ExtenderPreemptionArgs.NodeNameToVictims[{}]", it.key());
      Victims victims;
      if (!it->is_null()) {
        if (!it->is_object()) return Invalid(where, "a Victims object");
        if (const json* pods = Field(*it, "Pods")) {
          if (!pods->is_array()) return Invalid(where + ".Pods", "a list");
          for (size_t i = 0; i < pods->size(); ++i) {
            BERTH_TRY_ASSIGN(p, DecodePodField(&(*pods)[i], fmt::format("{}.Pods[{}]", where, i)));
            victims.pods.push_back(std::move(p));
          }
        }
        BERTH_TRY_ASSIGN(n, Int(Field(*it, "NumPDBViolations"), where + ".NumPDBViolations"));
        victims.num_pdb_violations = n;
      }
      m[it.key()] = std::move(victims);
    }
    out.node_name_to_victims = std::move(m);
  }
  if (const json* v = Field(doc, "NodeNameToMetaVictims")) {
    BERTH_TRY_ASSIGN(m, MetaVictimsMap(v, "ExtenderPreemptionArgs.NodeNameToMetaVictims"));
    out.node_name_to_meta_victims = std::move(m);
  }
  return out;
}

Result<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view text) {
  BERTH_TRY_ASSIGN(doc, Parse(text, "ExtenderPreemptionResult"));
  if (!doc.is_object()) return Invalid("ExtenderPreemptionResult", "an object");
  BERTH_TRY_ASSIGN(m, MetaVictimsMap(Field(doc, "NodeNameToMetaVictims"),
                                     "ExtenderPreemptionResult.NodeNameToMetaVictims"));
  return ExtenderPreemptionResult{std::move(m)};
}

}  // namespace berth::extender::v1
