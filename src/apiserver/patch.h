// The patch types kube-apiserver accepts, applied to stored objects.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "berth/api/result.h"

namespace berth::apiserver {

enum class PatchType { kJsonPatch, kMergePatch, kStrategicMergePatch, kApplyPatch };

// Maps a Content-Type to a patch type; UnsupportedMediaType otherwise.
Result<PatchType> PatchTypeFor(std::string_view content_type);

// The patch merge key of a list field by field name (kube's struct tags: "name" for
// containers, "containerPort" for a container's ports, "port" for a service's, ...), given the
// list's `items`; empty for lists replaced whole.
std::string_view PatchMergeKey(std::string_view field, const nlohmann::json& items);
// Whether a list field is a set of primitives merged by value (finalizers).
bool IsPrimitiveSetField(std::string_view field);

// Applies `patch` to `target`. Strategic merge merges lists of objects by kube's patch merge
// keys (containers/env/volumes by name, ports by containerPort, conditions/addresses by type,
// taints by key, ...), honours $patch, $setElementOrder/, $retainKeys and
// $deleteFromPrimitiveList/ directives, and replaces other lists. Apply patches (server-side
// apply) are merged like strategic merge patches: fields the applier sets win (field ownership
// is managed_fields.h's).
Result<nlohmann::json> ApplyPatch(const nlohmann::json& target, const nlohmann::json& patch,
                                  PatchType type);

}  // namespace berth::apiserver
