// Reading fields of API objects the simulated kubelets hold as JSON (statuses, slices): a
// missing field, or a field of another shape, reads as null or "".
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace berth::kubelet {

inline const nlohmann::json& Member(const nlohmann::json& obj, const char* key) {
  static const nlohmann::json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

inline std::string StringMember(const nlohmann::json& obj, const char* key) {
  const nlohmann::json& v = Member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

}  // namespace berth::kubelet
