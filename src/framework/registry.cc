#include "berth/framework/registry.h"

#include <utility>

namespace berth {

VoidResult Registry::Add(PluginRegistration reg) {
  if (reg.name.empty()) return Error{"plugin registration without a name"};
  if (entries_.contains(reg.name)) {
    return Error{"plugin \"" + reg.name + "\" is already registered"};
  }
  std::string name = reg.name;
  entries_.emplace(std::move(name), std::move(reg));
  return {};
}

const PluginRegistration* Registry::Find(std::string_view name) const {
  auto it = entries_.find(name);
  return it == entries_.end() ? nullptr : &it->second;
}

std::vector<std::string> Registry::Names() const {
  std::vector<std::string> names;
  names.reserve(entries_.size());
  for (const auto& [name, unused] : entries_) names.push_back(name);
  return names;
}

}  // namespace berth
