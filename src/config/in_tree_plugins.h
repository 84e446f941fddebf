// What Berth knows about each in-tree plugin, in one place: its status (default, opt-in, legacy,
// renamed, removed), its args decoder, the default plugin sets and score weights of every
// configuration version, and the legacy Policy's predicates and priorities mapped to plugins.
//
// Readers: the v1 defaults (defaults.cc), the older versions' translation (legacy_versions.cc),
// the Policy translation (policy.cc), the args decoders' lookup (InTreeArgsDecoder) and the
// plugin registry (src/plugins/registry.cc, which adds each plugin's factory). The data is
// constant; every function may be called from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth::config {

inline constexpr std::string_view kConfigGroup = "kubescheduler.config.k8s.io/";

// The KubeSchedulerConfiguration versions Berth reads, oldest first.
enum class ConfigVersion { kV1alpha1, kV1alpha2, kV1beta1, kV1beta2, kV1beta3, kV1 };

std::span<const ConfigVersion> AllConfigVersions();
// "v1beta2".
std::string_view ConfigVersionName(ConfigVersion version);
// The version of a full apiVersion ("kubescheduler.config.k8s.io/v1beta2"), or nullopt.
std::optional<ConfigVersion> ParseConfigApiVersion(std::string_view api_version);

enum class PluginStatus {
  kDefault,  // in v1's default profile
  kOptIn,    // registered, in no default set
  kLegacy,   // kept for configurations of the Policy era; in no v1 default set
  kRenamed,  // a name older versions used; becomes `renamed_to`
  kRemoved,  // the in-tree cloud volume limits: dropped from older files, rejected in v1
};

using ArgsDecodeFn = Result<std::shared_ptr<const PluginArgs>> (*)(const nlohmann::json* raw,
                                                                   const std::string& path);

struct InTreePlugin {
  std::string_view name;
  PluginStatus status;
  // The decoder of args typed in plugin_args.h. Null for plugins without args and for those
  // whose args type lives with the plugin (NetworkTraffic, NodeLabel, ServiceAffinity), whose
  // registration supplies the decoder.
  ArgsDecodeFn decode_args = nullptr;
  // kRenamed: the plugin the name became and, for the old resource scoring plugins, the
  // NodeResourcesFit scoring strategy it became.
  std::string_view renamed_to = {};
  std::string_view fit_strategy = {};
  // kRenamed, kRemoved: why, for conversion notes (empty: nothing to add).
  std::string_view note = {};

  // Whether Berth registers a plugin under this name (kDefault, kOptIn, kLegacy).
  bool Registered() const;
};

// Every in-tree name, registered plugins first in registry order.
std::span<const InTreePlugin> InTreePlugins();
// The row of a name, or null.
const InTreePlugin* FindInTreePlugin(std::string_view name);

// One plugin of a default set; `weight` is its score weight (0: not scored there).
struct DefaultPlugin {
  std::string_view name;
  int32_t weight = 0;
};

// The default plugins of one extension point, in order. Keys are the YAML names of the points
// ("filter", "multiPoint").
struct DefaultPointSet {
  std::string_view point;
  std::span<const DefaultPlugin> plugins;
};

// The default plugin sets of a version: per extension point for v1alpha1..v1beta2 (their last
// upstream defaults), MultiPoint only for v1beta3 and v1.
std::span<const DefaultPointSet> DefaultPluginSets(ConfigVersion version);
// The default score weight of a plugin in a version; 0 when it is not a default score plugin.
int32_t DefaultWeight(ConfigVersion version, std::string_view plugin);
// The points at which a plugin is a default in a version, in DefaultPluginSets order.
std::vector<std::string_view> DefaultPoints(ConfigVersion version, std::string_view plugin);

// The legacy Policy's predicates (filters), in the order kube-scheduler ran them.
struct PolicyPredicate {
  std::string_view name;
  std::span<const std::string_view> plugins;  // empty: dropped (see note)
  bool in_default_set;                        // run when a Policy has no `predicates`
  bool mandatory;                             // run whatever the Policy lists
  std::string_view note = {};
};
std::span<const PolicyPredicate> PolicyPredicates();

// The legacy Policy's priorities (scores).
struct PolicyPriority {
  std::string_view name;
  std::string_view plugin;        // empty: dropped (see note)
  int64_t default_weight;         // > 0: in the default set, with this weight
  std::string_view fit_strategy;  // NodeResourcesFit scoring strategy, if any
  std::string_view note = {};
};
std::span<const PolicyPriority> PolicyPriorities();

// Plugins every translated Policy profile keeps: queue order, gates, preemption, binding.
std::span<const std::string_view> PolicyBasePlugins();

}  // namespace berth::config
