// The ResourceClaim an API server answered with (a create or a status write), decoded; shared
// by ApiClusterClient's DRA writers.
#pragma once

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>

#include "api/codec.h"
#include "berth/api/resource_claims.h"

namespace berth::client {

inline Result<Ptr<ResourceClaim>> ClaimFromAnswer(Result<nlohmann::json> r,
                                                  const std::string& path) {
  if (!r.ok()) return r.error();
  Result<Object> decoded = DecodeObject(std::move(*r), path);
  if (!decoded.ok()) return decoded.error();
  auto p = std::get_if<Ptr<ResourceClaim>>(&*decoded);
  if (!p) return Error{fmt::format("{}: the answer is not a ResourceClaim", path)};
  return *p;
}

}  // namespace berth::client
