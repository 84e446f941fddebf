// Loading of KubeSchedulerConfiguration files (kubescheduler.config.k8s.io/v1), with
// kube-scheduler's decoding, defaulting and validation, and encoding of the effective
// configuration (what `kube-scheduler --write-config-to` prints). Older documents (a legacy
// Policy, v1alpha1..v1beta3) become v1 documents first (ToV1Document, the one dispatch by kind
// and apiVersion). One file per stage: load_stages.h. Every function may be called from any
// thread.
//
// Decoding is strict: unknown fields are errors, everywhere. Errors are one line,
// "<source>: <yaml path>: <problem>", e.g.
//   sched.yaml: profiles[0].pluginConfig[1].args.scoringStrategy.type: unsupported value "Foo":
//   supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
//
// Defaulting as kube-scheduler does it:
//   * no profiles -> one profile; a single profile without schedulerName gets
//     "default-scheduler" (with several profiles every name must be given).
//   * Profile plugins are the defaults merged with the file's sets, per extension point
//     (MultiPoint included): defaults named under `disabled` (or all with "*") are dropped, a
//     default named again under `enabled` is replaced in place (keeping its position, taking the
//     new weight), other enabled plugins are appended in file order. `disabled` keeps the file's
//     names so the framework's MultiPoint expansion can skip them. The framework expands
//     multi_point; this module does not look at which interfaces plugins implement.
//   * pluginConfig: entries of the file are decoded with the registry's decode_args for that
//     name; then every plugin enabled anywhere in the profile whose registration has a decoder
//     and has no entry gets its defaulted args appended (sorted by plugin name). Entries for
//     names without a decoder (out-of-tree or unknown plugins) are kept verbatim in raw_args.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace berth::config {

inline constexpr std::string_view kConfigKind = "KubeSchedulerConfiguration";
inline constexpr std::string_view kDefaultSchedulerName = "default-scheduler";

// The default plugins of a v1 profile: the MultiPoint list, in kube-scheduler's order and with
// its weights (in_tree_plugins.h); every other extension point is empty.
Plugins DefaultPlugins();

// The merge of a file's plugin sets into defaults described above, per extension point and for
// all points.
PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom);
Plugins MergePlugins(const Plugins& defaults, const Plugins& custom);

// A configuration document of any kind and apiVersion Berth reads, as a v1 document.
struct V1Document {
  nlohmann::json doc;  // kubescheduler.config.k8s.io/v1 (or, untranslated, what was given)
  // Empty when `doc` is the document as given; else "Policy" or the older apiVersion.
  std::string translated_from;
  std::vector<std::string> notes;  // one line per translated, defaulted or dropped item
  // v1alpha1 algorithmSource.policy.configMap: read by `berth scheduler` through the API.
  std::string policy_configmap_namespace, policy_configmap_name;
};

// The dispatch by kind and apiVersion: a Policy is translated by policy.h, v1alpha1..v1beta3 by
// legacy_versions.h; anything else is returned as given for the v1 decoder, which reports a
// wrong kind or apiVersion. `source` names the file in errors; `base_dir` resolves relative
// paths inside the document.
Result<V1Document> ToV1Document(const nlohmann::json& doc, std::string_view source,
                                const std::string& base_dir, const Registry& registry);

// Reads, decodes, defaults and validates a configuration file. A missing or unreadable file is
// an error naming it. The path as given prefixes error messages.
Result<SchedulerConfiguration> LoadConfigFile(const std::string& path, const Registry& registry);
// Same for YAML (or JSON) text; `source` prefixes error messages. The text must hold exactly one
// document.
Result<SchedulerConfiguration> LoadConfig(std::string_view yaml, std::string_view source,
                                          const Registry& registry);
// The v1 decoder: decodes, defaults and validates a parsed v1 document; error messages are
// "<yaml path>: <problem>".
Result<SchedulerConfiguration> DecodeConfiguration(const nlohmann::json& doc,
                                                   const Registry& registry);

// The configuration kube-scheduler runs with when given no file: one "default-scheduler"
// profile with the default plugins and defaulted args for every default plugin the registry can
// decode args for.
SchedulerConfiguration DefaultConfiguration(const Registry& registry);

class FeatureGates;
// What kube-scheduler's applyFeatureGates adds to the default plugins behind gates Berth does
// not read while loading: with GangScheduling on, GangScheduling joins every profile's
// multiPoint after the default plugins (before plugins the file appended), unless the profile
// disabled it (or every default, "*") or names it already. Called once the configuration is
// loaded, by the commands that take --feature-gates.
void ApplyGatedDefaultPlugins(SchedulerConfiguration& config, const FeatureGates& gates);

// The effective configuration as a v1 document (apiVersion and kind included; keys sorted).
// Loading it again yields the same configuration.
nlohmann::json EncodeConfiguration(const SchedulerConfiguration& config);
// EncodeConfiguration rendered as YAML text.
std::string EncodeConfigurationYaml(const SchedulerConfiguration& config);
// Renders a JSON document as block-style YAML; strings that YAML would read as another type
// ("true", "10", "") are quoted.
std::string JsonToYaml(const nlohmann::json& doc);
// A translated configuration as YAML, headed by "# Translated from <what>:" and one comment
// line per note (`berth config convert`).
std::string AnnotatedYaml(std::string_view what, const std::vector<std::string>& notes,
                          const nlohmann::json& doc);

}  // namespace berth::config
