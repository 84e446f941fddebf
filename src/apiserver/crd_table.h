// What the API server answers for custom resources beyond storing them: the Table of `kubectl
// get` from a version's additionalPrinterColumns (NAME first; AGE when none are declared), the
// CRDs' own table, and the autoscaling/v1 Scale of the scale subresource from its
// specReplicasPath, statusReplicasPath and labelSelectorPath.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/crd_registry.h"
#include "apiserver/table.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// The first value a simple JSONPath (".spec.replicas", ".items[0].name",
// ".status.conditions[?(@.type==\"Ready\")].status") selects in `obj`, or null.
const nlohmann::json* JsonPathValue(const nlohmann::json& obj, const std::string& path);

nlohmann::json CustomResourceTable(const CustomResourceVersion& v,
                                   const std::vector<const nlohmann::json*>& objects, int64_t rv,
                                   IncludeObject include, int64_t now, bool with_columns);

// NAME and CREATED AT, as kube-apiserver lists CRDs.
nlohmann::json CrdTable(const std::vector<const nlohmann::json*>& objects, int64_t rv,
                        IncludeObject include, bool with_columns);

nlohmann::json CustomScaleOf(const CustomResourceVersion& v, const nlohmann::json& object);
// `object` with the Scale's spec.replicas written at specReplicasPath.
Result<nlohmann::json> WithCustomScale(const CustomResourceVersion& v, const nlohmann::json& object,
                                       const nlohmann::json& scale, const std::string& name);

}  // namespace berth::apiserver
