// Shared helpers of resource_validation.cc and resource_slice_validation.cc: field errors in
// the words of k8s.io/apimachinery's field package, and the name rules resource.k8s.io uses.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/field_errors.h"

namespace berth::apiserver::resource_validation {

using Json = nlohmann::json;

// A value as field.Error prints it: strings quoted, numbers and booleans bare, anything else
// as compact JSON.
std::string Shown(const Json& v);

// Collects field errors in the words of k8s.io/apimachinery's field package.
class FieldErrors {
 public:
  void Required(const std::string& path, std::string_view detail = "") {
    Add(FieldErrorType::kRequired, path, std::string(detail));
  }
  void Invalid(const std::string& path, const Json& value, std::string_view detail) {
    Add(FieldErrorType::kInvalid, path, fmt::format("{}: {}", Shown(value), detail));
  }
  // A value shown as Go shows a fmt.Stringer: its text, unquoted.
  void InvalidText(const std::string& path, std::string_view text, std::string_view detail) {
    Add(FieldErrorType::kInvalid, path, fmt::format("{}: {}", text, detail));
  }
  void Forbidden(const std::string& path, std::string_view detail) {
    Add(FieldErrorType::kForbidden, path, std::string(detail));
  }
  void Duplicate(const std::string& path, const Json& value) {
    Add(FieldErrorType::kDuplicate, path, Shown(value));
  }
  void TooMany(const std::string& path, size_t n, size_t max) {
    Add(FieldErrorType::kTooMany, path, fmt::format("{}: must have at most {} items", n, max));
  }
  void TooLong(const std::string& path, size_t max) {
    Add(FieldErrorType::kTooLong, path, fmt::format("may not be more than {} bytes", max));
  }
  void NotSupported(const std::string& path, const Json& value,
                    const std::vector<std::string>& supported);
  void Add(FieldErrorType type, const std::string& path, std::string detail) {
    list.push_back(FieldError{type, path, std::move(detail)});
  }
  FieldErrorList list;
};

inline std::string Idx(const std::string& path, size_t i) { return fmt::format("{}[{}]", path, i); }
inline std::string Key(const std::string& path, std::string_view k) {
  return fmt::format("{}[{}]", path, k);
}

// The member `key` of object `v`; null when absent or `v` is not an object.
const Json& Member(const Json& v, const char* key);
// The items of an array member (an empty list when absent).
const Json& Items(const Json& v, const char* key);
std::string Str(const Json& v, const char* key);

// Each of these adds the errors of its value at `path`.
void DnsLabel(FieldErrors& e, const std::string& path, const std::string& value);
void DnsSubdomain(FieldErrors& e, const std::string& path, const std::string& value);
void DriverName(FieldErrors& e, const std::string& path, const std::string& value);
void PoolName(FieldErrors& e, const std::string& path, const std::string& value);
void QualifiedName(FieldErrors& e, const std::string& path, const std::string& value);
void FullyQualifiedName(FieldErrors& e, const std::string& path, const std::string& value);
void LabelName(FieldErrors& e, const std::string& path, const std::string& value);
void LabelValue(FieldErrors& e, const std::string& path, const std::string& value);
void NodeSelector(FieldErrors& e, const std::string& path, const Json& selector);
void NodeName(FieldErrors& e, const std::string& path, const std::string& value);

// Whether two values decode to equal Go values (apimachinery's Semantic.DeepEqual: a null or
// an empty list is an absent field).
bool SemanticEqual(const Json& a, const Json& b);

// The effects a device taint or toleration may name.
const std::vector<std::string>& TaintEffects();

void ValidateResourceSlice(FieldErrors& e, const Json& obj, const Json* old);
void DefaultResourceSlice(Json& obj, const std::string& now);

// DeviceTaintRules (device_taint_rule_validation.cc).
void ValidateDeviceTaintRule(FieldErrors& e, const Json& obj, const Json* old);
void DefaultDeviceTaintRule(Json& obj, bool is_create, const std::string& now);
void PrepareDeviceTaintRuleUpdate(const Json& current, Json& next, const std::string& now);

}  // namespace berth::apiserver::resource_validation
