#include "apiserver/openapi_v2.h"

#include <cstdint>
#include <nlohmann/json.hpp>

#include "apiserver/openapi_schema.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

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

// A varint field (wire type 0).
void VarintField(std::string& out, int field, uint64_t v) {
  Varint(out, static_cast<uint64_t>(field) << 3);
  Varint(out, v);
}

// openapi_v2.Any holding `value` as YAML (field 2); JSON is YAML, and clients parse vendor
// extensions from it.
std::string AnyYaml(const Json& value) {
  std::string any;
  Bytes(any, 2, value.dump());
  return any;
}

// openapi_v2.Schema. Field numbers: _ref 1, format 2, description 4, required 19, enum 20,
// additional_properties 21 (AdditionalPropertiesItem: schema 1, boolean 2), type 22 (TypeItem:
// value 1), items 23 (ItemsItem: schema 1), properties 25 (Properties: additional_properties 1
// of NamedSchema: name 1, value 2), vendor_extension 31 (NamedAny: name 1, value 2).
std::string EncodeSchema(const Json& schema) {
  std::string out;
  if (!schema.is_object()) return out;
  for (const auto& [key, value] : schema.items()) {
    if (key == "$ref" && value.is_string()) {
      Bytes(out, 1, value.get_ref<const std::string&>());
    } else if (key == "format" && value.is_string()) {
      Bytes(out, 2, value.get_ref<const std::string&>());
    } else if (key == "description" && value.is_string()) {
      Bytes(out, 4, value.get_ref<const std::string&>());
    } else if (key == "required" && value.is_array()) {
      for (const auto& r : value) {
        if (r.is_string()) Bytes(out, 19, r.get_ref<const std::string&>());
      }
    } else if (key == "enum" && value.is_array()) {
      for (const auto& e : value) Bytes(out, 20, AnyYaml(e));
    } else if (key == "additionalProperties") {
      std::string item;
      if (value.is_boolean()) {
        VarintField(item, 2, value.get<bool>() ? 1 : 0);
      } else {
        Bytes(item, 1, EncodeSchema(value));
      }
      Bytes(out, 21, item);
    } else if (key == "type" && value.is_string()) {
      std::string type;
      Bytes(type, 1, value.get_ref<const std::string&>());
      Bytes(out, 22, type);
    } else if (key == "items") {
      std::string items;
      Bytes(items, 1, EncodeSchema(value));
      Bytes(out, 23, items);
    } else if (key == "properties" && value.is_object()) {
      std::string props;
      for (const auto& [name, sub] : value.items()) {
        std::string named;
        Bytes(named, 1, name);
        Bytes(named, 2, EncodeSchema(sub));
        Bytes(props, 1, named);
      }
      Bytes(out, 25, props);
    } else if (key.rfind("x-", 0) == 0) {
      std::string named;
      Bytes(named, 1, key);
      Bytes(named, 2, AnyYaml(value));
      Bytes(out, 31, named);
    }
  }
  return out;
}

std::string BuildProtobuf() {
  std::string info;
  Bytes(info, 1, kTitle);
  Bytes(info, 2, kVersion);
  std::string definitions;
  for (const auto& [name, schema] : openapi_schema::ReachableFrom(nullptr)) {
    std::string named;
    Bytes(named, 1, name);
    Bytes(named, 2, EncodeSchema(schema));
    Bytes(definitions, 1, named);
  }
  // openapi_v2.Document: swagger 1, info 2, paths 8, definitions 9.
  std::string doc;
  Bytes(doc, 1, "2.0");
  Bytes(doc, 2, info);
  Bytes(doc, 8, "");
  Bytes(doc, 9, definitions);
  return doc;
}

std::string BuildJson() {
  Json definitions = Json::object();
  for (auto& [name, schema] : openapi_schema::ReachableFrom(nullptr)) {
    definitions[name] = std::move(schema);
  }
  return Json{{"swagger", "2.0"},
              {"info", {{"title", kTitle}, {"version", kVersion}}},
              {"paths", Json::object()},
              {"definitions", std::move(definitions)}}
      .dump();
}

}  // namespace

OpenApiV2Reply OpenApiV2Document(std::string_view accept) {
  // kubectl asks for "application/com.github.proto-openapi.spec.v2@v1.0+protobuf".
  if (accept.find("com.github.proto-openapi.spec.v2") != std::string_view::npos) {
    static const std::string protobuf = BuildProtobuf();
    return {std::string(kProtobufType), protobuf};
  }
  static const std::string json = BuildJson();
  return {"application/json", json};
}

}  // namespace berth::apiserver
