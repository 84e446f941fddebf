// The status.conditions of a namespace being deleted: what kube-controller-manager's namespace
// controller writes after each pass over a Terminating namespace, so `kubectl get ns NAME -o
// yaml` says what holds the deletion up. Five conditions, in this order:
//
//   NamespaceDeletionDiscoveryFailure            False ResourcesDiscovered
//   NamespaceDeletionGroupVersionParsingFailure  False ParsedGroupVersions
//   NamespaceDeletionContentFailure              False ContentDeleted | True ContentDeletionFailed
//   NamespaceContentRemaining                    False ContentRemoved | True SomeResourcesRemain
//   NamespaceFinalizersRemaining                 False ContentHasNoFinalizers
//                                                | True SomeFinalizersRemain
//
// Berth's server knows every resource it serves, so the first two are always False.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace berth::apiserver {

// What one pass over a Terminating namespace left in it.
struct NamespaceContentLeft {
  // Objects left per resource, named "<plural>.<group>" ("configmaps." for core/v1 ConfigMaps,
  // "widgets.example.com").
  std::map<std::string, int64_t> per_resource;
  // Objects left per finalizer they carry (an object counts once for each of its finalizers).
  std::map<std::string, int64_t> per_finalizer;
  // One message per resource whose objects should have gone and have not: no finalizer holds
  // any of them and no grace period of theirs is still running (UnexpectedContentMessage).
  std::vector<std::string> failures;

  int64_t Total() const;
};

// The failure of resource `plural` of `group`/`version` in namespace `ns`: objects left that
// nothing explains.
std::string UnexpectedContentMessage(std::string_view ns, std::string_view group,
                                     std::string_view version, std::string_view plural);

// Sets the deletion conditions in `status` (a namespace's status; made an object if it is not)
// to what `left` says, at `now` (RFC 3339). A condition not there yet is appended (in the
// order above), with lastTransitionTime `now`; one whose status, reason or message differs is
// rewritten in place, its lastTransitionTime set to `now` only when its status changes. Other
// conditions are kept where they are. Returns whether anything changed, so that a pass that
// finds what the last one found writes nothing.
bool UpdateNamespaceDeletionConditions(nlohmann::json& status, const NamespaceContentLeft& left,
                                       std::string_view now);

}  // namespace berth::apiserver
