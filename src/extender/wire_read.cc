#include "extender/wire_read.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "api/codec.h"
#include "api/text.h"

namespace berth::extender::v1::read {
namespace {

namespace od = simdjson::ondemand;

Error Malformed(std::string_view what) {
  return Error{fmt::format("{}: malformed JSON", what), ErrorCode::kBadRequest};
}

Error Invalid(std::string_view field, std::string_view want) {
  return Error{fmt::format("{}: expected {}", field, want), ErrorCode::kBadRequest};
}

// Field names match in any letter case, as Go's decoder does; they usually come exactly as
// written, which is checked first.
[[gnu::noinline]] bool KeyIsFolded(std::string_view key, std::string_view want) {
  return EqualsIgnoreCase(key, want);
}
template <size_t N>
bool KeyIs(std::string_view key, const char (&want)[N]) {
  return key.size() == N - 1 &&
         (std::memcmp(key.data(), want, N - 1) == 0 || KeyIsFolded(key, want));
}

// The text, padded as simdjson reads it, in a buffer of the calling thread; and the parser.
struct Padded {
  od::parser parser;
  std::string buffer;
  const char* original = nullptr;

  simdjson::padded_string_view Of(std::string_view text) {
    buffer.reserve(text.size() + simdjson::SIMDJSON_PADDING);
    buffer.assign(text);
    original = text.data();
    return simdjson::padded_string_view(buffer.data(), buffer.size(), buffer.capacity());
  }
  // A view of the padded copy as a view of the original text.
  std::string_view InOriginal(std::string_view in_copy) const {
    return std::string_view(original + (in_copy.data() - buffer.data()), in_copy.size());
  }
};

Padded& ThreadPadded() {
  thread_local Padded padded;
  return padded;
}

// An integer beyond 64 bits: JSON, which Go and nlohmann read (as a float), simdjson does not.
bool IsBigInteger(std::string_view raw) {
  while (!raw.empty() &&
         (raw.back() == ' ' || raw.back() == '\n' || raw.back() == '\r' || raw.back() == '\t')) {
    raw.remove_suffix(1);
  }
  if (!raw.empty() && raw.front() == '-') raw.remove_prefix(1);
  if (raw.size() < 19 || raw.front() == '0') return false;
  return std::all_of(raw.begin(), raw.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The end of a string's text from just after its opening quote: its closing quote, or the
// first backslash when it has escapes. Stage 1 has found the closing quote, so the scan stops
// inside the text.
const char* PlainEnd(const char* p) {
  while (*p != '"' && *p != '\\') ++p;
  return p;
}

// A field's key: taken from the text when it has no escapes (nearly always), so it is not
// copied out; otherwise unescaped. False when it is not JSON.
bool FieldKey(od::field& field, std::string_view* key) {
  const char* start = field.key().raw();
  const char* end = PlainEnd(start);
  if (*end == '"') {
    *key = std::string_view(start, static_cast<size_t>(end - start));
    return true;
  }
  return !field.unescaped_key().get(*key);
}

// A string value without escapes, as it stands in the text; false, with `v` untouched, for
// anything else (another type, a string with escapes, which ReadString unescapes). Unread, the
// value is stepped over by the enclosing object's iteration.
bool PlainString(od::value& v, std::string_view* out) {
  const std::string_view token = v.raw_json_token();
  if (token.empty() || token.front() != '"') return false;
  const char* start = token.data() + 1;
  const char* end = PlainEnd(start);
  if (*end != '"') return false;
  *out = std::string_view(start, static_cast<size_t>(end - start));
  return true;
}

// How deep a skipped value may nest: far beyond any extender's answer, and shallow enough
// that a hostile document of brackets cannot exhaust the reading thread's stack.
constexpr int kMaxSkipDepth = 200;

// Checks that `v` is JSON, visiting all of it. False when it is not, or when it nests deeper
// than kMaxSkipDepth below `depth`.
bool Skip(od::value v, int depth = 0);

bool SkipObject(od::object o, int depth) {
  for (auto f : o) {
    od::field field;
    std::string_view key;
    if (std::move(f).get(field) || field.unescaped_key().get(key) || !Skip(field.value(), depth))
      return false;
  }
  return true;
}

bool SkipArray(od::array a, int depth) {
  for (auto e : a) {
    od::value item;
    if (e.get(item) || !Skip(item, depth)) return false;
  }
  return true;
}

bool Skip(od::value v, int depth) {
  od::json_type type;
  if (v.type().get(type)) return false;
  switch (type) {
    case od::json_type::object: {
      od::object o;
      return depth < kMaxSkipDepth && !v.get_object().get(o) && SkipObject(o, depth + 1);
    }
    case od::json_type::array: {
      od::array a;
      return depth < kMaxSkipDepth && !v.get_array().get(a) && SkipArray(a, depth + 1);
    }
    case od::json_type::string: {
      std::string_view s;
      return !v.get_string().get(s);
    }
    case od::json_type::number: {
      const std::string_view raw = v.raw_json_token();
      od::number n;
      return !v.get_number().get(n) || IsBigInteger(raw);
    }
    case od::json_type::boolean: {
      bool b;
      return !v.get_bool().get(b);
    }
    case od::json_type::null: {
      bool null = false;
      return !v.is_null().get(null) && null;
    }
  }
  return false;
}

// The document's root, when it is not what the caller reads: checked to be JSON to its end.
bool SkipRoot(od::document& doc) {
  od::json_type type;
  if (doc.type().get(type)) return false;
  switch (type) {
    case od::json_type::object: {
      od::object o;
      if (doc.get_object().get(o) || !SkipObject(o, 1)) return false;
      break;
    }
    case od::json_type::array: {
      od::array a;
      if (doc.get_array().get(a) || !SkipArray(a, 1)) return false;
      break;
    }
    case od::json_type::string: {
      std::string_view s;
      if (doc.get_string().get(s)) return false;
      break;
    }
    case od::json_type::number: {
      std::string_view raw;
      od::number n;
      if (doc.raw_json_token().get(raw) || (doc.get_number().get(n) && !IsBigInteger(raw))) {
        return false;
      }
      break;
    }
    case od::json_type::boolean: {
      bool b;
      if (doc.get_bool().get(b)) return false;
      break;
    }
    case od::json_type::null: {
      bool null = false;
      if (doc.is_null().get(null) || !null) return false;
      break;
    }
  }
  return true;
}

// Nothing after the root value.
bool AtEnd(od::document& doc) {
  const char* at = nullptr;
  return doc.current_location().get(at) == simdjson::OUT_OF_BOUNDS;
}

// A value that reads as absent: null (checked to be exactly null).
enum class Kind { kNull, kOther, kBad };
Kind NullOrNot(od::value v, od::json_type* type) {
  if (v.type().get(*type)) return Kind::kBad;
  if (*type != od::json_type::null) return Kind::kOther;
  bool null = false;
  return !v.is_null().get(null) && null ? Kind::kNull : Kind::kBad;
}

// How reading a field's value went: read, of another type (the value was checked to be JSON),
// or not JSON.
enum class Read { kOk, kWrongType, kBad };

// The start of a field whose value must be null or of type `want`: a result to return at once
// (false: not JSON; true: null, or a value of another type, skipped and named in `*err` as not
// `what`), or nullopt when the value is a `want` to read.
std::optional<bool> NullOrWrongType(od::value v, od::json_type want, std::string_view field,
                                    std::string_view what, std::optional<Error>* err) {
  od::json_type type;
  switch (NullOrNot(v, &type)) {
    case Kind::kBad:
      return false;
    case Kind::kNull:
      return true;
    case Kind::kOther:
      break;
  }
  if (type == want) return std::nullopt;
  if (!Skip(v)) return false;
  *err = Invalid(field, what);
  return true;
}

// A string, or null for "".
Read ReadString(od::value v, std::string* out) {
  od::json_type type;
  switch (NullOrNot(v, &type)) {
    case Kind::kBad:
      return Read::kBad;
    case Kind::kNull:
      out->clear();
      return Read::kOk;
    case Kind::kOther:
      break;
  }
  if (type != od::json_type::string) return Skip(v) ? Read::kWrongType : Read::kBad;
  std::string_view s;
  if (v.get_string().get(s)) return Read::kBad;
  out->assign(s);
  return Read::kOk;
}

// null, or a list of strings.
bool StringListField(od::value v, std::string_view field,
                     std::optional<std::vector<std::string>>* out, std::optional<Error>* err) {
  out->reset();
  err->reset();
  if (auto done = NullOrWrongType(v, od::json_type::array, field, "a list of strings", err))
    return *done;
  od::array a;
  if (v.get_array().get(a)) return false;
  out->emplace();
  size_t i = 0;
  for (auto e : a) {
    od::value item;
    od::json_type item_type;
    if (e.get(item) || item.type().get(item_type)) return false;
    if (item_type != od::json_type::string) {
      if (!Skip(item)) return false;
      if (!*err) *err = Invalid(fmt::format("{}[{}]", field, i), "a string");
    } else {
      std::string_view s;
      if (item.get_string().get(s)) return false;
      (*out)->emplace_back(s);
    }
    ++i;
  }
  if (*err) out->reset();
  return true;
}

// null, or a map of node name to reason (a null reason is "").
bool FailedMapField(od::value v, std::string_view field, FailedNodesMap* out,
                    std::optional<Error>* err) {
  out->clear();
  err->reset();
  if (auto done =
          NullOrWrongType(v, od::json_type::object, field, "a map of node name to reason", err))
    return *done;
  od::object o;
  if (v.get_object().get(o)) return false;
  for (auto f : o) {
    od::field member;
    std::string_view key;
    if (std::move(f).get(member) || member.unescaped_key().get(key)) return false;
    const Read read = ReadString(member.value(), &(*out)[std::string(key)]);
    if (read == Read::kBad) return false;
    if (read == Read::kWrongType && !*err) {
      *err = Invalid(fmt::format("{}[{}]", field, key), "a string");
    }
  }
  return true;
}

// A node item read for its name only: metadata.name, "" when there is none. False in `*usual`
// when the item has a metadata or a name of another type (the codec words that error).
bool ItemName(od::value item, std::string* name, bool* usual) {
  od::object o;
  if (item.get_object().get(o)) return false;
  name->clear();
  for (auto f : o) {
    od::field field;
    std::string_view key;
    if (std::move(f).get(field) || field.unescaped_key().get(key)) return false;
    if (!KeyIs(key, "metadata")) {
      if (!Skip(field.value())) return false;
      continue;
    }
    od::value meta = field.value();
    od::json_type type;
    const Kind kind = NullOrNot(meta, &type);
    if (kind == Kind::kBad) return false;
    // A repeated metadata is read into the same name, as Go's decoder reads it.
    if (kind == Kind::kNull) continue;
    if (type != od::json_type::object) {
      *usual = false;
      if (!Skip(meta)) return false;
      continue;
    }
    od::object m;
    if (meta.get_object().get(m)) return false;
    for (auto mf : m) {
      od::field member;
      std::string_view mkey;
      if (std::move(mf).get(member) || member.unescaped_key().get(mkey)) return false;
      if (!KeyIs(mkey, "name")) {
        if (!Skip(member.value())) return false;
        continue;
      }
      const Read read = ReadString(member.value(), name);
      if (read == Read::kBad) return false;
      if (read == Read::kWrongType) *usual = false;
    }
  }
  return true;
}

// The node item's object text, decoded by the codec into `*out`; an error of the item goes to
// `*err`. False when the text is not JSON.
bool DecodedItem(std::string_view text, const std::string& where, NodePtr* out,
                 std::optional<Error>* err) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return false;
  auto node = DecodeNode(doc, where);
  if (!node.ok()) {
    *err = Error{node.error().message, ErrorCode::kBadRequest};
    return true;
  }
  *out = std::make_shared<Node>(std::move(node).value());
  return true;
}

// How a NodeList's items are kept.
struct ItemSink {
  NodesAs nodes_as = NodesAs::kNames;
  bool texts = false;  // ArgsParts: the items' texts
  std::vector<std::string>* names = nullptr;
  std::vector<NodePtr>* nodes = nullptr;
  std::vector<std::string_view>* item_texts = nullptr;
  bool usual = true;  // kNames: every item had a plain name
};

// One item of a NodeList's "items", the `index`th of the list named `items`.
bool Item(od::value item, std::string_view items, size_t index, ItemSink* sink,
          std::optional<Error>* err) {
  od::json_type type;
  if (item.type().get(type)) return false;
  if (type != od::json_type::object) {
    if (!Skip(item)) return false;
    if (!*err) *err = Invalid(fmt::format("{}[{}]", items, index), "a Node object");
    return true;
  }
  if (sink->texts || sink->nodes_as == NodesAs::kNodes) {
    od::object o;
    std::string_view text;
    if (item.get_object().get(o) || o.raw_json().get(text)) return false;
    if (sink->texts) {
      sink->item_texts->push_back(ThreadPadded().InOriginal(text));
      return true;
    }
    std::optional<Error> item_err;
    NodePtr node;
    if (!DecodedItem(text, fmt::format("{}[{}]", items, index), &node, &item_err)) return false;
    if (item_err && !*err) *err = std::move(item_err);
    sink->nodes->push_back(std::move(node));
    return true;
  }
  return ItemName(item, &sink->names->emplace_back(), &sink->usual);
}

// "Nodes": null, or a NodeList whose items go to `sink`. False in `*present` for null.
bool NodeListField(od::value v, std::string_view field, ItemSink* sink, bool* present,
                   std::optional<Error>* err) {
  err->reset();
  *present = false;
  if (auto done = NullOrWrongType(v, od::json_type::object, field, "a NodeList object", err))
    return *done;
  *present = true;
  od::object o;
  if (v.get_object().get(o)) return false;
  for (auto f : o) {
    od::field member;
    std::string_view key;
    if (std::move(f).get(member) || member.unescaped_key().get(key)) return false;
    od::value value = member.value();
    if (!KeyIs(key, "items")) {
      if (!Skip(value)) return false;
      continue;
    }
    if (sink->names) sink->names->clear();
    if (sink->nodes) sink->nodes->clear();
    if (sink->item_texts) sink->item_texts->clear();
    err->reset();
    od::json_type type;
    const Kind kind = NullOrNot(value, &type);
    if (kind == Kind::kBad) return false;
    if (kind == Kind::kNull) continue;
    const std::string items = fmt::format("{}.items", field);
    if (type != od::json_type::array) {
      if (!Skip(value)) return false;
      *err = Invalid(items, "a list");
      continue;
    }
    od::array a;
    if (value.get_array().get(a)) return false;
    size_t i = 0;
    for (auto e : a) {
      od::value item;
      if (e.get(item) || !Item(item, items, i++, sink, err)) return false;
    }
  }
  return true;
}

// Iterates the members of the root object, or reports `what` is not one.
template <class OnField>
Result<bool> RootObject(od::document& doc, std::string_view what, const OnField& on_field) {
  od::json_type type;
  if (doc.type().get(type)) return Malformed(what);
  if (type != od::json_type::object) {
    if (!SkipRoot(doc) || !AtEnd(doc)) return Malformed(what);
    return Invalid(what, "an object");
  }
  od::object o;
  if (doc.get_object().get(o)) return Malformed(what);
  for (auto f : o) {
    od::field field;
    std::string_view key;
    if (std::move(f).get(field) || field.unescaped_key().get(key)) return Malformed(what);
    if (!on_field(key, field.value())) return Malformed(what);
  }
  if (!AtEnd(doc)) return Malformed(what);
  return true;
}

Result<od::document> Iterate(std::string_view text, std::string_view what) {
  Padded& padded = ThreadPadded();
  od::document doc;
  if (padded.parser.iterate(padded.Of(text)).get(doc)) return Malformed(what);
  return doc;
}

// An integer, or null for 0. Go reads a number with a fraction or beyond 64 bits as no integer.
Read ReadScore(od::value v, int64_t* out) {
  od::json_type type;
  switch (NullOrNot(v, &type)) {
    case Kind::kBad:
      return Read::kBad;
    case Kind::kNull:
      *out = 0;
      return Read::kOk;
    case Kind::kOther:
      break;
  }
  if (type != od::json_type::number) return Skip(v) ? Read::kWrongType : Read::kBad;
  const std::string_view raw = v.raw_json_token();
  od::number n;
  if (v.get_number().get(n)) return IsBigInteger(raw) ? Read::kWrongType : Read::kBad;
  if (n.get_number_type() != od::number_type::signed_integer) return Read::kWrongType;
  *out = n.get_int64();
  return Read::kOk;
}

}  // namespace

Result<HostPriorityList> HostPriorities(std::string_view text) {
  constexpr std::string_view kWhat = "HostPriorityList";
  BERTH_TRY_ASSIGN(doc, Iterate(text, kWhat));
  HostPriorityList out;
  od::json_type type;
  if (doc.type().get(type)) return Malformed(kWhat);
  if (type != od::json_type::array) {
    if (!SkipRoot(doc) || !AtEnd(doc)) return Malformed(kWhat);
    if (type == od::json_type::null) return out;
    return Invalid(kWhat, "a list");
  }
  od::array a;
  if (doc.get_array().get(a)) return Malformed(kWhat);
  // An entry takes some 30 bytes of text ({"Host":"node-1","Score":10},): room for all of
  // them at once, rather than growing (and moving the names) as they come; bounded, as the
  // text may be mostly something else.
  out.reserve(std::min<size_t>(text.size() / 24, 1 << 16));
  std::optional<Error> err;
  size_t i = 0;
  for (auto e : a) {
    const size_t index = i++;
    od::value item;
    od::object o;
    if (e.get(item) || item.type().get(type)) return Malformed(kWhat);
    if (type != od::json_type::object) {
      if (!Skip(item)) return Malformed(kWhat);
      if (!err) err = Invalid(fmt::format("{}[{}]", kWhat, index), "an object");
      continue;
    }
    if (item.get_object().get(o)) return Malformed(kWhat);
    HostPriority& entry = out.emplace_back();
    bool bad_host = false, bad_score = false;
    for (auto f : o) {
      // Read in place: a copy of the field costs more than reading it here.
      if (f.error()) return Malformed(kWhat);
      od::field& field = f.value_unsafe();
      std::string_view key;
      if (!FieldKey(field, &key)) return Malformed(kWhat);
      od::value& v = field.value();
      if (KeyIs(key, "Host")) {
        // Almost always a name without escapes: taken from the text as it stands.
        if (std::string_view host; PlainString(v, &host)) {
          entry.host.assign(host);
          continue;
        }
        const Read read = ReadString(v, &entry.host);
        if (read == Read::kBad) return Malformed(kWhat);
        bad_host = read == Read::kWrongType;
      } else if (KeyIs(key, "Score")) {
        // Almost always a plain integer; anything else (null, a float, another type, a number
        // beyond 64 bits) is looked at again below.
        if (int64_t score; !v.get_int64().get(score)) {
          entry.score = score;
          continue;
        }
        const Read read = ReadScore(v, &entry.score);
        if (read == Read::kBad) return Malformed(kWhat);
        bad_score = read == Read::kWrongType;
      } else if (!Skip(v)) {
        return Malformed(kWhat);
      }
    }
    if (!err && (bad_host || bad_score)) {
      err = Invalid(fmt::format("{}[{}].{}", kWhat, index, bad_host ? "Host" : "Score"),
                    bad_host ? "a string" : "an integer");
    }
  }
  if (!AtEnd(doc)) return Malformed(kWhat);
  if (err) return *err;
  return out;
}

Result<FilterParts> FilterResult(std::string_view text, NodesAs nodes_as) {
  constexpr std::string_view kWhat = "ExtenderFilterResult";
  BERTH_TRY_ASSIGN(doc, Iterate(text, kWhat));
  FilterParts out;
  // The decoder's field order: Nodes, NodeNames, FailedNodes, FailedAndUnresolvableNodes, Error.
  std::optional<Error> errs[5];
  std::vector<std::string> names;
  std::vector<NodePtr> nodes;
  ItemSink sink{.nodes_as = nodes_as, .names = &names, .nodes = &nodes};
  bool has_nodes = false;
  auto on_field = [&](std::string_view key, od::value v) {
    if (KeyIs(key, "Nodes")) {
      names.clear();
      nodes.clear();
      sink.usual = true;
      return NodeListField(v, "ExtenderFilterResult.Nodes", &sink, &has_nodes, &errs[0]);
    }
    if (KeyIs(key, "NodeNames")) {
      return StringListField(v, "ExtenderFilterResult.NodeNames", &out.result.node_names, &errs[1]);
    }
    if (KeyIs(key, "FailedNodes")) {
      return FailedMapField(v, "ExtenderFilterResult.FailedNodes", &out.result.failed_nodes,
                            &errs[2]);
    }
    if (KeyIs(key, "FailedAndUnresolvableNodes")) {
      return FailedMapField(v, "ExtenderFilterResult.FailedAndUnresolvableNodes",
                            &out.result.failed_and_unresolvable_nodes, &errs[3]);
    }
    if (KeyIs(key, "Error")) {
      errs[4].reset();
      const Read read = ReadString(v, &out.result.error);
      if (read == Read::kWrongType) errs[4] = Invalid("ExtenderFilterResult.Error", "a string");
      return read != Read::kBad;
    }
    return Skip(v);
  };
  BERTH_TRY_ASSIGN(read, RootObject(doc, kWhat, on_field));
  (void)read;
  // An item whose metadata or name is not what a Node has: the codec words the error.
  if (!sink.usual) return FilterResult(text, NodesAs::kNodes);
  for (auto& err : errs)
    if (err) return *err;
  if (has_nodes && nodes_as == NodesAs::kNames) out.node_item_names = std::move(names);
  if (has_nodes && nodes_as == NodesAs::kNodes) out.result.nodes = std::move(nodes);
  return out;
}

Error MalformedArgs() { return Malformed("ExtenderArgs"); }

Result<ArgsParts> Args(std::string_view text) {
  constexpr std::string_view kWhat = "ExtenderArgs";
  BERTH_TRY_ASSIGN(doc, Iterate(text, kWhat));
  ArgsParts out;
  std::vector<std::string_view> items;
  ItemSink sink{.texts = true, .item_texts = &items};
  bool has_nodes = false;
  auto on_field = [&](std::string_view key, od::value v) {
    if (KeyIs(key, "Pod")) {
      out.pod_json.reset();
      out.pod_error.reset();
      od::json_type type;
      const Kind kind = NullOrNot(v, &type);
      if (kind != Kind::kOther) return kind == Kind::kNull;
      if (type != od::json_type::object) {
        out.pod_error = Invalid("ExtenderArgs.Pod", "a Pod object");
        return Skip(v);
      }
      od::object o;
      std::string_view pod;
      if (v.get_object().get(o) || o.raw_json().get(pod)) return false;
      out.pod_json = ThreadPadded().InOriginal(pod);
      return true;
    }
    if (KeyIs(key, "Nodes")) {
      items.clear();
      return NodeListField(v, "ExtenderArgs.Nodes", &sink, &has_nodes, &out.nodes_error);
    }
    if (KeyIs(key, "NodeNames")) {
      return StringListField(v, "ExtenderArgs.NodeNames", &out.node_names, &out.names_error);
    }
    return Skip(v);
  };
  BERTH_TRY_ASSIGN(read, RootObject(doc, kWhat, on_field));
  (void)read;
  if (has_nodes) out.node_items = std::move(items);
  return out;
}

}  // namespace berth::extender::v1::read
