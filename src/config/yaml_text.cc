// Block-style YAML rendering of configuration documents (`berth config print-defaults`,
// `berth config convert`).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

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

void EmitYaml(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.items()) {
        out << YAML::Key;
        if (LooksLikeNonString(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        EmitYaml(out, value);
      }
      out << YAML::EndMap;
      return;
    case nlohmann::json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v) EmitYaml(out, item);
      out << YAML::EndSeq;
      return;
    case nlohmann::json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      if (LooksLikeNonString(s)) out << YAML::DoubleQuoted;
      out << s;
      return;
    }
    case nlohmann::json::value_t::boolean:
      out << v.get<bool>();
      return;
    case nlohmann::json::value_t::number_integer:
      out << v.get<int64_t>();
      return;
    case nlohmann::json::value_t::number_unsigned:
      out << v.get<uint64_t>();
      return;
    case nlohmann::json::value_t::number_float:
      // JSON's shortest round-trip form is also a valid YAML float.
      out << v.dump();
      return;
    default:
      out << YAML::Null;
      return;
  }
}

}  // namespace

std::string JsonToYaml(const nlohmann::json& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  EmitYaml(out, doc);
  std::string text = out.c_str();
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
