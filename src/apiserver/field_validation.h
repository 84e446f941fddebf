// Field validation of request bodies, as kube-apiserver's `fieldValidation` parameter asks:
// unknown fields (those the kind's schema does not declare, field_schema.h) and duplicate
// fields. The server drops unknown fields from what it stores whatever the directive, as a
// typed decode does; the directive decides whether the problems are ignored, returned as
// warnings or make the request fail.
//
// Pure functions over immutable tables: any thread may call them.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

namespace field_schema {
struct KindRoot;
}

enum class FieldValidation { kIgnore, kWarn, kStrict };

// The fieldValidation query value: absent or "" is Warn (kube-apiserver's default). Anything
// but Ignore/Warn/Strict is a 422 Invalid naming `options_kind` ("CreateOptions").
Result<FieldValidation> ParseFieldValidation(const std::optional<std::string>& value,
                                             std::string_view options_kind);

using FieldSchema = field_schema::KindRoot;

// The schema of group/v1 `kind`, or null (then nothing is checked).
const FieldSchema* FindFieldSchema(std::string_view group, std::string_view kind);

// Removes from `object` every field `schema` does not declare. When `problems` is not null,
// appends `unknown field "<path>"` for each (path like "spec.containers[0].imagePullPolicyy").
void DropUnknownFields(const FieldSchema& schema, nlohmann::json& object,
                       std::vector<std::string>* problems);

enum class FieldPathStyle {
  kDecoder,  // `unknown field "spec.foo"`, as a strict decode reports them
  kApply,    // ".spec.foo", as server-side apply names a field
};

// The unknown fields of `object`, which is left unchanged.
std::vector<std::string> FindUnknownFields(const FieldSchema& schema, const nlohmann::json& object,
                                           FieldPathStyle style);

// Parses one JSON value. Of a key repeated in one object the last value is kept, as other
// decoders do; when `duplicates` is not null each repetition appends its path ("metadata.name").
// Returns false when `text` is not valid JSON or nests deeper than `max_depth` (the caller
// reports the error with its own parser).
bool ParseJsonNotingDuplicates(std::string_view text, size_t max_depth, nlohmann::json* out,
                               std::vector<std::string>* duplicates);

// The Warning header value for `text` (RFC 7234 warn-code 299, as kube-apiserver sends them).
std::string WarningHeaderValue(std::string_view text);

}  // namespace berth::apiserver
