// The field names of every kind the API server serves, as constant tables generated from
// Kubernetes' OpenAPI document by scripts/gen_known_fields.py (field_schema_data.cc). Read by
// field_validation.cc only; immutable, so any thread may read them.
#pragma once

#include <cstdint>
#include <span>

namespace berth::apiserver::field_schema {

enum class NodeKind : uint8_t {
  kLeaf,    // a scalar (or Quantity, IntOrString, Time): whatever value, nothing below is checked
  kFree,    // RawExtension, FieldsV1, x-kubernetes-preserve-unknown-fields: anything below
  kObject,  // `ref` indexes Tables::objects
  kArray,   // `ref` is the node of the items
  kMap,     // `ref` is the node of the values; keys are free
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
