// Helpers shared by the configuration loader and the plugin args decoders: strict field-by-field
// reading of JSON objects with YAML-path error messages, Go duration strings, and the
// Kubernetes name rules the configuration validates against.
//
// Messages follow one style, "<path>: <problem>", where <problem> is one of
//   unknown field | expected <type> | required value[: detail] | invalid value <v>: <detail] |
//   unsupported value "<v>": supported values: "<a>", "<b>" | duplicate value <v> |
//   forbidden: <detail>
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"

namespace berth::config::internal {

// Records the first problem found while decoding or validating; later problems are dropped so
// the reported error is the earliest one (decoding before validation, document order within).
class Problems {
 public:
  void Add(std::string_view path, std::string_view problem);
  // Adds an already formatted "<path>: <problem>" message (e.g. from another decoder).
  void AddMessage(std::string message);
  bool ok() const { return !first_.has_value(); }
  // The first problem; only meaningful when !ok().
  Error error() const { return Error{first_.value_or("")}; }

 private:
  std::optional<std::string> first_;
};

// "a" + "b" -> "a.b"; an empty parent yields "b".
std::string ChildPath(std::string_view parent, std::string_view field);
// "a" + 3 -> "a[3]".
std::string IndexPath(std::string_view parent, size_t index);

// Quotes a string for messages: "value".
std::string Quote(std::string_view s);
// `unsupported value "<v>": supported values: "<a>", "<b>"`.
std::string Unsupported(std::string_view value, std::initializer_list<std::string_view> supported);

// A JSON object read key by key. A missing or null value reads as an empty object; any other
// non-object is a problem. Keys outside `known` are reported as unknown fields when the reader
// is constructed (strict decoding). Accessors return nullopt for absent or null keys and for
// values of the wrong type (after recording the problem).
class Fields {
 public:
  Fields(const nlohmann::json* value, std::string path, Problems& problems,
         std::initializer_list<std::string_view> known);

  const std::string& path() const { return path_; }
  std::string PathOf(std::string_view key) const { return ChildPath(path_, key); }
  Problems& problems() { return problems_; }
  // Whether the key is present with a non-null value.
  bool Has(std::string_view key) const { return Get(key) != nullptr; }
  // The raw value, or null when absent or JSON null.
  const nlohmann::json* Get(std::string_view key) const;

  std::optional<std::string> String(std::string_view key);
  std::optional<bool> Bool(std::string_view key);
  std::optional<int64_t> Int64(std::string_view key);
  std::optional<int32_t> Int32(std::string_view key);
  std::optional<double> Number(std::string_view key);
  // A Go duration string ("15s", "1m30s", "500ms"), in milliseconds.
  std::optional<int64_t> DurationMs(std::string_view key);
  // A base64 string (Go []byte), returned as written.
  std::optional<std::string> Base64(std::string_view key);
  // Elements of a list; absent/null yields nullopt, a non-list is a problem.
  std::optional<std::vector<const nlohmann::json*>> List(std::string_view key);
  std::optional<std::vector<std::string>> StringList(std::string_view key);

 private:
  const nlohmann::json* object_ = nullptr;
  std::string path_;
  Problems& problems_;
};

// Reads a JSON value as the given type, recording a problem at `path` on mismatch.
std::optional<std::string> ReadString(const nlohmann::json& v, std::string_view path,
                                      Problems& problems);
std::optional<int64_t> ReadInt(const nlohmann::json& v, std::string_view path, int64_t min,
                               int64_t max, Problems& problems);

// Go's time.ParseDuration, in nanoseconds; nullopt when malformed or out of range.
std::optional<int64_t> ParseGoDurationNs(std::string_view text);
// Go's time.Duration.String() for a whole number of milliseconds ("15s", "1m30s", "500ms",
// "0s").
std::string FormatGoDurationMs(int64_t ms);

// Kubernetes name rules. Each returns the problem text, or an empty string when valid.
// IsQualifiedName (label keys, resource names): [prefix/]name.
std::string QualifiedNameProblem(std::string_view name);
// IsValidLabelValue.
std::string LabelValueProblem(std::string_view value);
// IsExtendedResourceName: a qualified name with a domain prefix outside kubernetes.io.
bool IsExtendedResourceName(std::string_view name);
// Standard base64 with padding (line breaks ignored), as Go decodes []byte from JSON.
bool IsValidBase64(std::string_view s);

}  // namespace berth::config::internal
