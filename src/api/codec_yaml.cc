// YAML and JSON text -> nlohmann::json documents.
//
// YAML is read with libyaml's event parser straight into JSON values (no intermediate node
// tree). Plain scalars are typed the way Kubernetes tooling does (null, booleans, numbers), with
// one refinement: a plain scalar becomes a number only if the number prints back as the same
// text, so `version: 1.10` or `id: 007` stay strings instead of silently changing.

#include <yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "api/codec_internal.h"
#include "api/json_parse.h"
#include "berth/api/result.h"

namespace berth::codec {

using nlohmann::json;

namespace {

bool IsNullText(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

bool LooksNumeric(std::string_view s) {
  if (s.empty()) return false;
  size_t i = (s[0] == '-' || s[0] == '+') ? 1 : 0;
  if (i >= s.size()) return false;
  return (s[i] >= '0' && s[i] <= '9') || s[i] == '.';
}

}  // namespace

json ResolvePlainScalar(std::string_view s) {
  if (IsNullText(s)) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (!LooksNumeric(s)) return std::string(s);
  const char* first = s.data();
  const char* last = s.data() + s.size();
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(first, last, i); ec == std::errc() && p == last) {
    if (std::to_string(i) == s) return i;
    return std::string(s);
  }
  uint64_t u = 0;
  if (auto [p, ec] = std::from_chars(first, last, u); ec == std::errc() && p == last) {
    if (std::to_string(u) == s) return u;
    return std::string(s);
  }
  double d = 0;
  if (auto [p, ec] = std::from_chars(first, last, d);
      ec == std::errc() && p == last && std::isfinite(d)) {
    json number = d;
    if (number.dump() == s) return number;
  }
  return std::string(s);
}

namespace {

// Nesting beyond this is refused: decoders and json's own printing recurse per level.
constexpr size_t kMaxDepth = 512;
// Aliases copy the anchored value, so a few lines can expand exponentially ("billion laughs").
// Copies are allowed up to a fixed allowance plus a multiple of the events read so far, which
// real manifests, even large ones built from templates, stay far below.
constexpr size_t kAliasNodeAllowance = size_t{1} << 20;
constexpr size_t kAliasNodesPerEvent = 16;

constexpr std::string_view kCoreTagPrefix = "tag:yaml.org,2002:";

std::string_view View(const yaml_char_t* s) {
  return s == nullptr ? std::string_view() : std::string_view(reinterpret_cast<const char*>(s));
}

// Owns a libyaml parser reading from `text` (which must outlive it).
class Parser {
 public:
  explicit Parser(std::string_view text) {
    ok_ = yaml_parser_initialize(&parser_) != 0;
    if (ok_) {
      yaml_parser_set_input_string(&parser_, reinterpret_cast<const unsigned char*>(text.data()),
                                   text.size());
    }
  }
  ~Parser() {
    if (ok_) yaml_parser_delete(&parser_);
  }
  Parser(const Parser&) = delete;
  Parser& operator=(const Parser&) = delete;

  bool initialized() const { return ok_; }
  yaml_parser_t* get() { return &parser_; }

 private:
  yaml_parser_t parser_;
  bool ok_ = false;
};

// Owns one event; empty until filled by yaml_parser_parse.
class Event {
 public:
  Event() { std::memset(&event_, 0, sizeof(event_)); }
  ~Event() { yaml_event_delete(&event_); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  bool Next(yaml_parser_t* parser) {
    yaml_event_delete(&event_);
    return yaml_parser_parse(parser, &event_) != 0;
  }
  const yaml_event_t& operator*() const { return event_; }
  const yaml_event_t* operator->() const { return &event_; }

 private:
  yaml_event_t event_;
};

// The position of a byte offset, counted like libyaml's marks (0-based, columns in characters),
// for reader errors that only report the offset.
yaml_mark_t MarkAt(std::string_view text, size_t offset) {
  yaml_mark_t mark{};
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++mark.line;
      mark.column = 0;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++mark.column;
    }
  }
  mark.index = offset;
  return mark;
}

std::string Position(const yaml_mark_t& mark) {
  return "line " + std::to_string(mark.line + 1) + ", column " + std::to_string(mark.column + 1);
}

// Assembles documents from the event stream. Values are built bottom-up on an explicit stack,
// so input nesting never turns into native recursion here.
class DocumentBuilder {
 public:
  DocumentBuilder(std::string_view text, std::string_view source,
                  const DocumentSink* sink = nullptr)
      : text_(text), source_(source), sink_(sink) {}

  Result<std::vector<SourceDocument>> Run() {
    Parser parser(text_);
    if (!parser.initialized()) return Error{std::string(source_) + ": yaml: out of memory"};
    Event event;
    while (!error_) {
      if (!event.Next(parser.get())) return ParserError(*parser.get());
      if (event->type == YAML_STREAM_END_EVENT) break;
      Handle(*event);
    }
    if (error_) return Error{std::move(*error_)};
    return std::move(docs_);
  }

 private:
  struct Frame {
    json value;
    std::string anchor;
    size_t nodes = 1;  // this node and everything below it
    bool is_map = false;
    // Maps only: the pending key, and entries pulled in by "<<" merge keys.
    bool have_key = false;
    bool key_is_merge = false;
    std::string key;
    json merged;
    yaml_mark_t start{};
  };

  struct Anchored {
    json value;
    size_t nodes;
  };

  void Handle(const yaml_event_t& e) {
    ++events_;
    switch (e.type) {
      case YAML_DOCUMENT_START_EVENT:
        ++doc_index_;
        stack_.clear();
        anchors_.clear();
        root_ = nullptr;
        break;
      case YAML_DOCUMENT_END_EVENT:
        if (!root_.is_null()) {
          if (sink_) {
            if (auto r = (*sink_)(SourceDocument{std::move(root_), doc_index_}); !r.ok())
              error_ = r.error().message;
          } else {
            docs_.push_back({std::move(root_), doc_index_});
          }
        }
        root_ = nullptr;
        break;
      case YAML_SCALAR_EVENT:
        OnScalar(e);
        break;
      case YAML_ALIAS_EVENT:
        OnAlias(e);
        break;
      case YAML_SEQUENCE_START_EVENT:
        Open(e, /*is_map=*/false, e.data.sequence_start.anchor);
        break;
      case YAML_MAPPING_START_EVENT:
        Open(e, /*is_map=*/true, e.data.mapping_start.anchor);
        break;
      case YAML_SEQUENCE_END_EVENT:
      case YAML_MAPPING_END_EVENT:
        Close();
        break;
      default:
        break;
    }
  }

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().is_map && !stack_.back().have_key;
  }

  void SetKey(std::string key, bool is_merge) {
    Frame& f = stack_.back();
    f.key = std::move(key);
    f.key_is_merge = is_merge;
    f.have_key = true;
  }

  void OnScalar(const yaml_event_t& e) {
    const auto& s = e.data.scalar;
    std::string_view text(reinterpret_cast<const char*>(s.value), s.length);
    std::string_view tag = View(s.tag);
    const bool plain = s.style == YAML_PLAIN_SCALAR_STYLE && tag.empty();
    if (ExpectingKey()) {
      // Keys stay text whatever they look like; only an untagged plain "<<" merges.
      if (s.anchor != nullptr) anchors_[std::string(View(s.anchor))] = {json(std::string(text)), 1};
      SetKey(std::string(text), plain && text == "<<");
      return;
    }
    Complete(TypeScalar(text, tag, plain), View(s.anchor), 1, e.start_mark);
  }

  // Untagged plain scalars and those tagged with a core scalar type are resolved; quoted
  // scalars and every other tag (!!str, "!", application tags) give strings.
  static json TypeScalar(std::string_view text, std::string_view tag, bool plain) {
    if (plain) return ResolvePlainScalar(text);
    if (tag.starts_with(kCoreTagPrefix)) {
      std::string_view type = tag.substr(kCoreTagPrefix.size());
      if (type == "int" || type == "float" || type == "bool" || type == "null") {
        return ResolvePlainScalar(text);
      }
    }
    return json(std::string(text));
  }

  void OnAlias(const yaml_event_t& e) {
    std::string_view name = View(e.data.alias.anchor);
    auto it = anchors_.find(std::string(name));
    if (it == anchors_.end()) {
      Fail(e.start_mark, "unknown anchor \"" + std::string(name) + "\" referenced");
      return;
    }
    alias_nodes_ += it->second.nodes;
    if (alias_nodes_ > kAliasNodeAllowance + kAliasNodesPerEvent * events_) {
      Fail(e.start_mark, "aliases expand to too many nodes");
      return;
    }
    const json& v = it->second.value;
    if (ExpectingKey()) {
      SetKey(v.is_string() ? v.get<std::string>() : v.dump(), false);
      return;
    }
    Complete(json(v), {}, it->second.nodes, e.start_mark);
  }

  void Open(const yaml_event_t& e, bool is_map, const yaml_char_t* anchor) {
    if (ExpectingKey()) {
      Fail(e.start_mark, "complex mapping keys are not supported");
      return;
    }
    if (stack_.size() >= kMaxDepth) {
      Fail(e.start_mark, "nesting deeper than " + std::to_string(kMaxDepth) + " levels");
      return;
    }
    Frame& f = stack_.emplace_back();
    f.value = is_map ? json::object() : json::array();
    f.anchor = View(anchor);
    f.is_map = is_map;
    f.start = e.start_mark;
  }

  void Close() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    if (f.is_map && !f.merged.is_null()) {
      // Merged entries never override keys written in the map itself.
      auto& obj = f.value.get_ref<json::object_t&>();
      for (auto& [k, v] : f.merged.get_ref<json::object_t&>()) obj.try_emplace(k, std::move(v));
    }
    Complete(std::move(f.value), f.anchor, f.nodes, f.start);
  }

  // Attaches a finished value to its parent (or makes it the document root).
  void Complete(json v, std::string_view anchor, size_t nodes, const yaml_mark_t& mark) {
    if (!anchor.empty()) anchors_[std::string(anchor)] = {v, nodes};
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    Frame& f = stack_.back();
    f.nodes += nodes;
    if (!f.is_map) {
      f.value.get_ref<json::array_t&>().push_back(std::move(v));
      return;
    }
    f.have_key = false;
    if (f.key_is_merge) {
      Merge(f, std::move(v), mark);
      return;
    }
    f.value.get_ref<json::object_t&>().insert_or_assign(std::move(f.key), std::move(v));
  }

  // "<<: *base" or "<<: [*a, *b]": earlier maps win over later ones.
  void Merge(Frame& f, json v, const yaml_mark_t& mark) {
    if (f.merged.is_null()) f.merged = json::object();
    auto& merged = f.merged.get_ref<json::object_t&>();
    auto add = [&](json& m) {
      if (!m.is_object()) {
        Fail(mark, "merge key \"<<\" needs a map or a list of maps");
        return;
      }
      for (auto& [k, val] : m.get_ref<json::object_t&>()) merged.try_emplace(k, std::move(val));
    };
    if (v.is_array()) {
      for (json& m : v) add(m);
    } else {
      add(v);
    }
  }

  void Fail(const yaml_mark_t& mark, std::string_view message) {
    if (error_) return;
    error_ = std::string(source_) + ": yaml: " + Position(mark) + ": " + std::string(message);
  }

  Error ParserError(const yaml_parser_t& p) const {
    if (p.error == YAML_MEMORY_ERROR) return Error{std::string(source_) + ": yaml: out of memory"};
    const yaml_mark_t mark =
        p.error == YAML_READER_ERROR ? MarkAt(text_, p.problem_offset) : p.problem_mark;
    std::string msg = std::string(source_) + ": yaml: " + Position(mark) + ": ";
    msg += p.problem != nullptr ? p.problem : "syntax error";
    if (p.context != nullptr) {
      msg += " (";
      msg += p.context;
      msg += " started at " + Position(p.context_mark) + ")";
    }
    return Error{std::move(msg)};
  }

  std::string_view text_;
  std::string_view source_;
  const DocumentSink* sink_ = nullptr;
  std::vector<SourceDocument> docs_;
  std::vector<Frame> stack_;
  std::unordered_map<std::string, Anchored> anchors_;
  json root_;
  size_t alias_nodes_ = 0;
  size_t events_ = 0;
  int doc_index_ = 0;
  std::optional<std::string> error_;
};

bool StartsLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

// JSON objects or arrays written one after another, as kubectl accepts them; YAML does not.
// nullopt unless the whole text is such a sequence.
std::optional<std::vector<SourceDocument>> ParseJsonSequence(std::string_view text) {
  std::istringstream in{std::string(text)};
  std::vector<SourceDocument> out;
  while (true) {
    in >> std::ws;
    const int next = in.peek();
    if (next == std::char_traits<char>::eof()) break;
    // Reading stops right after a closing bracket; after a bare scalar it would swallow one
    // extra character.
    if (next != '{' && next != '[') return std::nullopt;
    json doc;
    try {
      in >> doc;
    } catch (const json::exception&) {
      return std::nullopt;
    }
    out.push_back({std::move(doc), static_cast<int>(out.size()) + 1});
  }
  return out;
}

// The deepest bracket nesting of JSON text (strings skipped). Deep documents would exhaust the
// stack in the recursive copies and encoders downstream; the YAML reader has the same limit.
size_t JsonNestingDepth(std::string_view text) {
  size_t depth = 0, deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' || c == '[') {
      deepest = std::max(deepest, ++depth);
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

Result<std::vector<SourceDocument>> ParseSourceDocuments(std::string_view text,
                                                         std::string_view source) {
  // JSON (kubectl -o json) takes the faster JSON parser. Anything it rejects goes through YAML,
  // which accepts JSON too and produces the error text.
  if (StartsLikeJson(text)) {
    if (JsonNestingDepth(text) > kMaxDepth) {
      return Error{
          std::string(source) + ": nesting deeper than " + std::to_string(kMaxDepth) + " levels",
          ErrorCode::kInvalid};
    }
    json doc;
    if (!ParseJsonFast(text, &doc, kMaxDepth)) {
      doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    }
    if (!doc.is_discarded()) {
      std::vector<SourceDocument> out;
      if (!doc.is_null()) out.push_back({std::move(doc), 1});
      return out;
    }
    if (auto docs = ParseJsonSequence(text)) return std::move(*docs);
  }
  return DocumentBuilder(text, source).Run();
}

std::optional<std::vector<DocumentSpan>> SplitFlowMappingDocuments(std::string_view text) {
  std::vector<DocumentSpan> out;
  DocumentSpan cur;
  bool explicit_start = false;  // `cur` began with a "---" line
  size_t line_no = 0;
  auto is_blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  auto close = [&](size_t end) {
    cur.end = end;
    // Text before the first "---" is a document only if it has content.
    if (explicit_start || cur.content != std::string_view::npos) {
      cur.index = static_cast<int>(out.size()) + 1;
      out.push_back(cur);
    }
  };
  for (size_t pos = 0; pos < text.size();) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    const std::string_view line = text.substr(pos, eol - pos);
    const size_t next = eol < text.size() ? eol + 1 : eol;
    auto marker = [&](std::string_view m) {
      return line.starts_with(m) && (line.size() == 3 || is_blank(line[3]));
    };
    if (marker("---")) {
      size_t k = 3;
      while (k < line.size() && is_blank(line[k])) ++k;
      if (k < line.size() && line[k] != '#') return std::nullopt;
      close(pos);
      cur = DocumentSpan{};
      cur.begin = next;
      cur.lines_before = line_no + 1;
      explicit_start = true;
    } else if (marker("...") || line.starts_with('%')) {
      return std::nullopt;
    } else if (cur.content == std::string_view::npos) {
      size_t k = 0;
      while (k < line.size() && is_blank(line[k])) ++k;
      if (k < line.size() && line[k] != '#') {
        if (line[k] != '{') return std::nullopt;
        cur.content = pos + k;
      }
    }
    ++line_no;
    pos = next;
  }
  close(text.size());
  return out;
}

Result<std::optional<json>> ParseDocumentSpan(std::string_view text, const DocumentSpan& span,
                                              std::string_view source) {
  if (span.content == std::string_view::npos) return std::optional<json>();
  // JSON is YAML, and the JSON parser reads it to the same tree (libyaml's event parser was three
  // quarters of reading such a stream), except that a number keeps its JSON value where YAML 1.1
  // keeps some spellings as text (1e3). Anything else (flow YAML, a trailing comment, a syntax
  // error) goes to the YAML parser, which sees the document at its own lines so that its errors
  // point into the file.
  const std::string_view body = text.substr(span.content, span.end - span.content);
  if (JsonNestingDepth(body) <= kMaxDepth) {
    json doc;
    if (!ParseJsonFast(body, &doc, kMaxDepth)) {
      doc = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    }
    if (!doc.is_discarded() && doc.is_object()) return std::optional<json>(std::move(doc));
  }
  std::string padded(span.lines_before, '\n');
  padded.append(text.substr(span.begin, span.end - span.begin));
  auto docs = DocumentBuilder(padded, source).Run();
  if (!docs.ok()) return docs.error();
  if (docs->empty()) return std::optional<json>();
  return std::optional<json>(std::move(docs->front().doc));
}

VoidResult ForEachSourceDocument(std::string_view text, std::string_view source,
                                 const DocumentSink& sink) {
  if (!StartsLikeJson(text)) {
    // A stream of JSON objects between "---" lines: document by document, JSON where it is.
    if (auto spans = SplitFlowMappingDocuments(text)) {
      for (const DocumentSpan& d : *spans) {
        auto doc = ParseDocumentSpan(text, d, source);
        if (!doc.ok()) return doc.error();
        if (!*doc) continue;  // empty: counted, not delivered
        if (auto r = sink(SourceDocument{std::move(**doc), d.index}); !r.ok()) return r;
      }
      return {};
    }
    auto r = DocumentBuilder(text, source, &sink).Run();
    if (!r.ok()) return r.error();
    return {};
  }
  // JSON is one document (or a short sequence): parsed whole, then handed over one by one.
  auto docs = ParseSourceDocuments(text, source);
  if (!docs.ok()) return docs.error();
  for (auto& d : *docs)
    if (auto r = sink(std::move(d)); !r.ok()) return r;
  return {};
}

Result<std::vector<json>> ParseDocumentsImpl(std::string_view text, std::string_view source) {
  auto docs = ParseSourceDocuments(text, source);
  if (!docs.ok()) return docs.error();
  std::vector<json> out;
  out.reserve(docs->size());
  for (auto& d : *docs) out.push_back(std::move(d.doc));
  return out;
}

}  // namespace berth::codec

namespace berth {

Result<std::vector<nlohmann::json>> ParseDocuments(std::string_view text, std::string_view source) {
  return codec::ParseDocumentsImpl(text, source);
}

}  // namespace berth
