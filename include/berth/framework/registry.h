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
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"

namespace berth {

// Typed, validated plugin arguments. Plugins receive a const PluginArgs* and downcast to their
// own args type; they never see YAML.
class PluginArgs {
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

struct PluginRegistration {
  std::string name;
  PluginFactory factory;
  ArgsDecoder decode_args;  // empty: the plugin takes no args
};

class Registry {
 public:
  // Fails if the name is already registered.
  VoidResult Add(PluginRegistration reg);
  const PluginRegistration* Find(std::string_view name) const;
  std::vector<std::string> Names() const;

 private:
  std::map<std::string, PluginRegistration, std::less<>> entries_;
};

}  // namespace berth
