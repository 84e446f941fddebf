// Graceful deletion of pods, as kube-apiserver decides it: a pod on a node is marked with
// deletionTimestamp (now + grace period) and deletionGracePeriodSeconds, and its kubelet
// deletes it again with no grace once its containers have stopped; a pod on no node, or one
// that has finished, goes at once.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>

#include "apiserver/store.h"

namespace berth::apiserver {

// The DELETE of `pod` with DeleteOptions.gracePeriodSeconds `requested` (none: the pod's
// spec.terminationGracePeriodSeconds, else 30) at `now` (seconds since the epoch). As the pod
// strategy's CheckGracefulDelete and rest.BeforeDelete: a negative request counts as 1; a pod
// already being deleted only has its grace period shortened, and a request of 0 deletes it.
GraceDecision PodGraceDecision(const nlohmann::json& pod, std::optional<int64_t> requested,
                               int64_t now);

}  // namespace berth::apiserver
