// ClientError: the error of an API call as the REST client knows it: code and message, whether
// the request reached the server, the HTTP status and the Status object the server answered
// with (reason, details). Internal callers read these fields directly; an SDK boundary takes
// the plain berth::Error it derives from (api/typed_result.h).
//
// Threads: value types.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "api/typed_result.h"
#include "berth/api/result.h"

namespace berth::client {

// One entry of a Status's details.causes.
struct StatusCause {
  std::string reason;  // "FieldValueInvalid", "NamespaceTerminating", ...
  std::string message;
  std::string field;
};

struct ClientError : Error {
  ClientError() = default;
  explicit ClientError(Error e) : Error(std::move(e)) {}

  // The connection could not be made: the request never reached the server, so sending it
  // again is safe whatever it was.
  bool never_sent = false;
  // The HTTP status of the answer; 0 when there was none.
  int http_status = 0;
  // From the Status body, when the server sent one.
  std::string reason;  // "AlreadyExists", "Conflict", "Invalid", ...
  std::string details_name, details_kind;
  std::vector<StatusCause> causes;
};

template <class T>
using RequestResult = TypedResult<T, ClientError>;
using VoidRequestResult = TypedVoidResult<ClientError>;

// The error for a non-2xx answer: its code from the status (and reason), its message and
// details from the Status body when present.
ClientError ErrorFromResponse(int status, std::string_view body, std::string_view what);

}  // namespace berth::client
