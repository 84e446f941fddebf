// Block-style YAML rendering of configuration documents (`berth config print-defaults`,
// `berth config convert`).
#include <fmt/format.h>
#include <yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "config/load.h"

namespace berth::config {
namespace {

bool LooksLikeNonString(const std::string& s) {
  if (s.empty()) return true;
  static const std::set<std::string, std::less<>> kWords = {
      "y",    "Y",    "yes",   "Yes",   "YES",   "n",     "N",     "no",   "No",
      "NO",   "true", "True",  "TRUE",  "false", "False", "FALSE", "on",   "On",
      "ON",   "off",  "Off",   "OFF",   "null",  "Null",  "NULL",  "~",    ".inf",
      ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan",  ".NaN", ".NAN"};
  if (kWords.contains(s)) return true;
  // Anything number-like ("10", "1e3", "0x1f", "1_000", "-5", "1:30") is quoted.
  char c = s[0];
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
    bool all_numberish = std::all_of(s.begin(), s.end(), [](char ch) {
      return (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' ||
             ch == 'E' || ch == 'x' || ch == 'X' || ch == 'o' || ch == '_' || ch == ':' ||
             (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
    });
    if (all_numberish) return true;
  }
  return false;
}

// libyaml's emitter, fed events for one document, writing into a string.
class Emitter {
 public:
  Emitter() {
    ok_ = yaml_emitter_initialize(&emitter_) != 0;
    if (!ok_) return;
    yaml_emitter_set_output(&emitter_, &Emitter::Write, &text_);
    yaml_emitter_set_indent(&emitter_, 2);
    yaml_emitter_set_width(&emitter_, -1);  // never fold long scalars
    yaml_emitter_set_unicode(&emitter_, 1);
  }
  ~Emitter() {
    if (ok_) yaml_emitter_delete(&emitter_);
  }
  Emitter(const Emitter&) = delete;
  Emitter& operator=(const Emitter&) = delete;

  // Returns false once the emitter failed (it keeps failing afterwards).
  bool Emit(yaml_event_t& event) {
    ok_ = ok_ && yaml_emitter_emit(&emitter_, &event) != 0;
    return ok_;
  }
  bool ok() const { return ok_; }
  std::string& text() { return text_; }

 private:
  static int Write(void* data, unsigned char* buffer, size_t size) {
    static_cast<std::string*>(data)->append(reinterpret_cast<const char*>(buffer), size);
    return 1;
  }

  yaml_emitter_t emitter_{};
  std::string text_;
  bool ok_ = false;
};

bool Scalar(Emitter& out, std::string_view value, yaml_scalar_style_t style) {
  yaml_event_t e;
  yaml_scalar_event_initialize(&e, nullptr, nullptr,
                               reinterpret_cast<yaml_char_t*>(const_cast<char*>(value.data())),
                               static_cast<int>(value.size()), 1, 1, style);
  return out.Emit(e);
}

// Strings that would read back as another type are double-quoted; the rest are plain where
// YAML allows it (the emitter quotes what it must).
bool String(Emitter& out, const std::string& s) {
  return Scalar(out, s,
                LooksLikeNonString(s) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_ANY_SCALAR_STYLE);
}

bool EmitYaml(Emitter& out, const nlohmann::json& v) {
  yaml_event_t e;
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      // Empty collections are written `{}` / `[]`; the others in block style.
      const auto style = v.empty() ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE;
      yaml_mapping_start_event_initialize(&e, nullptr, nullptr, 1, style);
      if (!out.Emit(e)) return false;
      for (const auto& [key, value] : v.items()) {
        if (!String(out, key) || !EmitYaml(out, value)) return false;
      }
      yaml_mapping_end_event_initialize(&e);
      return out.Emit(e);
    }
    case nlohmann::json::value_t::array: {
      const auto style = v.empty() ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE;
      yaml_sequence_start_event_initialize(&e, nullptr, nullptr, 1, style);
      if (!out.Emit(e)) return false;
      for (const auto& item : v) {
        if (!EmitYaml(out, item)) return false;
      }
      yaml_sequence_end_event_initialize(&e);
      return out.Emit(e);
    }
    case nlohmann::json::value_t::string:
      return String(out, v.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
      return Scalar(out, v.get<bool>() ? "true" : "false", YAML_PLAIN_SCALAR_STYLE);
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      // JSON's shortest round-trip form is also a valid YAML number.
      return Scalar(out, v.dump(), YAML_PLAIN_SCALAR_STYLE);
    default:
      return Scalar(out, "null", YAML_PLAIN_SCALAR_STYLE);
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::json& doc) {
  Emitter out;
  yaml_event_t e;
  yaml_stream_start_event_initialize(&e, YAML_UTF8_ENCODING);
  bool ok = out.Emit(e);
  yaml_document_start_event_initialize(&e, nullptr, nullptr, nullptr, /*implicit=*/1);
  ok = ok && out.Emit(e) && EmitYaml(out, doc);
  yaml_document_end_event_initialize(&e, /*implicit=*/1);
  ok = ok && out.Emit(e);
  yaml_stream_end_event_initialize(&e);
  ok = ok && out.Emit(e);
  // The emitter fails only on events it cannot write, which a JSON document never produces.
  if (!ok) return "# error: the document could not be written as YAML\n";
  std::string text = std::move(out.text());
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

std::string AnnotatedYaml(std::string_view what, const std::vector<std::string>& notes,
                          const nlohmann::json& doc) {
  std::string out = fmt::format("# Translated from {}:\n", what);
  for (const auto& n : notes) out += "#   " + n + "\n";
  return out + JsonToYaml(doc);
}

}  // namespace berth::config
