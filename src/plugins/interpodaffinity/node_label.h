// Node label lookup shared by InterPodAffinity's sources (internal).
#pragma once

#include <string>
#include <string_view>

#include "berth/api/objects.h"

namespace berth::interpodaffinity {

// The value of `node`'s label `key`, or null.
inline const std::string* NodeLabel(const Node& node, std::string_view key) {
  auto it = node.metadata.labels.find(key);
  return it == node.metadata.labels.end() ? nullptr : &it->second;
}

}  // namespace berth::interpodaffinity
