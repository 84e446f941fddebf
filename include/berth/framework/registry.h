// Registry: plugin name -> how to decode its args and how to build it.
//
// The in-tree registry is built in one function (src/plugins/registry.h: InTreeRegistry());
// out-of-tree plugins add their own PluginRegistration before profiles are built.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "berth/api/result.h"
#include "berth/export.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"

namespace berth {

// Typed, validated plugin arguments. Plugins receive a const PluginArgs* and downcast to their
// own args type; they never see YAML.
class BERTH_EXPORT PluginArgs {
 public:
  virtual ~PluginArgs() = default;
  // The args kind as written in configuration files, e.g. "NodeResourcesFitArgs".
  virtual std::string_view Kind() const = 0;
  // Writes the effective (defaulted) args as a JSON object (for `berth config print-defaults`).
  virtual void Encode(nlohmann::json& out) const = 0;
};

using PluginFactory =
    std::function<Result<std::unique_ptr<Plugin>>(const PluginArgs* args, Handle& handle)>;

// Decodes, defaults and validates args. `raw` is null when the profile gives none (defaults).
// `path` is the args' YAML path (e.g. "profiles[0].pluginConfig[1].args"); errors are returned
// as "<path>.<field>: <problem>".
using ArgsDecoder = std::function<Result<std::shared_ptr<const PluginArgs>>(
    const nlohmann::json* raw, const std::string& path)>;

struct BERTH_EXPORT PluginRegistration {
  std::string name;
  PluginFactory factory;
  ArgsDecoder decode_args;  // empty: the plugin takes no args
};

// A plugin's registration: its name, how to build it, and how to decode its args (none: the
// plugin takes no args). Called by each plugin's registration function, once, on any thread.
inline PluginRegistration MakeRegistration(std::string_view name, PluginFactory factory,
                                           ArgsDecoder decode_args = {}) {
  return PluginRegistration{std::string(name), std::move(factory), std::move(decode_args)};
}

// The factory of a plugin built from the framework's handle, or from nothing, whatever its args.
template <class PluginT>
PluginFactory FactoryOf() {
  return [](const PluginArgs*, Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    if constexpr (std::is_constructible_v<PluginT, Handle&>) {
      return std::unique_ptr<Plugin>(std::make_unique<PluginT>(handle));
    } else {
      return std::unique_ptr<Plugin>(std::make_unique<PluginT>());
    }
  };
}

// A factory's args as its own type: `defaults` when the profile gave none, an error naming both
// kinds when they are of another type (kube-scheduler's "want args to be of type ...").
template <class ArgsT>
Result<const ArgsT*> ArgsAs(const PluginArgs* args, const ArgsT* defaults,
                            std::string_view want_kind) {
  if (args == nullptr) return defaults;
  if (const auto* typed = dynamic_cast<const ArgsT*>(args)) return typed;
  return Error{"want args to be of type " + std::string(want_kind) + ", got " +
               std::string(args->Kind())};
}

class BERTH_EXPORT Registry {
 public:
  // Fails if the name is already registered.
  VoidResult Add(PluginRegistration reg);
  const PluginRegistration* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PluginRegistration, std::less<>> entries_;
};

}  // namespace berth
