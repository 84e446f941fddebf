// Toleration matching with the TaintTolerationComparisonOperators gate (KEP-5471, alpha and off
// by default in v1.37). berth/api/selectors.h's TolerationToleratesTaint and
// FindUntoleratedTaint are these with the gate off; every caller that knows the gate passes it.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "berth/api/objects.h"

namespace berth {

inline constexpr std::string_view kTaintTolerationComparisonOperatorsGate =
    "TaintTolerationComparisonOperators";

// Whether the toleration tolerates the taint, as Kubernetes' Toleration.ToleratesTaint: effect
// and key match when set; operator Equal (or empty) compares values, Exists matches any value.
// `comparison_operators` (the gate) also lets Lt and Gt match: the taint's value, read as an
// int64 in canonical decimal form ("0", "-5", "42"; not "+5", "007" or "-0"), is below (Lt) or
// above (Gt) the toleration's; a value that does not parse never matches. Without the gate Lt
// and Gt match nothing.
bool TolerationToleratesTaint(const Toleration& t, const Taint& taint, bool comparison_operators);
// The first taint (with an effect accepted by `effect_filter`) that no toleration tolerates.
const Taint* FindUntoleratedTaint(std::span<const Taint> taints,
                                  std::span<const Toleration> tolerations,
                                  bool (*effect_filter)(const Taint&), bool comparison_operators);
// A toleration's or taint's value as Lt and Gt read it: an int64 in canonical decimal form.
std::optional<int64_t> ParseTaintInteger(std::string_view value);

}  // namespace berth
