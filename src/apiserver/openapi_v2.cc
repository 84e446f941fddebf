#include "apiserver/openapi_v2.h"

#include <cstdint>

namespace berth::apiserver {
namespace {

constexpr std::string_view kProtobufType =
    "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
constexpr std::string_view kTitle = "Berth";
constexpr std::string_view kVersion = "v1.32.0";

void Varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

// A length-delimited field (wire type 2).
void Bytes(std::string& out, int field, std::string_view data) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | 2);
  Varint(out, data.size());
  out.append(data);
}

}  // namespace

OpenApiV2Reply OpenApiV2Document(std::string_view accept) {
  // kubectl asks for "application/com.github.proto-openapi.spec.v2@v1.0+protobuf".
  if (accept.find("com.github.proto-openapi.spec.v2") != std::string_view::npos) {
    // openapi_v2.Document: swagger = 1, info = 2 (title = 1, version = 2), paths = 8.
    std::string info;
    Bytes(info, 1, kTitle);
    Bytes(info, 2, kVersion);
    std::string doc;
    Bytes(doc, 1, "2.0");
    Bytes(doc, 2, info);
    Bytes(doc, 8, "");
    return {std::string(kProtobufType), std::move(doc)};
  }
  return {"application/json",
          R"({"swagger":"2.0","info":{"title":"Berth","version":"v1.32.0"},"paths":{}})"};
}

}  // namespace berth::apiserver
