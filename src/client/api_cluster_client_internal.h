// What the parts of ApiClusterClient (api_cluster_client*.cc) share: how writes are retried and
// how events are batched. Internal to the client module.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "berth/api/objects.h"
#include "berth/api/result.h"

namespace berth::client::internal {

// How long a write whose outcome is unknown (the connection broke, the request timed out) is
// sent again. Connections cut every few hundred milliseconds on a busy machine can fail many
// attempts in a row; every retried write here is safe to repeat.
constexpr auto kUnknownOutcomeBudget = std::chrono::seconds(30);
constexpr size_t kMaxQueuedEvents = 10000;  // events waiting to be written
constexpr size_t kEventBatch = 64;          // events a writer sends together
// How long a writer waits for more events before sending fewer than a batch. Events are for
// people reading them later: a few milliseconds late, many go in one round trip (one wake-up
// of each side), and they take less from the binding of pods they describe.
constexpr auto kEventLinger = std::chrono::milliseconds(10);
// How long a stop keeps writing the events still queued (kube-scheduler's broadcaster gives up
// on shutdown too); the kubelet allows a stopping pod 30 s in all.
constexpr auto kStopDrainBudget = std::chrono::seconds(3);

inline bool OutcomeUnknown(const Error& e) {
  return e.code == ErrorCode::kUnavailable || e.code == ErrorCode::kTimeout;
}

// Waits before the next attempt: doubling up to a second, jittered so that writes which failed
// together do not retry together.
void BackOff(std::chrono::milliseconds* wait);

// "/api/v1/namespaces/<ns>/pods/<name>".
std::string PodPath(const Pod& pod);

}  // namespace berth::client::internal
