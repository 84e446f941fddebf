// Field errors as data, as k8s.io/apimachinery's field.ErrorList: a 422's message and its
// Status's details.causes are both built from them, so the causes are never read back out of
// the message.
//
// Threads: any thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// field.ErrorType, in kube-apiserver's words ("Required value") and reasons
// ("FieldValueRequired").
enum class FieldErrorType {
  kInvalid,
  kRequired,
  kDuplicate,
  kForbidden,
  kNotSupported,
  kTooMany,
  kTooLong,
  kNotFound,
};

struct FieldError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string field;   // "spec.containers[0].name"
  std::string detail;  // what follows the type's words: `"x": must be ...` for kInvalid
  // Printed without "<field>: " (an error at a custom object's root, as Berth has always
  // written it).
  bool bare = false;

  // field.Error.ErrorBody: "Invalid value: \"x\": must be ..." (a cause's message).
  std::string Body() const;
  // "<field>: <body>".
  std::string ToString() const;
  bool operator==(const FieldError&) const = default;
};
using FieldErrorList = std::vector<FieldError>;

// Each error as "<field>: <body>".
std::vector<std::string> ToStrings(const FieldErrorList& errors);

// "FieldValueInvalid", ... (a cause's reason).
std::string_view FieldErrorReason(FieldErrorType type);

// The errors as an aggregate prints them: one alone, several as "[a, b]", each distinct error
// once (errors.NewInvalid's message).
std::string Aggregate(const FieldErrorList& errors);

// 422: "<subject> is invalid: <aggregate>", its errors kept with it as data
// (ApiError::field_errors). The subject is usually `<Kind> "<name>"`.
ApiError InvalidError(std::string_view subject, FieldErrorList errors);
// The same with the subject `<kind> "<name>"`.
ApiError InvalidObject(std::string_view kind, std::string_view name, FieldErrorList errors);

}  // namespace berth::apiserver
