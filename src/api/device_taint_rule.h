// resource.k8s.io/v1 DeviceTaintRule: one taint that the scheduler treats as if the DRA driver
// had put it on every device the rule's selector picks. The typed view the scheduler's DRA
// listers apply to ResourceSlices (framework/tainted_slices.h); status is not read.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"

namespace berth {

struct DeviceTaintRule {
  ObjectMeta metadata;
  // spec.deviceSelector: each set field must equal the device's; unset fields match anything.
  struct Selector {
    std::optional<std::string> driver, pool, device;
    friend bool operator==(const Selector&, const Selector&) = default;
  };
  // Empty (no field set), the rule selects every device; absent (or null), none.
  std::optional<Selector> selector;
  DeviceTaint taint;
};

// Decodes a DeviceTaintRule document (apiVersion resource.k8s.io/v1); `where` prefixes errors,
// which name the field.
Result<DeviceTaintRule> DecodeDeviceTaintRule(const nlohmann::json& doc, std::string_view where);

// Whether `rule` selects device `device_name` of pool `pool` of driver `driver`.
bool RuleSelects(const DeviceTaintRule& rule, std::string_view driver, std::string_view pool,
                 std::string_view device_name);

}  // namespace berth
