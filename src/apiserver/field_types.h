// Type checks of stored objects against their kind's schema (field_schema.h), as kube-apiserver's
// typed decode refuses a body: a string where a list belongs, a number out of int32's range, an
// unparseable quantity or time. A value that passed would be stored and then break every typed
// reader of the list (kubectl, client-go informers, the scheduler's own).
//
// Pure functions over immutable tables: any thread may call them.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>

#include "apiserver/field_validation.h"

namespace berth::apiserver {

// The first value of `object` (keys in sorted order) whose JSON type the schema does not allow,
// in the words of Go's decoder: `json: cannot unmarshal string into Go struct field
// NodeStatus.status.conditions of type []v1.NodeCondition` (field path without indexes or map
// keys, as Go names it), or a quantity's or a time's parse error. Null is accepted anywhere, as
// the decoder leaves the zero value. Nullopt when every value fits.
std::optional<std::string> FindFieldTypeError(const FieldSchema& schema,
                                              const nlohmann::json& object);

}  // namespace berth::apiserver
