#include "apiserver/field_errors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

namespace berth::apiserver {
namespace {

std::string_view Words(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kInvalid:
      return "Invalid value";
    case FieldErrorType::kRequired:
      return "Required value";
    case FieldErrorType::kDuplicate:
      return "Duplicate value";
    case FieldErrorType::kForbidden:
      return "Forbidden";
    case FieldErrorType::kNotSupported:
      return "Unsupported value";
    case FieldErrorType::kTooMany:
      return "Too many";
    case FieldErrorType::kTooLong:
      return "Too long";
    case FieldErrorType::kNotFound:
      return "Not found";
  }
  return "Invalid value";
}

}  // namespace

std::string FieldError::Body() const {
  if (detail.empty()) return std::string(Words(type));
  return fmt::format("{}: {}", Words(type), detail);
}

std::string FieldError::ToString() const {
  return bare ? Body() : fmt::format("{}: {}", field, Body());
}

std::vector<std::string> ToStrings(const FieldErrorList& errors) {
  std::vector<std::string> out;
  out.reserve(errors.size());
  for (const FieldError& e : errors) out.push_back(e.ToString());
  return out;
}

std::string_view FieldErrorReason(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kInvalid:
      return "FieldValueInvalid";
    case FieldErrorType::kRequired:
      return "FieldValueRequired";
    case FieldErrorType::kDuplicate:
      return "FieldValueDuplicate";
    case FieldErrorType::kForbidden:
      return "FieldValueForbidden";
    case FieldErrorType::kNotSupported:
      return "FieldValueNotSupported";
    case FieldErrorType::kTooMany:
      return "FieldValueTooMany";
    case FieldErrorType::kTooLong:
      return "FieldValueTooLong";
    case FieldErrorType::kNotFound:
      return "FieldValueNotFound";
  }
  return "FieldValueInvalid";
}

std::string Aggregate(const FieldErrorList& errors) {
  std::vector<std::string> texts;
  for (const FieldError& e : errors) {
    std::string text = e.ToString();
    if (std::find(texts.begin(), texts.end(), text) == texts.end())
      texts.push_back(std::move(text));
  }
  if (texts.size() == 1) return texts[0];
  return fmt::format("[{}]", fmt::join(texts, ", "));
}

ApiError InvalidError(std::string_view subject, FieldErrorList errors) {
  // Each distinct error once, in the causes as in the message.
  FieldErrorList unique;
  for (FieldError& e : errors)
    if (std::find(unique.begin(), unique.end(), e) == unique.end()) unique.push_back(std::move(e));
  ApiError out(
      Error{fmt::format("{} is invalid: {}", subject, Aggregate(unique)), ErrorCode::kInvalid});
  out.field_errors = std::make_shared<const FieldErrorList>(std::move(unique));
  return out;
}

ApiError InvalidObject(std::string_view kind, std::string_view name, FieldErrorList errors) {
  return InvalidError(fmt::format("{} \"{}\"", kind, name), std::move(errors));
}

}  // namespace berth::apiserver
