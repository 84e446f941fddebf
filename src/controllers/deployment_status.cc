// The DeploymentController's status: counts, the Available and Progressing conditions, the
// progress deadline (upstream's progress.go and sync.go's calculateStatus).
#include <fmt/format.h>

#include <climits>

#include "controllers/deployment.h"
#include "controllers/deployment_util.h"

namespace berth::controllers {

namespace {

constexpr std::string_view kNewRSAvailable = "NewReplicaSetAvailable";
constexpr std::string_view kTimedOut = "ProgressDeadlineExceeded";
constexpr std::string_view kPaused = "DeploymentPaused";
constexpr std::string_view kResumed = "DeploymentResumed";

bool IsPaused(const Json& d) {
  const Json& p = Member(Member(d, "spec"), "paused");
  return p.is_boolean() && p.get<bool>();
}

}  // namespace

const Json* FindCondition(const Json& status, std::string_view type) {
  const Json& conds = Member(status, "conditions");
  if (!conds.is_array()) return nullptr;
  for (const Json& c : conds)
    if (StringAt(c, "type") == type) return &c;
  return nullptr;
}

void RemoveCondition(Json& status, std::string_view type) {
  if (!status.contains("conditions") || !status["conditions"].is_array()) return;
  Json kept = Json::array();
  for (const Json& c : status["conditions"])
    if (StringAt(c, "type") != type) kept.push_back(c);
  status["conditions"] = std::move(kept);
}

void SetCondition(Json& status, Json cond) {
  const std::string type = StringAt(cond, "type");
  if (const Json* current = FindCondition(status, type)) {
    if (StringAt(*current, "status") == StringAt(cond, "status") &&
        StringAt(*current, "reason") == StringAt(cond, "reason")) {
      return;
    }
    if (StringAt(*current, "status") == StringAt(cond, "status")) {
      cond["lastTransitionTime"] = (*current)["lastTransitionTime"];
    }
  }
  RemoveCondition(status, type);
  if (!status["conditions"].is_array()) status["conditions"] = Json::array();
  status["conditions"].push_back(std::move(cond));
}

Json NewCondition(std::string_view type, std::string_view status, std::string_view reason,
                  std::string_view message, const std::string& now) {
  return {{"type", type},       {"status", status},      {"reason", reason},
          {"message", message}, {"lastUpdateTime", now}, {"lastTransitionTime", now}};
}

bool HasProgressDeadline(const Json& d) {
  const Json& v = Member(Member(d, "spec"), "progressDeadlineSeconds");
  return v.is_number_integer() && v.get<int64_t>() != INT32_MAX;
}

bool DeploymentComplete(const Json& d, const Json& status) {
  const int64_t replicas = SpecReplicas(d);
  return IntAt(status, "updatedReplicas") == replicas && IntAt(status, "replicas") == replicas &&
         IntAt(status, "availableReplicas") == replicas &&
         IntAt(status, "observedGeneration") >= IntAt(Member(d, "metadata"), "generation");
}

bool DeploymentProgressing(const Json& d, const Json& status) {
  const Json& old = Member(d, "status");
  const int64_t old_old = IntAt(old, "replicas") - IntAt(old, "updatedReplicas");
  const int64_t new_old = IntAt(status, "replicas") - IntAt(status, "updatedReplicas");
  return IntAt(status, "updatedReplicas") > IntAt(old, "updatedReplicas") || new_old < old_old ||
         IntAt(status, "readyReplicas") > IntAt(old, "readyReplicas") ||
         IntAt(status, "availableReplicas") > IntAt(old, "availableReplicas");
}

bool DeploymentTimedOut(const Json& d, const Json& status, UnixTime now) {
  if (!HasProgressDeadline(d)) return false;
  const Json* cond = FindCondition(status, "Progressing");
  if (!cond) return false;
  const std::string reason = StringAt(*cond, "reason");
  if (reason == kNewRSAvailable) return false;
  if (reason == kTimedOut) return true;
  auto from = ParseTimestamp(StringAt(*cond, "lastUpdateTime"));
  if (!from.ok()) return false;
  return *from + IntAt(Member(d, "spec"), "progressDeadlineSeconds") < now;
}

Json DeploymentController::CalculateStatus(const Rollout& r) const {
  std::vector<const Json*> all(r.old_sets.begin(), r.old_sets.end());
  if (r.new_rs) all.push_back(r.new_rs);
  const int64_t available = SumStatus(all, "availableReplicas");
  const int64_t total = SumSpecReplicas(all);
  const Json& old = Member(r.d, "status");
  Json status = {{"observedGeneration", IntAt(Member(r.d, "metadata"), "generation")},
                 {"replicas", SumStatus(all, "replicas")},
                 {"updatedReplicas", r.new_rs ? IntAt(Member(*r.new_rs, "status"), "replicas") : 0},
                 {"readyReplicas", SumStatus(all, "readyReplicas")},
                 {"availableReplicas", available},
                 {"unavailableReplicas", std::max<int64_t>(0, total - available)}};
  if (Member(old, "collisionCount").is_number_integer()) {
    status["collisionCount"] = old["collisionCount"];
  }
  status["conditions"] = Member(old, "conditions").is_array() ? old["conditions"] : Json::array();
  const std::string now = Timestamp();
  if (available >= SpecReplicas(r.d) - MaxUnavailable(r.d)) {
    SetCondition(status, NewCondition("Available", "True", "MinimumReplicasAvailable",
                                      "Deployment has minimum availability.", now));
  } else {
    SetCondition(status, NewCondition("Available", "False", "MinimumReplicasUnavailable",
                                      "Deployment does not have minimum availability.", now));
  }
  return status;
}

VoidResult DeploymentController::WriteStatus(Rollout& r, const Json& status) {
  // The API server leaves zero counts and empty lists out: compare as it stores them.
  auto same = [](const Json& a, const Json& b) {
    for (const char* f : {"observedGeneration", "replicas", "updatedReplicas", "readyReplicas",
                          "availableReplicas", "unavailableReplicas", "collisionCount"}) {
      if (IntAt(a, f) != IntAt(b, f)) return false;
    }
    const Json& ca = Member(a, "conditions");
    const Json& cb = Member(b, "conditions");
    return (ca.is_null() || ca.empty()) ? (cb.is_null() || cb.empty()) : ca == cb;
  };
  if (same(status, Member(r.d, "status"))) return {};
  Json next = r.d;
  next["status"] = status;
  auto put = rest_->Put(fmt::format("/apis/apps/v1/namespaces/{}/deployments/{}/status",
                                    NamespaceOf(r.d), NameOf(r.d)),
                        next);
  if (!put.ok()) return put.error();
  r.d = std::move(put).value();
  return {};
}

VoidResult DeploymentController::SyncStatusOnly(Rollout& r) {
  return WriteStatus(r, CalculateStatus(r));
}

VoidResult DeploymentController::SyncRolloutStatus(Rollout& r) {
  Json status = CalculateStatus(r);
  const std::string now = Timestamp();
  if (!HasProgressDeadline(r.d)) RemoveCondition(status, "Progressing");
  const Json* current = FindCondition(status, "Progressing");
  const bool complete = IntAt(status, "replicas") == IntAt(status, "updatedReplicas") && current &&
                        StringAt(*current, "reason") == kNewRSAvailable;
  const std::string rs_name = r.new_rs ? NameOf(*r.new_rs) : "";
  if (HasProgressDeadline(r.d) && !complete) {
    if (DeploymentComplete(r.d, status)) {
      const std::string msg =
          r.new_rs ? fmt::format("ReplicaSet \"{}\" has successfully progressed.", rs_name)
                   : fmt::format("Deployment \"{}\" has successfully progressed.", NameOf(r.d));
      SetCondition(status, NewCondition("Progressing", "True", kNewRSAvailable, msg, now));
    } else if (DeploymentProgressing(r.d, status)) {
      const std::string msg = r.new_rs
                                  ? fmt::format("ReplicaSet \"{}\" is progressing.", rs_name)
                                  : fmt::format("Deployment \"{}\" is progressing.", NameOf(r.d));
      Json cond = NewCondition("Progressing", "True", "ReplicaSetUpdated", msg, now);
      // Progress refreshes lastUpdateTime (the deadline counts from it) even when the
      // reason stays the same.
      if (current && StringAt(*current, "status") == "True") {
        cond["lastTransitionTime"] = (*current)["lastTransitionTime"];
      }
      RemoveCondition(status, "Progressing");
      SetCondition(status, std::move(cond));
    } else if (DeploymentTimedOut(r.d, status,
                                  std::chrono::duration_cast<std::chrono::seconds>(
                                      options_.clock->Now().time_since_epoch())
                                      .count())) {
      const std::string msg =
          r.new_rs ? fmt::format("ReplicaSet \"{}\" has timed out progressing.", rs_name)
                   : fmt::format("Deployment \"{}\" has timed out progressing.", NameOf(r.d));
      SetCondition(status, NewCondition("Progressing", "False", kTimedOut, msg, now));
    }
  }
  // ReplicaFailure of the sets shows on the Deployment.
  const Json* failure = nullptr;
  for (const Json* s : r.AllConst()) {
    if (const Json* c = FindCondition(Member(*s, "status"), "ReplicaFailure")) failure = c;
  }
  if (failure) {
    SetCondition(status,
                 NewCondition("ReplicaFailure", StringAt(*failure, "status"),
                              StringAt(*failure, "reason"), StringAt(*failure, "message"), now));
  } else {
    RemoveCondition(status, "ReplicaFailure");
  }
  if (auto w = WriteStatus(r, status); !w.ok()) return w;
  // A rollout that is neither complete nor timed out is looked at again when its deadline
  // passes, whether or not anything else happens.
  const Json* cond = FindCondition(status, "Progressing");
  if (cond && HasProgressDeadline(r.d) && StringAt(*cond, "reason") != kNewRSAvailable &&
      StringAt(*cond, "reason") != kTimedOut) {
    queue_.AddAfter(KeyOf(r.d), std::chrono::seconds(
                                    IntAt(Member(r.d, "spec"), "progressDeadlineSeconds") + 1));
  }
  return {};
}

VoidResult DeploymentController::CheckPausedConditions(Rollout& r) {
  if (!HasProgressDeadline(r.d)) return {};
  Json status = Member(r.d, "status").is_object() ? r.d["status"] : Json::object();
  const Json* cond = FindCondition(status, "Progressing");
  const bool paused_cond = cond && StringAt(*cond, "reason") == kPaused;
  const std::string now = Timestamp();
  if (IsPaused(r.d) && !paused_cond) {
    SetCondition(status,
                 NewCondition("Progressing", "Unknown", kPaused, "Deployment is paused", now));
  } else if (!IsPaused(r.d) && paused_cond) {
    SetCondition(status,
                 NewCondition("Progressing", "Unknown", kResumed, "Deployment is resumed", now));
  } else {
    return {};
  }
  return WriteStatus(r, status);
}

}  // namespace berth::controllers
