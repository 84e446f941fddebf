// A fast reader for the YAML that Kubernetes manifests are written in: block mappings and
// sequences, flow collections, plain/quoted scalars, literal and folded block scalars, comments
// and multi-document streams. yaml-cpp is several times slower on large clusters, so inputs are
// read here first; anything outside this subset (anchors, tags, multi-line plain or quoted
// scalars, complex keys, odd indentation, or an outright syntax error) makes the reader give up
// and the caller re-reads the whole input with yaml-cpp, which also produces the error text.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec_internal.h"

namespace berth::codec {
namespace {

using nlohmann::json;

constexpr int kMaxDepth = 128;

struct GiveUp {};

bool IsSpace(char c) { return c == ' ' || c == '\t'; }

class FastYaml {
 public:
  explicit FastYaml(std::string_view s) : s_(s) {}

  bool Parse(std::vector<SourceDocument>& out) {
    int doc_index = 0;
    bool in_explicit_doc = false;
    while (true) {
      SkipBlankLines();
      if (pos_ >= s_.size()) {
        break;
      }
      if (AtDocumentMarker("---")) {
        pos_ += 3;
        if (!RestOfLineEmpty()) return false;
        NextLine();
        ++doc_index;
        in_explicit_doc = true;
        // An explicit document may be empty.
        SkipBlankLines();
        if (pos_ >= s_.size() || AtDocumentMarker("---")) continue;
      } else if (AtDocumentMarker("...")) {
        return false;
      } else if (!in_explicit_doc) {
        ++doc_index;
        in_explicit_doc = true;
      }
      json doc = ParseBlockNode(-1, 0);
      SkipBlankLines();
      if (pos_ < s_.size() && !AtDocumentMarker("---")) return false;  // stray content
      if (!doc.is_null()) out.push_back({std::move(doc), doc_index});
      in_explicit_doc = false;
    }
    return true;
  }

  bool Run(std::vector<SourceDocument>& out) {
    try {
      return Parse(out);
    } catch (const GiveUp&) {
      return false;
    }
  }

 private:
  [[noreturn]] static void Fail() { throw GiveUp{}; }

  // ---------------------------------------------------------------- lines and positions

  size_t LineEnd(size_t from) const {
    size_t e = s_.find('\n', from);
    return e == std::string_view::npos ? s_.size() : e;
  }

  void NextLine() {
    size_t e = LineEnd(pos_);
    pos_ = e < s_.size() ? e + 1 : e;
    line_start_ = pos_;
  }

  int Column() const { return static_cast<int>(pos_ - line_start_); }

  bool RestOfLineEmpty() const {
    size_t p = pos_;
    while (p < s_.size() && s_[p] == ' ') ++p;
    if (p < s_.size() && s_[p] == '\t') {
      while (p < s_.size() && IsSpace(s_[p])) ++p;
    }
    if (p >= s_.size() || s_[p] == '\n' || s_[p] == '#') return true;
    if (s_[p] == '\r' && (p + 1 >= s_.size() || s_[p + 1] == '\n')) return true;
    return false;
  }

  bool AtDocumentMarker(std::string_view m) const {
    if (pos_ != line_start_ || s_.substr(pos_, 3) != m) return false;
    size_t p = pos_ + 3;
    return p >= s_.size() || s_[p] == ' ' || s_[p] == '\n' || s_[p] == '\r' || s_[p] == '\t';
  }

  // Skips empty and comment-only lines; leaves pos_ at the first content character of the next
  // content line, or at a line start when that line is a document marker.
  void SkipBlankLines() {
    while (pos_ < s_.size()) {
      if (pos_ == line_start_ && (AtDocumentMarker("---") || AtDocumentMarker("..."))) return;
      size_t p = pos_;
      while (p < s_.size() && s_[p] == ' ') ++p;
      if (p < s_.size() && s_[p] == '\t') {
        // Tabs are fine on blank lines but never as indentation.
        size_t q = p;
        while (q < s_.size() && IsSpace(s_[q])) ++q;
        if (q < s_.size() && s_[q] != '\n' && s_[q] != '\r' && s_[q] != '#') Fail();
        p = q;
      }
      if (p >= s_.size()) {
        pos_ = p;
        return;
      }
      if (s_[p] == '\n' || s_[p] == '#' || s_[p] == '\r') {
        pos_ = p;
        NextLine();
        continue;
      }
      pos_ = p;
      return;
    }
  }

  // True when content (not a document marker) follows; `indent` is its column.
  bool NextContent(int& indent) {
    SkipBlankLines();
    if (pos_ >= s_.size()) return false;
    if (pos_ == line_start_ && (AtDocumentMarker("---") || AtDocumentMarker("..."))) return false;
    indent = Column();
    return true;
  }

  void SkipSpaces() {
    while (pos_ < s_.size() && s_[pos_] == ' ') ++pos_;
  }

  // After a value: only spaces and a comment may follow on the line.
  void EndOfValueLine() {
    if (after_block_scalar_) {
      after_block_scalar_ = false;
      return;
    }
    SkipSpaces();
    if (pos_ >= s_.size()) return;
    char c = s_[pos_];
    if (c == '#' || c == '\n' || c == '\r') {
      NextLine();
      return;
    }
    if (c == '\t' && RestOfLineEmpty()) {
      NextLine();
      return;
    }
    Fail();
  }

  bool SeqEntryHere() const {
    if (pos_ >= s_.size() || s_[pos_] != '-') return false;
    size_t p = pos_ + 1;
    return p >= s_.size() || s_[p] == ' ' || s_[p] == '\n' || s_[p] == '\r';
  }

  // ---------------------------------------------------------------- block structure

  // Parses the node that starts at the next content line, which must be indented more than
  // `parent_indent`. A missing node is null.
  json ParseBlockNode(int parent_indent, int depth) {
    if (depth > kMaxDepth) Fail();
    int indent = 0;
    if (!NextContent(indent) || indent <= parent_indent) return nullptr;
    return ParseNodeAt(indent, depth);
  }

  json ParseNodeAt(int indent, int depth) {
    if (depth > kMaxDepth) Fail();
    if (SeqEntryHere()) return ParseBlockSequence(indent, depth);
    if (LineIsMappingKey()) return ParseBlockMapping(indent, depth);
    json v = ParseInlineValue(indent - 1, depth);
    EndOfValueLine();
    return v;
  }

  // Whether the content at pos_ begins "key:" (plain or quoted key).
  bool LineIsMappingKey() const {
    size_t p = pos_;
    if (p >= s_.size()) return false;
    char c = s_[p];
    if (c == '"' || c == '\'') {
      size_t q = p + 1;
      while (q < s_.size() && s_[q] != '\n') {
        if (c == '"' && s_[q] == '\\') {
          q += 2;
          continue;
        }
        if (s_[q] == c) {
          if (c == '\'' && q + 1 < s_.size() && s_[q + 1] == '\'') {
            q += 2;
            continue;
          }
          break;
        }
        ++q;
      }
      if (q >= s_.size() || s_[q] != c) return false;
      ++q;
      while (q < s_.size() && s_[q] == ' ') ++q;
      return q < s_.size() && s_[q] == ':' && IsKeyColon(q);
    }
    if (c == '[' || c == '{' || c == '#' || c == '|' || c == '>') return false;
    for (size_t q = p; q < s_.size() && s_[q] != '\n'; ++q) {
      if (s_[q] == '#' && q > p && IsSpace(s_[q - 1])) return false;
      if (s_[q] == ':' && IsKeyColon(q)) return true;
    }
    return false;
  }

  bool IsKeyColon(size_t q) const {
    size_t n = q + 1;
    return n >= s_.size() || s_[n] == ' ' || s_[n] == '\n' || s_[n] == '\r' || s_[n] == '\t';
  }

  std::string ParseKey() {
    char c = s_[pos_];
    std::string key;
    if (c == '"') {
      key = ParseDoubleQuoted();
    } else if (c == '\'') {
      key = ParseSingleQuoted();
    } else {
      if (c == '&' || c == '*' || c == '!' || c == '?' || c == '%' || c == '@' || c == '`' ||
          c == ',' || c == ']' || c == '}' || (c == '-' && SeqEntryHere())) {
        Fail();
      }
      size_t start = pos_;
      while (!(s_[pos_] == ':' && IsKeyColon(pos_))) ++pos_;
      size_t end = pos_;
      while (end > start && IsSpace(s_[end - 1])) --end;
      key.assign(s_.substr(start, end - start));
      if (key == "<<") Fail();  // merge keys need yaml-cpp's anchor handling
    }
    SkipSpaces();
    if (pos_ >= s_.size() || s_[pos_] != ':') Fail();
    ++pos_;
    return key;
  }

  json ParseBlockMapping(int indent, int depth) {
    json obj = json::object();
    while (true) {
      if (!LineIsMappingKey()) Fail();
      std::string key = ParseKey();
      json value;
      if (RestOfLineEmpty()) {
        NextLine();
        int next = 0;
        if (NextContent(next)) {
          if (next > indent) {
            value = ParseNodeAt(next, depth + 1);
          } else if (next == indent && SeqEntryHere()) {
            // A sequence may sit at its key's own indentation.
            value = ParseBlockSequence(indent, depth + 1);
          }
        }
      } else {
        SkipSpaces();
        value = ParseInlineValue(indent, depth + 1);
        EndOfValueLine();
      }
      obj[std::move(key)] = std::move(value);
      int next = 0;
      if (!NextContent(next) || next < indent) return obj;
      if (next > indent) Fail();
    }
  }

  json ParseBlockSequence(int indent, int depth) {
    json arr = json::array();
    while (true) {
      if (!SeqEntryHere()) Fail();
      ++pos_;
      if (RestOfLineEmpty()) {
        NextLine();
        arr.push_back(ParseBlockNode(indent, depth + 1));
      } else {
        SkipSpaces();
        // Compact notation: the entry's content starts mid-line at its own column.
        const int col = Column();
        if (SeqEntryHere()) Fail();  // "- - x"
        if (LineIsMappingKey()) {
          arr.push_back(ParseBlockMapping(col, depth + 1));
        } else {
          arr.push_back(ParseInlineValue(indent, depth + 1));
          EndOfValueLine();
        }
      }
      int next = 0;
      if (!NextContent(next) || next < indent) return arr;
      if (next > indent || !SeqEntryHere()) {
        // A sequence nested at a mapping key's indentation ends where the next key starts.
        if (next == indent && LineIsMappingKey()) return arr;
        Fail();
      }
    }
  }

  // A value starting mid-line: flow collection, quoted, block scalar or plain scalar.
  // `parent_indent` bounds block scalar content.
  json ParseInlineValue(int parent_indent, int depth) {
    if (pos_ >= s_.size()) return nullptr;
    char c = s_[pos_];
    switch (c) {
      case '{':
      case '[':
        return ParseFlow(depth);
      case '"':
        return ParseDoubleQuoted();
      case '\'':
        return ParseSingleQuoted();
      case '|':
      case '>':
        return ParseBlockScalar(parent_indent);
      case '&':
      case '*':
      case '!':
      case '%':
      case '@':
      case '`':
      case '?':
      case ',':
      case ']':
      case '}':
        Fail();
      case '#':
        return nullptr;
      default:
        break;
    }
    if (c == '-' && SeqEntryHere()) Fail();
    size_t start = pos_;
    size_t end = pos_;
    while (pos_ < s_.size()) {
      char d = s_[pos_];
      if (d == '\n' || d == '\r') break;
      if (d == '#' && pos_ > start && IsSpace(s_[pos_ - 1])) break;
      if (d == ':' && IsKeyColon(pos_)) Fail();  // "a: b: c" is not valid YAML
      if (!IsSpace(d)) end = pos_ + 1;
      ++pos_;
    }
    pos_ = end;
    std::string text(s_.substr(start, end - start));
    // A plain scalar continues on following lines indented deeper than its owner; multi-line
    // plain scalars are left to yaml-cpp.
    const size_t save_pos = pos_, save_line = line_start_;
    EndOfValueLine();
    int next = 0;
    const bool continued = NextContent(next) && next > parent_indent;
    pos_ = save_pos;
    line_start_ = save_line;
    if (continued) Fail();
    return ResolvePlainScalar(text);
  }

  // ---------------------------------------------------------------- scalars

  std::string ParseDoubleQuoted() {
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n' || s_[pos_] == '\r') Fail();  // multi-line
      char c = s_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= s_.size()) Fail();
      char e = s_[pos_++];
      switch (e) {
        case '"':
          out.push_back('"');
          break;
        case '\\':
          out.push_back('\\');
          break;
        case '/':
          out.push_back('/');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
        case '\t':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case '0':
          out.push_back('\0');
          break;
        case ' ':
          out.push_back(' ');
          break;
        case 'x':
          AppendUtf8(out, Hex(2));
          break;
        case 'u':
          AppendUtf8(out, Hex(4));
          break;
        case 'U':
          AppendUtf8(out, Hex(8));
          break;
        default:
          Fail();
      }
    }
  }

  uint32_t Hex(int n) {
    uint32_t v = 0;
    for (int i = 0; i < n; ++i) {
      if (pos_ >= s_.size()) Fail();
      char c = s_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= static_cast<uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        v |= static_cast<uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        v |= static_cast<uint32_t>(c - 'A' + 10);
      } else {
        Fail();
      }
    }
    return v;
  }

  static void AppendUtf8(std::string& out, uint32_t cp) {
    if (cp >= 0xD800 && cp <= 0xDFFF) Fail();  // surrogates: leave to yaml-cpp
    if (cp < 0x80) {
      out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x110000) {
      out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      Fail();
    }
  }

  std::string ParseSingleQuoted() {
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= s_.size() || s_[pos_] == '\n' || s_[pos_] == '\r') Fail();
      char c = s_[pos_++];
      if (c == '\'') {
        if (pos_ < s_.size() && s_[pos_] == '\'') {
          out.push_back('\'');
          ++pos_;
          continue;
        }
        return out;
      }
      out.push_back(c);
    }
  }

  // Literal (|) and folded (>) block scalars with chomping indicators. Folding is supported
  // only for runs of text lines at the content indentation.
  json ParseBlockScalar(int parent_indent) {
    const bool literal = s_[pos_] == '|';
    ++pos_;
    char chomp = 'c';
    if (pos_ < s_.size() && (s_[pos_] == '-' || s_[pos_] == '+')) chomp = s_[pos_++];
    if (!RestOfLineEmpty()) Fail();  // indentation indicators and odd headers
    NextLine();
    const int min_indent = parent_indent + 1;
    int content_indent = -1;
    std::vector<std::string_view> lines;  // indentation removed; empty view = blank line
    while (pos_ < s_.size()) {
      const size_t e = LineEnd(pos_);
      std::string_view line = s_.substr(pos_, e - pos_);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      size_t sp = 0;
      while (sp < line.size() && line[sp] == ' ') ++sp;
      if (sp == line.size()) {
        // Whitespace beyond the content indentation would be content: leave it to yaml-cpp.
        if (content_indent >= 0 && static_cast<int>(sp) > content_indent) Fail();
        lines.emplace_back();
      } else {
        if (content_indent < 0) {
          if (static_cast<int>(sp) < min_indent) break;
          content_indent = static_cast<int>(sp);
        }
        if (static_cast<int>(sp) < content_indent) break;
        lines.push_back(line.substr(static_cast<size_t>(content_indent)));
        if (lines.back().empty()) Fail();
      }
      pos_ = e < s_.size() ? e + 1 : e;
      line_start_ = pos_;
    }
    size_t n = lines.size();
    size_t trailing = 0;
    while (n > 0 && lines[n - 1].empty()) {
      --n;
      ++trailing;
    }
    std::string out;
    for (size_t i = 0; i < n; ++i) {
      if (literal) {
        out.append(lines[i]);
        out.push_back('\n');
        continue;
      }
      if (lines[i].empty() || lines[i][0] == ' ') Fail();
      if (i > 0) out.push_back(' ');
      out.append(lines[i]);
    }
    if (!literal && n > 0) out.push_back('\n');
    if (chomp == '-') {
      while (!out.empty() && out.back() == '\n') out.pop_back();
    } else if (chomp == '+') {
      out.append(trailing, '\n');
    }
    // Whole lines were consumed; the caller's end-of-line check has nothing left to skip.
    after_block_scalar_ = true;
    return out;
  }

  // ---------------------------------------------------------------- flow collections

  void SkipFlowSpace() {
    while (pos_ < s_.size()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') {
        ++pos_;
      } else if (c == '\n') {
        ++pos_;
        line_start_ = pos_;
      } else if (c == '#' &&
                 (pos_ == line_start_ || IsSpace(s_[pos_ - 1]) || s_[pos_ - 1] == '\n')) {
        size_t e = LineEnd(pos_);
        pos_ = e;
      } else {
        return;
      }
    }
  }

  json ParseFlow(int depth) {
    if (depth > kMaxDepth) Fail();
    const bool is_map = s_[pos_] == '{';
    const char close = is_map ? '}' : ']';
    ++pos_;
    json out = is_map ? json::object() : json::array();
    SkipFlowSpace();
    if (pos_ < s_.size() && s_[pos_] == close) {
      ++pos_;
      return out;
    }
    while (true) {
      SkipFlowSpace();
      if (pos_ >= s_.size()) Fail();
      if (is_map) {
        std::string key = FlowScalarText();
        SkipFlowSpace();
        json value;
        if (pos_ < s_.size() && s_[pos_] == ':') {
          ++pos_;
          SkipFlowSpace();
          if (pos_ < s_.size() && (s_[pos_] == ',' || s_[pos_] == '}')) {
            value = nullptr;
          } else {
            value = FlowNode(depth);
          }
        } else if (pos_ < s_.size() && (s_[pos_] == ',' || s_[pos_] == '}')) {
          value = nullptr;
        } else {
          Fail();
        }
        if (key == "<<") Fail();
        out[std::move(key)] = std::move(value);
      } else {
        out.push_back(FlowNode(depth));
        SkipFlowSpace();
        if (pos_ < s_.size() && s_[pos_] == ':') Fail();  // single-pair mappings
      }
      SkipFlowSpace();
      if (pos_ >= s_.size()) Fail();
      if (s_[pos_] == ',') {
        ++pos_;
        SkipFlowSpace();
        if (pos_ < s_.size() && s_[pos_] == close) {
          ++pos_;
          return out;
        }
        continue;
      }
      if (s_[pos_] == close) {
        ++pos_;
        return out;
      }
      Fail();
    }
  }

  json FlowNode(int depth) {
    char c = s_[pos_];
    if (c == '{' || c == '[') return ParseFlow(depth + 1);
    if (c == '"') return ParseDoubleQuoted();
    if (c == '\'') return ParseSingleQuoted();
    return ResolvePlainScalar(FlowScalarText());
  }

  std::string FlowScalarText() {
    char c = s_[pos_];
    if (c == '"') return ParseDoubleQuoted();
    if (c == '\'') return ParseSingleQuoted();
    if (c == '&' || c == '*' || c == '!' || c == '%' || c == '@' || c == '`' || c == '|' ||
        c == '>' || c == '{' || c == '[' || c == ',' || c == ']' || c == '}' || c == '#' ||
        (c == '?' && pos_ + 1 < s_.size() && IsSpace(s_[pos_ + 1]))) {
      Fail();
    }
    size_t start = pos_;
    size_t end = pos_;
    while (pos_ < s_.size()) {
      char d = s_[pos_];
      if (d == '\n' || d == '\r') break;
      if (d == ',' || d == ']' || d == '}' || d == '[' || d == '{') break;
      if (d == '#' && pos_ > start && IsSpace(s_[pos_ - 1])) break;
      if (d == ':') {
        size_t n = pos_ + 1;
        if (n >= s_.size() || s_[n] == ' ' || s_[n] == '\n' || s_[n] == '\r' || s_[n] == ',' ||
            s_[n] == ']' || s_[n] == '}' || s_[n] == '[' || s_[n] == '{') {
          break;
        }
      }
      if (!IsSpace(d)) end = pos_ + 1;
      ++pos_;
    }
    // A plain scalar continuing on the next line is outside the subset.
    if (pos_ < s_.size() && (s_[pos_] == '\n' || s_[pos_] == '\r')) {
      size_t p = pos_;
      while (p < s_.size() && (s_[p] == '\n' || s_[p] == '\r' || IsSpace(s_[p]))) ++p;
      if (p < s_.size() && s_[p] != ',' && s_[p] != ']' && s_[p] != '}' && s_[p] != ':' &&
          s_[p] != '#') {
        Fail();
      }
    }
    return std::string(s_.substr(start, end - start));
  }

  std::string_view s_;
  size_t pos_ = 0;
  size_t line_start_ = 0;
  bool after_block_scalar_ = false;
};

}  // namespace

std::optional<std::vector<SourceDocument>> FastParseYaml(std::string_view text) {
  std::vector<SourceDocument> out;
  FastYaml parser(text);
  if (!parser.Run(out)) return std::nullopt;
  return out;
}

}  // namespace berth::codec
