#include "extender/json_scan.h"

#include <cctype>
#include <charconv>
#include <cstring>

#include "api/text.h"

namespace berth::extender::v1::scan {
namespace {

// A cursor over JSON text. Every reader returns false when the text is not what it expects.
class Cursor {
 public:
  explicit Cursor(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  void Ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool Peek(char c) {
    Ws();
    return p_ < end_ && *p_ == c;
  }
  bool Eat(char c) {
    if (!Peek(c)) return false;
    ++p_;
    return true;
  }
  bool AtEnd() {
    Ws();
    return p_ == end_;
  }
  // A string without escapes (those go to the general decoder).
  bool Str(std::string_view* out) { return Eat('"') && StrTail(out); }
  bool Null() {
    Ws();
    if (end_ - p_ < 4 || std::string_view(p_, 4) != "null") return false;
    p_ += 4;
    return true;
  }
  bool Int(int64_t* out) {
    Ws();
    auto [ptr, ec] = std::from_chars(p_, end_, *out);
    if (ec != std::errc() || ptr == p_) return false;
    // 5.0 or 5e1 is not an integer for Go's decoder either: leave it to the general path.
    if (ptr < end_ && (*ptr == '.' || *ptr == 'e' || *ptr == 'E')) return false;
    p_ = ptr;
    return true;
  }
  // Skips one value of any kind (for the "Pod" object), strings with escapes included.
  bool SkipValue() {
    Ws();
    if (p_ == end_) return false;
    if (*p_ == '"') {
      for (++p_; p_ < end_ && *p_ != '"'; ++p_)
        if (*p_ == '\\') ++p_;
      if (p_ >= end_) return false;
      ++p_;
      return true;
    }
    if (*p_ == '{' || *p_ == '[') {
      int depth = 0;
      while (p_ < end_) {
        const char c = *p_;
        if (c == '"') {
          if (!SkipValue()) return false;
          continue;
        }
        ++p_;
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) return true;
      }
      return false;
    }
    while (p_ < end_ && *p_ != ',' && *p_ != '}' && *p_ != ']' && !std::isspace(*p_)) ++p_;
    return true;
  }
  const char* pos() const { return p_; }
  void Rewind(const char* to) { p_ = to; }
  // `s` exactly at the cursor, no whitespace before it.
  bool Lit(std::string_view s) {
    if (static_cast<size_t>(end_ - p_) < s.size() || std::memcmp(p_, s.data(), s.size()) != 0)
      return false;
    p_ += s.size();
    return true;
  }
  // The rest of a string whose opening quote was read, without escapes.
  bool StrTail(std::string_view* out) {
    const char* start = p_;
    while (p_ < end_ && *p_ != '"') {
      if (*p_ == '\\' || static_cast<unsigned char>(*p_) < 0x20) return false;
      ++p_;
    }
    if (p_ == end_) return false;
    *out = std::string_view(start, p_ - start);
    ++p_;
    return true;
  }

 private:
  const char* p_;
  const char* end_;
};

// Field names match in any letter case, as Go's decoder does; they usually come exactly as
// written, which is checked first (a case-folding comparison per key of a 500-entry list costs).
bool KeyIs(std::string_view key, std::string_view want) {
  return key == want || EqualsIgnoreCase(key, want);
}

// null, or ["a", "b", ...] of plain strings.
bool NameList(Cursor& c, std::optional<std::vector<std::string>>* out) {
  if (c.Null()) return true;
  if (!c.Eat('[')) return false;
  out->emplace();
  if (c.Eat(']')) return true;
  do {
    std::string_view s;
    if (!c.Str(&s)) return false;
    (*out)->emplace_back(s);
  } while (c.Eat(','));
  return c.Eat(']');
}

// null, or {"node": "reason", ...}.
bool FailedMap(Cursor& c, FailedNodesMap* out) {
  if (c.Null()) return true;
  if (!c.Eat('{')) return false;
  if (c.Eat('}')) return true;
  do {
    std::string_view k, v;
    if (!c.Str(&k) || !c.Eat(':')) return false;
    if (!c.Null()) {
      if (!c.Str(&v)) return false;
    }
    (*out)[std::string(k)] = std::string(v);
  } while (c.Eat(','));
  return c.Eat('}');
}

// {"Host":"name","Score":n} exactly as encoders write it (no spaces, this field order): read
// without looking at keys one by one. Anything else leaves the cursor where it was.
bool CompactHostPriority(Cursor& c, HostPriority* h) {
  const char* start = c.pos();
  std::string_view host;
  if (c.Lit("{\"Host\":\"") && c.StrTail(&host) && c.Lit(",\"Score\":") && c.Int(&h->score) &&
      c.Lit("}")) {
    h->host.assign(host);
    return true;
  }
  c.Rewind(start);
  h->score = 0;
  return false;
}

}  // namespace

std::optional<HostPriorityList> HostPriorities(std::string_view text) {
  Cursor c(text);
  HostPriorityList out;
  out.reserve(text.size() / 24);  // the compact form takes 24 bytes or more per entry
  if (c.Null()) return c.AtEnd() ? std::optional(out) : std::nullopt;
  if (!c.Eat('[')) return std::nullopt;
  if (!c.Eat(']')) {
    do {
      HostPriority h;
      c.Ws();
      if (CompactHostPriority(c, &h)) {
        out.push_back(std::move(h));
        continue;
      }
      if (!c.Eat('{')) return std::nullopt;
      if (!c.Eat('}')) {
        do {
          std::string_view key;
          if (!c.Str(&key) || !c.Eat(':')) return std::nullopt;
          if (KeyIs(key, "Host")) {
            std::string_view host;
            if (!c.Null()) {
              if (!c.Str(&host)) return std::nullopt;
              h.host = std::string(host);
            }
          } else if (KeyIs(key, "Score")) {
            if (!c.Null() && !c.Int(&h.score)) return std::nullopt;
          } else {
            return std::nullopt;
          }
        } while (c.Eat(','));
        if (!c.Eat('}')) return std::nullopt;
      }
      out.push_back(std::move(h));
    } while (c.Eat(','));
    if (!c.Eat(']')) return std::nullopt;
  }
  if (!c.AtEnd()) return std::nullopt;
  return out;
}

namespace {

// {"metadata":{"name":"n",...},...}: the name; other fields skipped.
bool ItemName(Cursor& c, std::string* name) {
  if (!c.Eat('{')) return false;
  bool named = false;
  if (!c.Eat('}')) {
    do {
      std::string_view key;
      if (!c.Str(&key) || !c.Eat(':')) return false;
      // Kubernetes object fields: matched exactly, anything else is left to the general decoder.
      if (key == "metadata") {
        if (named) return false;  // a repeated field: the general decoder decides
        if (!c.Eat('{')) return false;
        if (!c.Eat('}')) {
          do {
            std::string_view meta_key;
            if (!c.Str(&meta_key) || !c.Eat(':')) return false;
            std::string_view value;
            if (meta_key == "name") {
              if (!c.Str(&value)) return false;
              name->assign(value);
              named = true;
            } else if (!c.SkipValue()) {
              return false;
            }
          } while (c.Eat(','));
          if (!c.Eat('}')) return false;
        }
      } else if (!c.SkipValue()) {
        return false;
      }
    } while (c.Eat(','));
    if (!c.Eat('}')) return false;
  }
  return named;
}

// "Nodes" of a filter answer: null (`item_names` not given) or a NodeList whose items' names go
// to `item_names`.
bool NodesField(Cursor& c, std::vector<std::string>* item_names, bool* have_items) {
  if (c.Null()) return true;
  if (!item_names || !c.Eat('{')) return false;
  if (c.Eat('}')) return true;
  do {
    std::string_view key;
    if (!c.Str(&key) || !c.Eat(':')) return false;
    if (key == "items") {
      if (c.Null()) continue;
      if (!c.Eat('[')) return false;
      *have_items = true;
      if (c.Eat(']')) continue;
      do {
        if (!ItemName(c, &item_names->emplace_back())) return false;
      } while (c.Eat(','));
      if (!c.Eat(']')) return false;
    } else if (key == "metadata" || key == "kind" || key == "apiVersion") {
      if (!c.SkipValue()) return false;
    } else {
      return false;
    }
  } while (c.Eat(','));
  return c.Eat('}');
}

std::optional<ExtenderFilterResult> FilterResult(std::string_view text,
                                                 std::vector<std::string>* item_names) {
  Cursor c(text);
  ExtenderFilterResult out;
  bool have_items = false;
  if (!c.Eat('{')) return std::nullopt;
  if (!c.Eat('}')) {
    do {
      std::string_view key;
      if (!c.Str(&key) || !c.Eat(':')) return std::nullopt;
      if (KeyIs(key, "NodeNames")) {
        if (!NameList(c, &out.node_names)) return std::nullopt;
      } else if (KeyIs(key, "FailedNodes")) {
        if (!FailedMap(c, &out.failed_nodes)) return std::nullopt;
      } else if (KeyIs(key, "FailedAndUnresolvableNodes")) {
        if (!FailedMap(c, &out.failed_and_unresolvable_nodes)) return std::nullopt;
      } else if (KeyIs(key, "Error")) {
        std::string_view e;
        if (!c.Null()) {
          if (!c.Str(&e)) return std::nullopt;
          out.error = std::string(e);
        }
      } else if (KeyIs(key, "Nodes")) {
        if (!NodesField(c, item_names, &have_items)) return std::nullopt;
      } else {
        return std::nullopt;
      }
    } while (c.Eat(','));
    if (!c.Eat('}')) return std::nullopt;
  }
  if (!c.AtEnd()) return std::nullopt;
  if (item_names && !have_items) return std::nullopt;
  return out;
}

}  // namespace

std::optional<ExtenderFilterResult> FilterResultWithNames(std::string_view text) {
  return FilterResult(text, nullptr);
}

std::optional<ExtenderFilterResult> FilterResultWithNodeItems(
    std::string_view text, std::vector<std::string>* item_names) {
  item_names->clear();
  return FilterResult(text, item_names);
}

namespace {

// The raw text of the object at the cursor.
bool RawObject(Cursor& c, std::string_view* raw) {
  if (!c.Peek('{')) return false;
  const char* start = c.pos();
  if (!c.SkipValue()) return false;
  *raw = std::string_view(start, c.pos() - start);
  return true;
}

// The value of "Nodes" in arguments: null, or a NodeList whose items' raw texts go to `items`.
bool NodeItems(Cursor& c, std::optional<std::vector<std::string_view>>* items) {
  if (c.Null()) return true;
  if (!c.Eat('{')) return false;
  if (c.Eat('}')) return false;  // no items: the general decoder decides
  do {
    std::string_view key;
    if (!c.Str(&key) || !c.Eat(':')) return false;
    if (KeyIs(key, "items")) {
      if (!c.Eat('[')) return false;
      items->emplace();
      if (c.Eat(']')) continue;
      do {
        std::string_view item;
        if (!RawObject(c, &item)) return false;
        (*items)->push_back(item);
      } while (c.Eat(','));
      if (!c.Eat(']')) return false;
    } else if (KeyIs(key, "metadata") || KeyIs(key, "kind") || KeyIs(key, "apiVersion")) {
      if (!c.SkipValue()) return false;
    } else {
      return false;
    }
  } while (c.Eat(','));
  return c.Eat('}') && items->has_value();
}

}  // namespace

std::optional<ArgsParts> Args(std::string_view text) {
  Cursor c(text);
  ArgsParts out;
  if (!c.Eat('{')) return std::nullopt;
  if (!c.Eat('}')) {
    do {
      std::string_view key;
      if (!c.Str(&key) || !c.Eat(':')) return std::nullopt;
      if (KeyIs(key, "Pod")) {
        if (!RawObject(c, &out.pod_json)) return std::nullopt;
      } else if (KeyIs(key, "NodeNames")) {
        if (!NameList(c, &out.node_names)) return std::nullopt;
      } else if (KeyIs(key, "Nodes")) {
        if (!NodeItems(c, &out.node_items)) return std::nullopt;
      } else {
        return std::nullopt;
      }
    } while (c.Eat(','));
    if (!c.Eat('}')) return std::nullopt;
  }
  // Both forms at once is for the general decoder to settle.
  if (!c.AtEnd() || out.pod_json.empty() || (out.node_names && out.node_items)) return std::nullopt;
  return out;
}

}  // namespace berth::extender::v1::scan
