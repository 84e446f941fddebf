// The eviction subresource's PodDisruptionBudget check: whether evicting a pod may delete it,
// and which budget the eviction spends, as kube-apiserver decides.
//
// Nothing in `berth up` runs the disruption controller, so a budget's status is what its writer
// put there: a budget nobody has given a status is "still being processed" and blocks the
// eviction of running pods it selects (pending and finished pods are evicted without a check).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

struct EvictionDecision {
  // Set when the eviction is refused; `cause` is then the DisruptionBudget cause's message
  // (empty when the refusal has none).
  std::optional<ApiError> refusal;
  std::string cause;
  // The budget (by name) whose status.disruptionsAllowed the eviction spends, when one does.
  std::optional<std::string> budget;
};

// `budgets`: the PodDisruptionBudgets of the pod's namespace.
EvictionDecision DecideEviction(const nlohmann::json& pod,
                                const std::vector<const nlohmann::json*>& budgets);

// `budget` after an eviction of `pod_name` spent one disruption at `now` (RFC 3339).
nlohmann::json SpendDisruption(nlohmann::json budget, const std::string& pod_name,
                               const std::string& now);

}  // namespace berth::apiserver
