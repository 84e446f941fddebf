#include "apiserver/eviction.h"

#include <fmt/format.h>

#include "apiserver/selectors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

int64_t IntAt(const Json& obj, std::string_view path) {
  const Json* v = FieldAt(obj, path);
  return v && v->is_number_integer() ? v->get<int64_t>() : 0;
}

// Pending and finished pods have disrupted nothing yet or already; a pod being deleted is
// going anyway.
bool CanIgnoreBudgets(const Json& pod) {
  const std::string phase = FieldValue(pod, "status.phase");
  return phase == "Pending" || phase == "Succeeded" || phase == "Failed" ||
         FieldAt(pod, "metadata.deletionTimestamp") != nullptr;
}

bool IsReady(const Json& pod) {
  const Json* conditions = FieldAt(pod, "status.conditions");
  if (!conditions || !conditions->is_array()) return false;
  for (const auto& c : *conditions) {
    if (c.is_object() && c.value("type", "") == "Ready") return c.value("status", "") == "True";
  }
  return false;
}

// A budget with an absent or empty selector selects nothing.
bool Selects(const Json& budget, const Json& pod) {
  const Json* selector = FieldAt(budget, "spec.selector");
  if (!selector) return false;
  const std::string text = FormatSelector(*selector);
  if (text.empty()) return false;
  auto filter = ParseLabelSelector(text);
  return filter.ok() && (!*filter || (*filter)(pod));
}

EvictionDecision TooManyRequests(std::string cause) {
  EvictionDecision d;
  d.refusal = Error{"Cannot evict pod as it would violate the pod's disruption budget.",
                    ErrorCode::kTooManyRequests};
  d.cause = std::move(cause);
  return d;
}

}  // namespace

EvictionDecision DecideEviction(const Json& pod, const std::vector<const Json*>& budgets) {
  EvictionDecision d;
  if (CanIgnoreBudgets(pod)) return d;
  const Json* budget = nullptr;
  for (const Json* b : budgets) {
    if (!Selects(*b, pod)) continue;
    if (budget) {
      d.refusal = Error{
          "This pod has more than one PodDisruptionBudget, which the eviction "
          "subresource does not support.",
          ErrorCode::kUnknown};
      return d;
    }
    budget = b;
  }
  if (!budget) return d;
  const std::string name = FieldValue(*budget, "metadata.name");
  const int64_t desired = IntAt(*budget, "status.desiredHealthy");
  const int64_t current = IntAt(*budget, "status.currentHealthy");
  // An unready pod does not count as healthy: evicting it leaves the budget as it is, always
  // under the AlwaysAllow policy, else while the budget has its healthy pods.
  if (!IsReady(pod)) {
    if (FieldValue(*budget, "spec.unhealthyPodEvictionPolicy") == "AlwaysAllow") return d;
    if (current >= desired && desired > 0) return d;
  }
  if (IntAt(*budget, "status.observedGeneration") < IntAt(*budget, "metadata.generation")) {
    return TooManyRequests(
        fmt::format("The disruption budget {} is still being processed by the server.", name));
  }
  const int64_t allowed = IntAt(*budget, "status.disruptionsAllowed");
  if (allowed < 0) {
    d.refusal = Error{fmt::format("poddisruptionbudgets.policy \"{}\" is forbidden: pdb "
                                  "disruptions allowed is negative",
                                  name),
                      ErrorCode::kForbidden};
    return d;
  }
  if (allowed == 0) {
    return TooManyRequests(
        fmt::format("The disruption budget {} needs {} healthy pods and has {} currently", name,
                    desired, current));
  }
  d.budget = name;
  return d;
}

Json SpendDisruption(Json budget, const std::string& pod_name, const std::string& now) {
  Json& status = budget["status"];
  if (!status.is_object()) status = Json::object();
  const int64_t allowed = status.value("disruptionsAllowed", int64_t{0}) - 1;
  status["disruptionsAllowed"] = allowed;
  Json& disrupted = status["disruptedPods"];
  if (!disrupted.is_object()) disrupted = Json::object();
  disrupted[pod_name] = now;
  if (allowed == 0) {
    // The DisruptionAllowed condition the controller would write.
    Json& conditions = status["conditions"];
    if (!conditions.is_array()) conditions = Json::array();
    Json condition = {{"type", "DisruptionAllowed"},
                      {"status", "False"},
                      {"reason", "InsufficientPods"},
                      {"message", ""},
                      {"observedGeneration", status.value("observedGeneration", int64_t{0})},
                      {"lastTransitionTime", now}};
    bool replaced = false;
    for (auto& c : conditions) {
      if (c.is_object() && c.value("type", "") == "DisruptionAllowed") {
        if (c.value("status", "") == "False")
          condition["lastTransitionTime"] = c.value("lastTransitionTime", now);
        c = condition;
        replaced = true;
      }
    }
    if (!replaced) conditions.push_back(condition);
  }
  return budget;
}

}  // namespace berth::apiserver
