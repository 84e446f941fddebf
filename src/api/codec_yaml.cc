// YAML and JSON text -> nlohmann::json documents.
//
// YAML is read through yaml-cpp's event interface straight into JSON values (no intermediate
// node tree). Plain scalars are typed the way Kubernetes tooling does (null, booleans, numbers),
// with one refinement: a plain scalar becomes a number only if the number prints back as the
// same text, so `version: 1.10` or `id: 007` stay strings instead of silently changing.

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include <charconv>
#include <cmath>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "api/codec_internal.h"
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

// Types a plain (unquoted) scalar.
json ResolvePlainScalar(const std::string& s) {
  if (IsNullText(s)) return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (!LooksNumeric(s)) return s;
  const char* first = s.data();
  const char* last = s.data() + s.size();
  int64_t i = 0;
  if (auto [p, ec] = std::from_chars(first, last, i); ec == std::errc() && p == last) {
    if (std::to_string(i) == s) return i;
    return s;
  }
  uint64_t u = 0;
  if (auto [p, ec] = std::from_chars(first, last, u); ec == std::errc() && p == last) {
    if (std::to_string(u) == s) return u;
    return s;
  }
  double d = 0;
  if (auto [p, ec] = std::from_chars(first, last, d);
      ec == std::errc() && p == last && std::isfinite(d)) {
    json number = d;
    if (number.dump() == s) return number;
  }
  return s;
}

namespace {

struct ParseFailure {
  std::string message;
  int line = 0;
};

class JsonBuilder : public YAML::EventHandler {
 public:
  std::vector<SourceDocument>& docs() { return docs_; }
  const std::optional<ParseFailure>& failure() const { return failure_; }

  void OnDocumentStart(const YAML::Mark&) override {
    ++doc_index_;
    stack_.clear();
    anchors_.clear();
    root_.reset();
  }
  void OnDocumentEnd() override {
    if (root_ && !root_->is_null()) docs_.push_back({std::move(*root_), doc_index_});
    root_.reset();
  }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    if (ExpectingKey()) {
      Key(mark, "");
      return;
    }
    Complete(nullptr, anchor, mark);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    auto it = anchors_.find(anchor);
    json v = it == anchors_.end() ? json() : it->second;
    if (ExpectingKey()) {
      Key(mark, v.is_string() ? v.get<std::string>() : v.dump());
      return;
    }
    Complete(std::move(v), YAML::NullAnchor, mark);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    if (ExpectingKey()) {
      Key(mark, value);
      if (anchor != YAML::NullAnchor) anchors_[anchor] = value;
      return;
    }
    const bool plain = tag == "?" || tag == "tag:yaml.org,2002:int" ||
                       tag == "tag:yaml.org,2002:float" || tag == "tag:yaml.org,2002:bool" ||
                       tag == "tag:yaml.org,2002:null";
    Complete(plain ? ResolvePlainScalar(value) : json(value), anchor, mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    if (ExpectingKey()) {
      Fail(mark, "complex mapping keys are not supported");
      // Keep the event stream balanced so parsing can finish.
    }
    stack_.push_back(Frame{json::array(), anchor, false, {}, false, {}});
  }
  void OnSequenceEnd() override { Pop(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value) override {
    if (ExpectingKey()) Fail(mark, "complex mapping keys are not supported");
    stack_.push_back(Frame{json::object(), anchor, true, {}, false, {}});
  }
  void OnMapEnd() override {
    Frame& f = stack_.back();
    // Merged ("<<") entries never override keys written explicitly in the map.
    for (auto& [k, v] : f.merged) {
      if (!f.value.contains(k)) f.value[k] = std::move(v);
    }
    Pop();
  }

 private:
  struct Frame {
    json value;
    YAML::anchor_t anchor;
    bool is_map;
    std::string key;
    bool have_key;
    std::vector<std::pair<std::string, json>> merged;
  };

  bool ExpectingKey() const {
    return !stack_.empty() && stack_.back().is_map && !stack_.back().have_key;
  }

  void Key(const YAML::Mark&, std::string k) {
    Frame& f = stack_.back();
    f.key = std::move(k);
    f.have_key = true;
  }

  void Pop() {
    Frame f = std::move(stack_.back());
    stack_.pop_back();
    Complete(std::move(f.value), f.anchor, YAML::Mark());
  }

  void Complete(json v, YAML::anchor_t anchor, const YAML::Mark& mark) {
    if (anchor != YAML::NullAnchor) anchors_[anchor] = v;
    if (stack_.empty()) {
      root_ = std::move(v);
      return;
    }
    Frame& f = stack_.back();
    if (!f.is_map) {
      f.value.push_back(std::move(v));
      return;
    }
    f.have_key = false;
    if (f.key == "<<" && (v.is_object() || v.is_array())) {
      Merge(f, std::move(v), mark);
      return;
    }
    f.value[f.key] = std::move(v);
  }

  void Merge(Frame& f, json v, const YAML::Mark& mark) {
    auto add = [&](json& m) {
      if (!m.is_object()) {
        Fail(mark, "merge key \"<<\" needs a map or a list of maps");
        return;
      }
      for (auto it = m.begin(); it != m.end(); ++it) {
        bool seen = false;
        for (const auto& e : f.merged) seen = seen || e.first == it.key();
        if (!seen) f.merged.emplace_back(it.key(), std::move(it.value()));
      }
    };
    if (v.is_object()) {
      add(v);
    } else {
      for (json& m : v) add(m);
    }
  }

  void Fail(const YAML::Mark& mark, std::string msg) {
    if (!failure_) failure_ = ParseFailure{std::move(msg), mark.line + 1};
  }

  std::vector<SourceDocument> docs_;
  std::vector<Frame> stack_;
  std::map<YAML::anchor_t, json> anchors_;
  std::optional<json> root_;
  std::optional<ParseFailure> failure_;
  int doc_index_ = 0;
};

bool StartsLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

}  // namespace

Result<std::vector<SourceDocument>> ParseSourceDocuments(std::string_view text,
                                                         std::string_view source) {
  // JSON documents (kubectl -o json) take the much faster JSON parser; anything it rejects,
  // such as several concatenated documents, goes through YAML, which accepts JSON too.
  if (StartsLikeJson(text)) {
    json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded()) {
      std::vector<SourceDocument> out;
      if (!doc.is_null()) out.push_back({std::move(doc), 1});
      return out;
    }
  }
  // Tabs and byte-order marks are rare in manifests and have subtle rules; yaml-cpp gets those.
  const bool simple =
      text.find('\t') == std::string_view::npos && text.substr(0, 3) != "\xEF\xBB\xBF";
  if (simple) {
    if (auto fast = FastParseYaml(text)) return std::move(*fast);
  }
  return ParseWithYamlCpp(text, source);
}

Result<std::vector<SourceDocument>> ParseWithYamlCpp(std::string_view text,
                                                     std::string_view source) {
  JsonBuilder builder;
  try {
    std::istringstream in{std::string(text)};
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
      if (builder.failure()) break;
    }
  } catch (const YAML::Exception& e) {
    std::string msg(source);
    msg += ": yaml: line " + std::to_string(e.mark.line + 1) + ": " + e.msg;
    return Error{std::move(msg)};
  }
  if (const auto& f = builder.failure()) {
    return Error{std::string(source) + ": yaml: line " + std::to_string(f->line) + ": " +
                 f->message};
  }
  return std::move(builder.docs());
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
