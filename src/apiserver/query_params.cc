#include "apiserver/query_params.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>

#include "apiserver/field_errors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

std::string_view TrimSpace(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// Go's strconv error text for `text` that did not parse as base-10 (`range`: it did, too big).
std::string ParseError(std::string_view func, std::string_view text, bool range) {
  return fmt::format("strconv.{}: parsing {}: {}", func,
                     Json(std::string(text)).dump(-1, ' ', false, Json::error_handler_t::replace),
                     range ? "value out of range" : "invalid syntax");
}

const char* OptionsKind(std::string_view method) {
  if (method == "POST") return "CreateOptions";
  if (method == "PUT") return "UpdateOptions";
  if (method == "PATCH") return "PatchOptions";
  if (method == "DELETE") return "DeleteOptions";
  return nullptr;
}

VoidResult CheckDryRun(const net::HttpRequest& req, const char* options_kind) {
  std::vector<std::string> values;
  bool bad = false;
  for (const auto& [k, v] : req.query) {
    if (k != "dryRun") continue;
    values.push_back(v);
    bad = bad || v != "All";
  }
  if (!bad) return {};
  // Go prints the []string value with %#v.
  std::string shown = "[]string{";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i) shown += ", ";
    shown += Json(values[i]).dump(-1, ' ', false, Json::error_handler_t::replace);
  }
  shown += "}";
  return InvalidObject(fmt::format("{}.meta.k8s.io", options_kind), "",
                       {{FieldErrorType::kNotSupported, "dryRun",
                         fmt::format("{}: supported values: \"All\"", shown)}});
}

VoidResult CheckResourceVersion(std::string_view rv) {
  if (rv.empty() || rv == "0") return {};
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec == std::errc() && end == rv.data() + rv.size()) return {};
  return Error{
      fmt::format("invalid resource version: resourceVersion: Invalid value: {}: {}",
                  Json(std::string(rv)).dump(-1, ' ', false, Json::error_handler_t::replace),
                  ParseError("ParseUint", rv, ec == std::errc::result_out_of_range)),
      ErrorCode::kBadRequest};
}

}  // namespace

Result<std::optional<int64_t>> ParseInt64Param(std::string_view text) {
  std::string_view t = TrimSpace(text);
  if (t.empty()) return std::optional<int64_t>();
  std::string_view digits = t;
  // Go takes one sign, '+' or '-'; from_chars only '-'.
  if (digits.front() == '+') digits.remove_prefix(1);
  int64_t v = 0;
  std::from_chars_result r{digits.data(), std::errc::invalid_argument};
  if (!digits.empty() && (digits.front() != '-' || digits.data() == t.data())) {
    r = std::from_chars(digits.data(), digits.data() + digits.size(), v);
  }
  const bool consumed = r.ptr == digits.data() + digits.size();
  if (r.ec == std::errc() && consumed) return std::optional<int64_t>(v);
  return Error{ParseError("ParseInt", t, r.ec == std::errc::result_out_of_range && consumed),
               ErrorCode::kBadRequest};
}

VoidResult ValidateResourceQuery(const net::HttpRequest& req) {
  if (const char* kind = OptionsKind(req.method)) return CheckDryRun(req, kind);
  if (req.method != "GET") return {};
  for (const char* name : {"limit", "timeoutSeconds"}) {
    if (auto v = req.Query(name)) {
      if (auto parsed = ParseInt64Param(*v); !parsed.ok()) return parsed.error();
    }
  }
  if (auto rv = req.Query("resourceVersion")) return CheckResourceVersion(*rv);
  return {};
}

VoidResult CheckBodyMediaType(std::string_view content_type) {
  std::string type(TrimSpace(content_type.substr(0, content_type.find(';'))));
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (type.empty() || type == "application/json" || type == "application/yaml" ||
      type == "application/vnd.kubernetes.protobuf") {
    return {};
  }
  return Error{
      "the body of the request was in an unknown format - accepted media types "
      "include: application/json, application/yaml, application/vnd.kubernetes.protobuf",
      ErrorCode::kUnsupportedMediaType};
}

std::chrono::steady_clock::time_point WatchDeadline(std::chrono::steady_clock::time_point now,
                                                    int64_t timeout_seconds) {
  using Clock = std::chrono::steady_clock;
  if (timeout_seconds == 0) return Clock::time_point::max();
  if (timeout_seconds < 0) return now;
  // Seconds to the clock's end, computed in seconds so nothing overflows.
  const auto left =
      std::chrono::duration_cast<std::chrono::seconds>(Clock::time_point::max() - now).count();
  if (timeout_seconds >= left) return Clock::time_point::max();
  return now + std::chrono::seconds(timeout_seconds);
}

}  // namespace berth::apiserver
