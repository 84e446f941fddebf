// The arithmetic and naming of Deployments, as upstream's pkg/controller/deployment/util.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/object_util.h"

namespace berth::controllers {

inline constexpr std::string_view kPodTemplateHashLabel = "pod-template-hash";
inline constexpr std::string_view kRevisionAnnotation = "deployment.kubernetes.io/revision";
inline constexpr std::string_view kRevisionHistoryAnnotation =
    "deployment.kubernetes.io/revision-history";
inline constexpr std::string_view kDesiredReplicasAnnotation =
    "deployment.kubernetes.io/desired-replicas";
inline constexpr std::string_view kMaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas";

// rand.SafeEncodeString: each byte mapped into an alphabet without vowels (no words) and
// without the characters people confuse (0, 1, 3).
std::string SafeEncodeString(std::string_view s);
// 32-bit FNV-1a.
uint32_t Fnv32a(std::string_view data, uint32_t hash = 2166136261u);
// The pod-template-hash of a template. Upstream hashes Go's printed form of the object, which
// only Go can produce; Berth hashes the template's canonical JSON (keys sorted, no spaces),
// then, as upstream, the collision count's four little-endian bytes, and encodes the decimal
// sum with SafeEncodeString.
std::string ComputeHash(const Json& pod_template, std::optional<int64_t> collision_count);
// Templates equal once the pod-template-hash label is left out of both.
bool EqualIgnoreHash(const Json& a, const Json& b);

// An int-or-percent of `total`: "25%" of 10 is 2.5, rounded up or down.
Result<int64_t> ScaledValue(const Json& int_or_percent, int64_t total, bool round_up);
struct Fenceposts {
  int64_t max_surge = 0, max_unavailable = 0;
};
// maxSurge rounds up, maxUnavailable down; both zero would block a rollout, so unavailable
// becomes 1 (upstream's ResolveFenceposts).
Result<Fenceposts> ResolveFenceposts(const Json& max_surge, const Json& max_unavailable,
                                     int64_t desired);

int64_t SpecReplicas(const Json& obj);  // spec.replicas (1 when absent, as defaulted)
bool IsRollingUpdate(const Json& deployment);
int64_t MaxSurge(const Json& deployment);        // 0 unless RollingUpdate
int64_t MaxUnavailable(const Json& deployment);  // at most spec.replicas
// How many replicas the new ReplicaSet may have now (RollingUpdate: within replicas + surge).
int64_t NewRSNewReplicas(const Json& deployment, const std::vector<const Json*>& all_rs,
                         const Json& new_rs);

int64_t RevisionOf(const Json& obj);  // the revision annotation, 0 when absent or invalid
// Sums over ReplicaSets (null entries skipped).
int64_t SumSpecReplicas(const std::vector<const Json*>& sets);
int64_t SumStatus(const std::vector<const Json*>& sets, std::string_view field);

}  // namespace berth::controllers
