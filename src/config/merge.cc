// The merge of a file's plugin sets into the default ones (load.h describes the rule).
#include <map>
#include <set>
#include <string>

#include "config/load.h"
#include "config/load_stages.h"

namespace berth::config {

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  std::set<std::string, std::less<>> disabled;
  for (const std::string& name : custom.disabled) {
    out.disabled.push_back(name);
    disabled.insert(name);
  }
  for (const std::string& name : defaults.disabled) {
    out.disabled.push_back(name);
    disabled.insert(name);
  }
  // For a name enabled twice the later entry replaces the default; the earlier one is appended
  // and the framework rejects the duplicate.
  std::map<std::string, size_t, std::less<>> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;
  std::vector<bool> replaced(custom.enabled.size(), false);
  if (!disabled.contains("*")) {
    for (const PluginRef& plugin : defaults.enabled) {
      if (disabled.contains(plugin.name)) continue;
      auto it = custom_index.find(plugin.name);
      if (it != custom_index.end()) {
        out.enabled.push_back(custom.enabled[it->second]);
        replaced[it->second] = true;
      } else {
        out.enabled.push_back(plugin);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced[i]) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

Plugins MergePlugins(const Plugins& defaults, const Plugins& custom) {
  Plugins out;
  for (const internal::ExtensionPoint& point : internal::kExtensionPoints) {
    out.*point.set = MergePluginSet(defaults.*point.set, custom.*point.set);
  }
  return out;
}

}  // namespace berth::config
