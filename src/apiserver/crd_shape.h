// The JSON shape of a CustomResourceDefinition: each field of the type its Go struct gives it
// (kube-apiserver's decoder refuses the rest before validation does). What is stored passes
// this, so the registry, the schema functions and the tables read CRDs without type checks.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace berth::apiserver {

// "spec.versions[0].served: must be a boolean" for the first field of the wrong type, or
// nullopt. Absent fields (and nulls) are left to validation.
std::optional<std::string> CrdShapeError(const nlohmann::json& crd);

}  // namespace berth::apiserver
