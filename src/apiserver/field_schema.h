// The fields of every kind the API server serves and their types, as constant tables generated
// from Kubernetes' OpenAPI document by scripts/gen_known_fields.py (field_schema_data.cc). Read
// by field_validation.cc and field_types.cc only; immutable, so any thread may read them.
#pragma once

#include <cstdint>
#include <span>

namespace berth::apiserver::field_schema {

enum class NodeKind : uint8_t {
  kLeaf,    // a scalar of no declared type: whatever value
  kFree,    // RawExtension, FieldsV1, x-kubernetes-preserve-unknown-fields: anything below
  kObject,  // `ref` indexes Tables::objects
  kArray,   // `ref` is the node of the items
  kMap,     // `ref` is the node of the values; keys are free
  // Typed scalars (`ref` unused), as Go's decoder reads them; null is accepted for every node.
  kString,       // a JSON string (also base64 bytes)
  kBool,         // true or false
  kInt32,        // an integer in int32's range
  kInt64,        // an integer in int64's range
  kNumber,       // any number
  kIntOrString,  // a string or an int32
  kQuantity,     // a string or a number, parsed as a resource.Quantity
  kTime,         // an RFC 3339 string
};

// Nodes 0 and 1 are always the leaf and the free node.
inline constexpr uint16_t kLeafNode = 0;
inline constexpr uint16_t kFreeNode = 1;

struct Node {
  NodeKind kind;
  uint16_t ref;
};

struct Field {
  const char* name;
  uint16_t node;
};

// An object's fields: Tables::fields[first, first + count), sorted by name (bytewise).
struct ObjectType {
  uint32_t first;
  uint16_t count;
  const char* go_type;  // as Go's decoder names it: "v1.NodeStatus"
};

struct KindRoot {
  const char* group;  // "" for core; version is v1
  const char* kind;
  uint16_t node;
};

struct Tables {
  std::span<const Node> nodes;
  std::span<const Field> fields;
  std::span<const ObjectType> objects;
  std::span<const KindRoot> kinds;
};

const Tables& Schema();

}  // namespace berth::apiserver::field_schema
