// Test helpers for configuration tests: a registry of the default plugins (with their args
// decoders) plus extra names, and the plugins a profile runs at an extension point.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "config/load.h"
#include "config/plugin_args_codec.h"
#include "config/types.h"

namespace berth::testing {

inline Registry DefaultPluginsRegistry(std::initializer_list<const char*> extra = {}) {
  Registry registry;
  for (const config::PluginRef& p : config::DefaultPlugins().multi_point.enabled)
    (void)registry.Add({p.name, {}, config::InTreeArgsDecoder(p.name)});
  for (const char* name : extra) (void)registry.Add({name, {}, {}});
  return registry;
}

// The plugins a point runs: MultiPoint's not disabled there, then its own enabled ones.
inline std::vector<std::string> PluginsAt(const config::Profile& p,
                                          config::PluginSet config::Plugins::*point) {
  std::vector<std::string> out;
  const config::PluginSet& set = p.plugins.*point;
  for (const auto& e : p.plugins.multi_point.enabled)
    if (std::find(set.disabled.begin(), set.disabled.end(), e.name) == set.disabled.end())
      out.push_back(e.name);
  for (const auto& e : set.enabled) out.push_back(e.name);
  return out;
}

}  // namespace berth::testing
