// /openapi/v2: the Swagger 2.0 document kubectl falls back to when OpenAPI v3 cannot answer.
//
// kubectl's default (strict) validation of a `kind: List` manifest skips the OpenAPI v3 check
// (which would hand validation to the server through fieldValidation) and validates each item
// against the v2 document instead, fetched as protobuf (gnostic's openapi_v2.Document). A kind
// the document has no definition for is not validated on the client, so a document without
// definitions leaves every item to the server's validation, as for single objects. Called on
// HTTP I/O threads; pure functions.
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
