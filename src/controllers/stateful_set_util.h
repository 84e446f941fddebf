// Naming and making a StatefulSet's pods and claims, as upstream's
// pkg/controller/statefulset/stateful_set_utils.go.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controllers/object_util.h"

namespace berth::controllers {

inline constexpr std::string_view kStatefulSetPodNameLabel = "statefulset.kubernetes.io/pod-name";
inline constexpr std::string_view kPodIndexLabel = "apps.kubernetes.io/pod-index";

// The ordinal of "<set>-<i>" for the set named `set_name`; nullopt for another name.
std::optional<int64_t> OrdinalOf(const std::string& set_name, const std::string& pod_name);
// spec.ordinals.start (0 when absent).
int64_t StartOrdinal(const Json& set);

// The claim of template `claim_template` for ordinal `ordinal`: "<template>-<set>-<i>", the
// template's labels plus the set's matchLabels; owned by the set when
// persistentVolumeClaimRetentionPolicy.whenDeleted is Delete (the default, Retain, leaves
// claims unowned).
Json NewClaim(const Json& set, const Json& claim_template, int64_t ordinal);
std::string ClaimName(const Json& set, const Json& claim_template, int64_t ordinal);

// The pod of ordinal `ordinal` from `pod_template` (the set's, or an earlier revision's):
// name "<set>-<i>", the pod-name, pod-index and controller-revision-hash labels, hostname
// and subdomain (spec.serviceName), a persistentVolumeClaim volume per claim template (the
// template's own volume of that name is replaced), the controller reference.
Json NewStatefulPod(const Json& set, const Json& pod_template, int64_t ordinal,
                    const std::string& revision_hash);

}  // namespace berth::controllers
