// /openapi/v2: the Swagger 2.0 document, with the definitions of every kind the server serves
// and of the types they use (the same schemas as /openapi/v3, openapi_schema.h).
//
// kubectl reads it as protobuf (gnostic's openapi_v2.Document) for `kubectl explain --output
// plaintext-openapiv2`, for the strategic-merge keys of client-side apply when OpenAPI v3
// cannot answer, and to validate the items of a `kind: List` manifest (its default strict
// validation checks a List on the client rather than through fieldValidation). Both forms are
// built on first request and kept; called on HTTP I/O threads.
#pragma once

#include <string>
#include <string_view>

namespace berth::apiserver {

struct OpenApiV2Reply {
  std::string content_type;
  std::string body;
};

// The document in the representation `accept` asks for: protobuf when it names
// `application/com.github.proto-openapi.spec.v2...protobuf`, else JSON.
OpenApiV2Reply OpenApiV2Document(std::string_view accept);

}  // namespace berth::apiserver
