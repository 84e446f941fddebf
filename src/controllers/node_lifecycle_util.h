// The decisions of the node lifecycle and taint eviction controllers, as pure functions of the
// objects and the time (upstream pkg/controller/nodelifecycle and pkg/controller/tainteviction):
// which conditions a silent node's status gets, which NoExecute/NoSchedule taints its Ready
// condition calls for, and when a pod on a tainted node is to be evicted.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "berth/api/objects.h"
#include "berth/framework/clock.h"

namespace berth::controllers {

inline constexpr const char* kTaintUnreachable = "node.kubernetes.io/unreachable";
inline constexpr const char* kTaintNotReady = "node.kubernetes.io/not-ready";

// What says a node's kubelet is alive: its Lease's renewTime and its Ready condition's
// lastHeartbeatTime. The controller notes when it last saw this change, by its own clock
// (upstream's probeTimestamp), so clock skew with the kubelet does not matter.
std::string NodeHeartbeat(const nlohmann::json& node, const nlohmann::json* lease);

// The Ready condition's status ("True", "False", "Unknown"; "" when the node has none).
std::string ReadyStatus(const nlohmann::json& node);

// The node's status.conditions once its kubelet is presumed gone: every kubelet-owned
// condition (Ready, MemoryPressure, DiskPressure, PIDPressure) Unknown, reason
// NodeStatusUnknown (NodeStatusNeverUpdated for a missing one), transitioned `now`.
nlohmann::json UnknownConditions(const nlohmann::json& node, const std::string& now);

// The node's spec.taints with the not-ready/unreachable taints (NoSchedule and NoExecute) its
// Ready status calls for: Unknown → unreachable, False → not-ready, True or none → neither.
// Taints already there keep their timeAdded; new ones get `now`. Other taints are kept.
nlohmann::json DesiredTaints(const nlohmann::json& node, const std::string& now);

// The node's NoExecute taints, with their timeAdded (Unix seconds, 0 when absent).
struct NoExecuteTaint {
  Taint taint;
  UnixTime added = 0;
};
std::vector<NoExecuteTaint> NoExecuteTaints(const nlohmann::json& node);

// When a pod on a node with `taints` is to be evicted (Unix seconds): at once (the earliest
// taint's time) when some taint is not tolerated; else the earliest taint's time plus the
// shortest tolerationSeconds of the tolerations used; nullopt when every taint is tolerated
// for ever (or there is none). `comparison_operators`: the TaintTolerationComparisonOperators
// gate (Lt and Gt tolerations).
std::optional<UnixTime> EvictionTime(std::span<const Toleration> tolerations,
                                     const std::vector<NoExecuteTaint>& taints,
                                     bool comparison_operators);

}  // namespace berth::controllers
