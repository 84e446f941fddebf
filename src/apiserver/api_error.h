// ApiError: the API server's error as it travels from where it is made to the Status that
// answers it, with the facts the Status needs beyond code and message (the field errors of a
// 422, the Terminating namespace a create was refused in). berth::Error, part of the frozen
// SDK, has no room for them.
//
// Inside berth::apiserver, Result<T> and VoidResult name the typed results below, so a
// handler's error keeps its facts on every path to ErrorResponse; code outside reads the
// plain berth::Error they convert to.
//
// Threads: value types.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "api/typed_result.h"
#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

struct FieldError;

struct ApiError : Error {
  ApiError() = default;
  ApiError(Error e) : Error(std::move(e)) {}  // NOLINT: implicit, an error with no facts

  // The field errors a 422 was made of (InvalidError, field_errors.h); null for others.
  std::shared_ptr<const std::vector<FieldError>> field_errors;
  // The Terminating namespace a create was refused in (NamespaceTerminatingError); empty for
  // others.
  std::string terminating_namespace;
};

template <class T>
using Result = TypedResult<T, ApiError>;
using VoidResult = TypedVoidResult<ApiError>;

}  // namespace berth::apiserver
