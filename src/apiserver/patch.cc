#include "apiserver/patch.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

bool AnyItemHas(const Json& list, std::string_view key) {
  if (!list.is_array()) return false;
  return std::any_of(list.begin(), list.end(),
                     [&](const Json& e) { return e.is_object() && e.contains(key); });
}

// The patch merge key of a list field, by field name (kube's struct tags); "" = replace (a
// node's spec.taints, tolerations, ...). `ports` is a container's (merged by containerPort) or
// a service's (merged by port): the items tell which.
std::string_view MergeKey(std::string_view field, const Json& patch, const Json& target) {
  if (field == "containers" || field == "initContainers" || field == "ephemeralContainers" ||
      field == "env" || field == "volumes" || field == "imagePullSecrets" ||
      field == "resourceClaims" || field == "schedulingGates" || field == "hostAliases") {
    return field == "hostAliases" ? "ip" : "name";
  }
  if (field == "ports") {
    return AnyItemHas(patch, "containerPort") || AnyItemHas(target, "containerPort")
               ? "containerPort"
               : "port";
  }
  if (field == "volumeMounts") return "mountPath";
  if (field == "volumeDevices") return "devicePath";
  if (field == "conditions" || field == "addresses") return "type";
  if (field == "ownerReferences") return "uid";
  if (field == "topologySpreadConstraints") return "topologyKey";
  return "";
}

// The keys that identify an item of list `field` under server-side apply: the list-map keys,
// which for ports and spread constraints are more than the one strategic merge key (ports by
// number and protocol, constraints by topology key and whenUnsatisfiable).
std::vector<std::string> ApplyKeys(std::string_view field, const Json& patch, const Json& target) {
  std::string_view key = MergeKey(field, patch, target);
  if (key.empty()) return {};
  if (field == "ports") return {std::string(key), "protocol"};
  if (field == "topologySpreadConstraints") return {"topologyKey", "whenUnsatisfiable"};
  return {std::string(key)};
}

Json Strategic(const Json& target, const Json& patch, bool apply);

Json MergeList(std::string_view field, const Json& target, const Json& patch, bool apply) {
  std::vector<std::string> keys;
  if (apply) {
    keys = ApplyKeys(field, patch, target);
  } else if (std::string_view key = MergeKey(field, patch, target); !key.empty()) {
    keys = {std::string(key)};
  }
  if (IsPrimitiveSetField(field) && target.is_array()) {
    Json out = target;
    for (const auto& v : patch) {
      if (std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
    }
    return out;
  }
  if (keys.empty() || !target.is_array()) {
    Json out = Json::array();
    for (const auto& v : patch) {
      if (v.is_object() && v.contains("$patch")) continue;
      out.push_back(v);
    }
    return out;
  }
  Json out = target;
  for (const auto& item : patch) {
    if (!item.is_object()) continue;
    if (item.value("$patch", "") == "replace") return MergeList("", Json::array(), patch, apply);
    if (!item.contains(keys.front())) continue;
    const Json identity = ListItemKey(item, keys);
    auto it = std::find_if(out.begin(), out.end(), [&](const Json& e) {
      return e.is_object() && e.contains(keys.front()) && ListItemKey(e, keys) == identity;
    });
    if (item.value("$patch", "") == "delete") {
      if (it != out.end()) out.erase(it);
      continue;
    }
    if (it != out.end()) {
      *it = Strategic(*it, item, apply);
    } else {
      out.push_back(Strategic(Json::object(), item, apply));
    }
  }
  return out;
}

Json Strategic(const Json& target, const Json& patch, bool apply) {
  if (!patch.is_object()) return patch;
  if (patch.value("$patch", "") == "replace") {
    Json out = patch;
    out.erase("$patch");
    return out;
  }
  Json out = target.is_object() ? target : Json::object();
  // $setElementOrder and $retainKeys only shape the result; the merge below gives the same
  // content, in the target's order, which clients do not depend on.
  if (auto rk = patch.find("$retainKeys"); rk != patch.end() && rk->is_array()) {
    for (auto it = out.begin(); it != out.end();) {
      if (std::find(rk->begin(), rk->end(), it.key()) == rk->end() && !patch.contains(it.key())) {
        it = out.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (auto it = patch.begin(); it != patch.end(); ++it) {
    const std::string& k = it.key();
    if (k.rfind("$setElementOrder/", 0) == 0 || k == "$retainKeys" || k == "$patch") continue;
    if (k.rfind("$deleteFromPrimitiveList/", 0) == 0) {
      std::string field = k.substr(25);
      if (out.contains(field) && out[field].is_array()) {
        Json kept = Json::array();
        for (const auto& v : out[field]) {
          if (std::find(it->begin(), it->end(), v) == it->end()) kept.push_back(v);
        }
        out[field] = kept;
      }
      continue;
    }
    if (it->is_null()) {
      out.erase(k);
    } else if (it->is_object()) {
      out[k] = Strategic(out.contains(k) ? out[k] : Json::object(), *it, apply);
    } else if (it->is_array()) {
      out[k] = MergeList(k, out.contains(k) ? out[k] : Json::array(), *it, apply);
    } else {
      out[k] = *it;
    }
  }
  return out;
}

}  // namespace

std::vector<std::string> ApplyListKeys(std::string_view field, const nlohmann::json& items) {
  return ApplyKeys(field, items, nullptr);
}

Json ListItemKey(const Json& item, const std::vector<std::string>& keys) {
  Json key = Json::object();
  for (const auto& k : keys) {
    auto v = item.find(k);
    if (v != item.end() && !v->is_null()) {
      key[k] = *v;
    } else if (k == "protocol") {
      key[k] = "TCP";  // the default the server fills in
    }
  }
  return key;
}
bool IsPrimitiveSetField(std::string_view field) { return field == "finalizers"; }

Result<PatchType> PatchTypeFor(std::string_view content_type) {
  std::string_view ct = content_type.substr(0, content_type.find(';'));
  if (ct == "application/json-patch+json") return PatchType::kJsonPatch;
  if (ct == "application/merge-patch+json") return PatchType::kMergePatch;
  if (ct == "application/strategic-merge-patch+json") return PatchType::kStrategicMergePatch;
  if (ct == "application/apply-patch+yaml" || ct == "application/apply-patch+json") {
    return PatchType::kApplyPatch;
  }
  return Error{fmt::format("the body of the request was in an unknown format - accepted media "
                           "types include: application/json-patch+json, "
                           "application/merge-patch+json, application/apply-patch+yaml, "
                           "application/strategic-merge-patch+json"),
               ErrorCode::kUnsupportedMediaType};
}

Result<Json> ApplyPatch(const Json& target, const Json& patch, PatchType type) {
  switch (type) {
    case PatchType::kJsonPatch:
      if (!patch.is_array()) {
        return Error{"json patch must be an array of operations", ErrorCode::kBadRequest};
      }
      try {
        return target.patch(patch);
      } catch (const Json::exception& e) {
        return Error{fmt::format("the server rejected our request due to an error in our "
                                 "request: {}",
                                 e.what()),
                     ErrorCode::kInvalid};
      }
    case PatchType::kMergePatch: {
      if (!patch.is_object()) return Error{"merge patch must be an object", ErrorCode::kBadRequest};
      Json out = target;
      out.merge_patch(patch);
      return out;
    }
    case PatchType::kStrategicMergePatch:
    case PatchType::kApplyPatch:
      if (!patch.is_object()) return Error{"patch must be an object", ErrorCode::kBadRequest};
      return Strategic(target, patch, type == PatchType::kApplyPatch);
  }
  return Error{"unknown patch type", ErrorCode::kBadRequest};
}

}  // namespace berth::apiserver
