// Defaulting of a decoded v1 configuration (load_stages.h) as kube-scheduler does it. The
// default plugins and weights come from the in-tree plugin table (in_tree_plugins.h).
#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "berth/config/plugin_args.h"
#include "config/feature_gates.h"
#include "config/in_tree_plugins.h"
#include "config/load.h"
#include "config/load_stages.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace internal {
namespace {

// Appends defaulted args for every enabled plugin that has a decoder and no entry yet.
void AppendDefaultArgs(Profile& profile, const std::string& path, const Registry& registry,
                       Problems& p) {
  std::set<std::string, std::less<>> enabled;
  for (const ExtensionPoint& point : kExtensionPoints) {
    for (const PluginRef& ref : (profile.plugins.*point.set).enabled) enabled.insert(ref.name);
  }
  std::set<std::string, std::less<>> configured;
  for (const PluginConfig& config : profile.plugin_config) configured.insert(config.name);
  for (const std::string& name : enabled) {
    if (configured.contains(name)) continue;
    const PluginRegistration* reg = registry.Find(name);
    if (reg == nullptr || !reg->decode_args) continue;
    auto decoded = reg->decode_args(nullptr, ChildPath(path, "pluginConfig"));
    if (!decoded.ok()) {
      // A decoder that rejects its own defaults is a bug in its registration, but report it
      // rather than run with missing args.
      p.AddMessage(decoded.error().message);
      continue;
    }
    if (decoded.value() == nullptr) continue;
    profile.plugin_config.push_back(PluginConfig{name, std::move(decoded).value(), nullptr});
  }
}

}  // namespace

void ApplyDefaults(DecodedConfiguration& decoded, const Registry& registry, Problems& p) {
  std::vector<DecodedProfile>& profiles = decoded.profiles;
  if (profiles.empty()) {
    DecodedProfile implicit;
    implicit.profile.scheduler_name.clear();
    profiles.push_back(std::move(implicit));
  }
  if (profiles.size() == 1 && !profiles[0].name_given) {
    profiles[0].profile.scheduler_name = kDefaultSchedulerName;
  }
  const Plugins defaults = DefaultPlugins();
  for (size_t i = 0; i < profiles.size(); ++i) {
    Profile& profile = profiles[i].profile;
    profile.plugins = MergePlugins(defaults, profiles[i].custom);
    AppendDefaultArgs(profile, IndexPath("profiles", i), registry, p);
    decoded.config.profiles.push_back(profile);
  }
}

// Extended resources an extender manages with ignoredByScheduler are not checked by
// NodeResourcesFit; as upstream, they replace its ignoredResources in every profile.
void ApplyExtenderIgnoredResources(SchedulerConfiguration& c) {
  std::vector<std::string> ignored;
  for (const Extender& e : c.extenders)
    for (const auto& r : e.managed_resources)
      if (r.ignored_by_scheduler) ignored.push_back(r.name);
  if (ignored.empty()) return;
  for (Profile& profile : c.profiles) {
    for (PluginConfig& pc : profile.plugin_config) {
      const auto* fit = dynamic_cast<const NodeResourcesFitArgs*>(pc.args.get());
      if (pc.name != names::kNodeResourcesFit || !fit) continue;
      auto updated = std::make_shared<NodeResourcesFitArgs>(*fit);
      updated->ignored_resources = ignored;
      pc.args = std::move(updated);
    }
  }
}

}  // namespace internal

Plugins DefaultPlugins() {
  Plugins plugins;
  for (const DefaultPointSet& set : DefaultPluginSets(ConfigVersion::kV1)) {
    for (const internal::ExtensionPoint& point : internal::kExtensionPoints) {
      if (point.key != set.point) continue;
      for (const DefaultPlugin& p : set.plugins) {
        (plugins.*point.set).enabled.push_back({std::string(p.name), p.weight});
      }
    }
  }
  return plugins;
}

void ApplyGatedDefaultPlugins(SchedulerConfiguration& config, const FeatureGates& gates) {
  if (!gates.Enabled(features::kGangScheduling)) return;
  const Plugins defaults = DefaultPlugins();
  std::set<std::string> default_names;
  for (const PluginRef& p : defaults.multi_point.enabled) default_names.insert(p.name);
  for (Profile& profile : config.profiles) {
    PluginSet& multi = profile.plugins.multi_point;
    const auto& disabled = multi.disabled;
    if (std::find(disabled.begin(), disabled.end(), "*") != disabled.end() ||
        std::find(disabled.begin(), disabled.end(), names::kGangScheduling) != disabled.end())
      continue;
    auto named = [&](const PluginRef& p) { return p.name == names::kGangScheduling; };
    if (std::any_of(multi.enabled.begin(), multi.enabled.end(), named)) continue;
    // After the last default plugin the merge kept: the file's own plugins come after defaults.
    auto at = multi.enabled.begin();
    for (auto it = multi.enabled.begin(); it != multi.enabled.end(); ++it)
      if (default_names.count(it->name)) at = it + 1;
    multi.enabled.insert(at, PluginRef{std::string(names::kGangScheduling), 0});
  }
}

SchedulerConfiguration DefaultConfiguration(const Registry& registry) {
  nlohmann::json doc = {{"apiVersion", kConfigApiVersion}, {"kind", kConfigKind}};
  auto config = DecodeConfiguration(doc, registry);
  if (config.ok()) return std::move(config).value();
  // Only a registry whose decoders reject their own defaults gets here; run without args.
  SchedulerConfiguration fallback;
  Profile profile;
  profile.plugins = DefaultPlugins();
  fallback.profiles.push_back(std::move(profile));
  return fallback;
}

}  // namespace berth::config
