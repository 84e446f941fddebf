// The extender wire format: encoding with Go's exact field names, decoding as Go's encoding/json
// does (field names in any case, null for empty). The documents of every scheduling cycle are
// read by wire_read.h; the binding and preemption documents as a tree here.
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
#include "extender/wire_internal.h"
#include "extender/wire_read.h"

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

// A NodeList: {"items": [...]}.
Result<NodePtr> NodeItem(const json& item, const std::string& where) {
  if (!item.is_object()) return Invalid(where, "a Node object");
  auto node = DecodeNode(item, where);
  if (!node.ok()) return Error{node.error().message, ErrorCode::kBadRequest};
  return NodePtr(std::make_shared<Node>(std::move(node).value()));
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
  BERTH_TRY_ASSIGN(parts, read::FilterResult(text, read::NodesAs::kNames));
  FilterAnswer answer;
  answer.result = std::move(parts.result);
  answer.node_item_names = std::move(parts.node_item_names);
  if (answer.result.nodes) {  // read whole: an item's name alone did not settle it
    answer.node_item_names.emplace();
    for (const auto& n : *answer.result.nodes) answer.node_item_names->push_back(n->metadata.name);
    answer.result.nodes.reset();
  }
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
  json pod = json::parse(pod_json, nullptr, /*allow_exceptions=*/false);
  if (pod.is_discarded()) return read::MalformedArgs();
  return DecodePodField(&pod, "ExtenderArgs.Pod");
}

Result<NodePtr> DecodeArgsNode(std::string_view node_json, size_t index) {
  json doc = json::parse(node_json, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return read::MalformedArgs();
  return NodeItem(doc, fmt::format("ExtenderArgs.Nodes.items[{}]", index));
}

Result<ExtenderArgs> DecodeExtenderArgs(std::string_view text) {
  BERTH_TRY_ASSIGN(parts, read::Args(text));
  ExtenderArgs out;
  if (parts.pod_error) return *parts.pod_error;
  if (parts.pod_json) {
    BERTH_TRY_ASSIGN(pod, DecodeArgsPod(*parts.pod_json));
    out.pod = std::move(pod);
  }
  if (parts.nodes_error) return *parts.nodes_error;
  if (parts.node_items) {
    out.nodes.emplace();
    out.nodes->reserve(parts.node_items->size());
    for (size_t i = 0; i < parts.node_items->size(); ++i) {
      BERTH_TRY_ASSIGN(node, DecodeArgsNode((*parts.node_items)[i], i));
      out.nodes->push_back(std::move(node));
    }
  }
  if (parts.names_error) return *parts.names_error;
  out.node_names = std::move(parts.node_names);
  return out;
}

Result<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view text) {
  BERTH_TRY_ASSIGN(parts, read::FilterResult(text, read::NodesAs::kNodes));
  return std::move(parts.result);
}

Result<HostPriorityList> DecodeHostPriorityList(std::string_view text) {
  return read::HostPriorities(text);
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
