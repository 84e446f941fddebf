// The patch types kube-apiserver accepts, applied to stored objects.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

enum class PatchType { kJsonPatch, kMergePatch, kStrategicMergePatch, kApplyPatch };

// Maps a Content-Type to a patch type; UnsupportedMediaType otherwise.
Result<PatchType> PatchTypeFor(std::string_view content_type);

// The keys server-side apply identifies an item of list `field` by (its list-map keys: "name"
// for containers, containerPort and protocol for a container's ports, port and protocol for a
// service's, ...), given the list's `items`; empty for lists replaced whole.
std::vector<std::string> ApplyListKeys(std::string_view field, const nlohmann::json& items);
// An item's identity under `keys`: an object of those fields, protocol defaulted to TCP.
nlohmann::json ListItemKey(const nlohmann::json& item, const std::vector<std::string>& keys);
// Whether a list field is a set of primitives merged by value (finalizers).
bool IsPrimitiveSetField(std::string_view field);

// Applies `patch` to `target`. Strategic merge merges lists of objects by kube's patch merge
// keys (containers/env/volumes by name, ports by containerPort, conditions/addresses by type,
// taints by key, ...), honours $patch, $setElementOrder/, $retainKeys and
// $deleteFromPrimitiveList/ directives, and replaces other lists. Apply patches (server-side
// apply) are merged like strategic merge patches, but identify list items by all their
// list-map keys (two ports of one number and different protocols are two items): fields the
// applier sets win (field ownership is managed_fields.h's).
Result<nlohmann::json> ApplyPatch(const nlohmann::json& target, const nlohmann::json& patch,
                                  PatchType type);

}  // namespace berth::apiserver
