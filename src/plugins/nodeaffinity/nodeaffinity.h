// NodeAffinity: spec.nodeSelector, required and preferred node affinity, plus the scheduler-wide
// addedAffinity of config::NodeAffinityArgs (null args: none).
//
// PreFilter: Skip when neither the pod (nodeSelector, required affinity) nor addedAffinity
// constrains nodes; when every required term pins metadata.name with In, the PreFilterResult is
// the union over terms of the names each term allows ("pod affinity terms conflict",
// UnschedulableAndUnresolvable, when that union is empty).
// Filter: "node(s) didn't match scheduler-enforced node affinity" for addedAffinity, then
// "node(s) didn't match Pod's node affinity/selector"; both UnschedulableAndUnresolvable.
// PreScore/Score: sum of the weights of matching preferred terms (pod's and addedAffinity's);
// Skip when there are none. NormalizeScore: 100 * score / max.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeAffinityName = config::names::kNodeAffinity;

PluginRegistration NodeAffinityRegistration();

}  // namespace berth
