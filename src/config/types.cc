#include "config/types.h"

namespace berth::config {

const PluginArgs* Profile::ArgsFor(std::string_view plugin) const {
  for (const PluginConfig& config : plugin_config) {
    if (config.name == plugin) return config.args.get();
  }
  return nullptr;
}

}  // namespace berth::config
