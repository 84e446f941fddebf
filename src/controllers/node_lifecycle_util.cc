#include "controllers/node_lifecycle_util.h"

#include <algorithm>

#include "api/codec.h"
#include "api/tolerations.h"
#include "berth/api/selectors.h"
#include "controllers/object_util.h"

namespace berth::controllers {
namespace {

constexpr const char* kKubeletConditions[] = {"Ready", "MemoryPressure", "DiskPressure",
                                              "PIDPressure"};

bool IsConditionTaint(const Json& taint) {
  const std::string key = StringAt(taint, "key");
  const std::string effect = StringAt(taint, "effect");
  return (key == kTaintUnreachable || key == kTaintNotReady) &&
         (effect == "NoExecute" || effect == "NoSchedule");
}

}  // namespace

std::string NodeHeartbeat(const Json& node, const Json* lease) {
  std::string beat = lease ? StringAt(Member(*lease, "spec"), "renewTime") : std::string();
  for (const Json& c : Member(Member(node, "status"), "conditions")) {
    if (StringAt(c, "type") == "Ready") beat += "|" + StringAt(c, "lastHeartbeatTime");
  }
  return beat;
}

std::string ReadyStatus(const Json& node) {
  for (const Json& c : Member(Member(node, "status"), "conditions")) {
    if (StringAt(c, "type") == "Ready") return StringAt(c, "status");
  }
  return "";
}

Json UnknownConditions(const Json& node, const std::string& now) {
  Json out = Json::array();
  const Json& current = Member(Member(node, "status"), "conditions");
  if (current.is_array()) out = current;
  for (const char* type : kKubeletConditions) {
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const Json& c) { return StringAt(c, "type") == type; });
    if (it == out.end()) {
      out.push_back({{"type", type},
                     {"status", "Unknown"},
                     {"reason", "NodeStatusNeverUpdated"},
                     {"message", "Kubelet never posted node status."},
                     {"lastHeartbeatTime", now},
                     {"lastTransitionTime", now}});
      continue;
    }
    if (StringAt(*it, "status") == "Unknown") continue;
    (*it)["status"] = "Unknown";
    (*it)["reason"] = "NodeStatusUnknown";
    (*it)["message"] = "Kubelet stopped posting node status.";
    (*it)["lastTransitionTime"] = now;
  }
  return out;
}

Json DesiredTaints(const Json& node, const std::string& now) {
  const std::string ready = ReadyStatus(node);
  const char* want = ready == "Unknown" ? kTaintUnreachable
                     : ready == "False" ? kTaintNotReady
                                        : nullptr;
  Json out = Json::array();
  Json kept = Json::array();
  for (const Json& t : Member(Member(node, "spec"), "taints")) {
    if (!IsConditionTaint(t)) {
      out.push_back(t);
    } else if (want && StringAt(t, "key") == want) {
      kept.push_back(t);
    }
  }
  if (want) {
    for (const char* effect : {"NoSchedule", "NoExecute"}) {
      auto it = std::find_if(kept.begin(), kept.end(),
                             [&](const Json& t) { return StringAt(t, "effect") == effect; });
      if (it != kept.end()) {
        out.push_back(*it);
        continue;
      }
      Json t = {{"key", want}, {"effect", effect}};
      if (std::string_view(effect) == "NoExecute") t["timeAdded"] = now;
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<NoExecuteTaint> NoExecuteTaints(const Json& node) {
  std::vector<NoExecuteTaint> out;
  for (const Json& t : Member(Member(node, "spec"), "taints")) {
    if (StringAt(t, "effect") != "NoExecute") continue;
    NoExecuteTaint n;
    n.taint = {StringAt(t, "key"), StringAt(t, "value"), "NoExecute"};
    if (auto at = ParseTimestamp(StringAt(t, "timeAdded")); at.ok()) n.added = *at;
    out.push_back(std::move(n));
  }
  return out;
}

std::optional<UnixTime> EvictionTime(std::span<const Toleration> tolerations,
                                     const std::vector<NoExecuteTaint>& taints,
                                     bool comparison_operators) {
  if (taints.empty()) return std::nullopt;
  UnixTime since = taints.front().added;
  for (const auto& t : taints) since = std::min(since, t.added);
  std::optional<int64_t> shortest;  // of the tolerations used; none: for ever
  for (const auto& t : taints) {
    bool tolerated = false;
    for (const Toleration& tol : tolerations) {
      if (tol.effect != "" && tol.effect != "NoExecute") continue;
      if (!TolerationToleratesTaint(tol, t.taint, comparison_operators)) continue;
      tolerated = true;
      if (tol.toleration_seconds) {
        // As upstream's getMinTolerationTime: a negative value evicts at once.
        const int64_t s = std::max<int64_t>(*tol.toleration_seconds, 0);
        shortest = shortest ? std::min(*shortest, s) : s;
      }
    }
    if (!tolerated) return since;
  }
  if (!shortest) return std::nullopt;
  return since + *shortest;
}

}  // namespace berth::controllers
