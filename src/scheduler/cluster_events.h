// Which cluster events can make a pod schedulable again, by the plugins that rejected it — the
// in-tree plugins' event registrations (kube-scheduler's EventsToRegister), used to move only
// the pods a change can help out of the unschedulable pool.
//
// A pod with no rejecting plugin recorded (an error, a rejection outside the plugins) and pods
// rejected by plugins this table does not know (out-of-tree plugins) move on every event.
// Pure functions; called from the event handlers' threads.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>

#include "berth/api/objects.h"

namespace berth {

// What a node update changed (bits).
enum NodeChange : uint32_t {
  kNodeAllocatableChanged = 1,
  kNodeLabelChanged = 2,
  kNodeTaintChanged = 4,  // taints or spec.unschedulable
  kNodeOtherChanged = 8,  // status conditions, images, annotations, heartbeats
};

uint32_t ClassifyNodeUpdate(const Node& old_node, const Node& new_node);

// True if nothing is known of what can help a pod rejected by `plugins` (no plugin recorded, or
// one outside the table: out-of-tree plugins, extenders): it moves on every event.
bool RejectedOutsideEventTable(const std::set<std::string>& plugins);
// True if a pod rejected by `plugins` may fit after a node update with `changes`.
bool MayHelpAfterNodeUpdate(const std::set<std::string>& plugins, uint32_t changes);
// True if a pod rejected by `plugins` may fit after an object of `kind` (not a pod or node)
// was added, updated or deleted.
bool MayHelpAfterObjectChange(const std::set<std::string>& plugins, std::string_view kind);

}  // namespace berth
