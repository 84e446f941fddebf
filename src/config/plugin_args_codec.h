// Decoding, defaulting and validation of the in-tree plugin args (plugin_args.h), with
// kube-scheduler's v1 defaults and validation rules.
//
// Every Decode*Args function is an ArgsDecoder: `raw` is the `args` object of a pluginConfig
// entry (null: the profile gives none, so the defaults are returned), `path` is its YAML path.
// Decoding is strict: unknown fields are errors. `kind` and `apiVersion` keys are accepted and,
// when present, must name the args kind and kubescheduler.config.k8s.io/v1. Errors are one line,
// "<path>.<field>: <problem>", e.g.
//   profiles[0].pluginConfig[1].args.scoringStrategy.type: unsupported value "Foo": supported
//   values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "berth/api/result.h"
#include "berth/config/plugin_args.h"
#include "berth/framework/registry.h"
#include "framework/shape_score.h"  // kMaxCustomPriorityScore

namespace berth::config {

inline constexpr std::string_view kConfigApiVersion = "kubescheduler.config.k8s.io/v1";

using ArgsResult = Result<std::shared_ptr<const PluginArgs>>;

ArgsResult DecodeDefaultPreemptionArgs(const nlohmann::json* raw, const std::string& path);
// DynamicResourcesArgs: filterTimeout (default 10s, 0 disables), bindingTimeout (default 600s).
ArgsResult DecodeDynamicResourcesArgs(const nlohmann::json* raw, const std::string& path);
ArgsResult DecodeInterPodAffinityArgs(const nlohmann::json* raw, const std::string& path);
ArgsResult DecodeNodeAffinityArgs(const nlohmann::json* raw, const std::string& path);
ArgsResult DecodeNodeResourcesFitArgs(const nlohmann::json* raw, const std::string& path);
ArgsResult DecodeNodeResourcesBalancedAllocationArgs(const nlohmann::json* raw,
                                                     const std::string& path);
ArgsResult DecodePodTopologySpreadArgs(const nlohmann::json* raw, const std::string& path);
// VolumeBindingArgs with the StorageCapacityScoring feature off (kube-scheduler's default):
// `shape` is rejected.
ArgsResult DecodeVolumeBindingArgs(const nlohmann::json* raw, const std::string& path);

// VolumeBindingArgs with the StorageCapacityScoring feature gate on: `shape` is allowed and
// defaults to [{0, 10}, {100, 0}].
ArgsDecoder VolumeBindingArgsDecoder(bool storage_capacity_scoring);

// The args decoder of an in-tree plugin whose args are typed in plugin_args.h (the decoder
// column of in_tree_plugins.h), or an empty function for other plugins and unknown names.
ArgsDecoder InTreeArgsDecoder(std::string_view plugin_name);

// Validation of typed args, as the decoders apply it after defaulting; for args built in code.
// `path` prefixes messages. Returns the first problem.
VoidResult ValidateDefaultPreemptionArgs(const DefaultPreemptionArgs& args, std::string_view path);
VoidResult ValidateDynamicResourcesArgs(const DynamicResourcesArgs& args, std::string_view path);
VoidResult ValidateInterPodAffinityArgs(const InterPodAffinityArgs& args, std::string_view path);
VoidResult ValidateNodeAffinityArgs(const NodeAffinityArgs& args, std::string_view path);
VoidResult ValidateNodeResourcesFitArgs(const NodeResourcesFitArgs& args, std::string_view path);
VoidResult ValidateNodeResourcesBalancedAllocationArgs(
    const NodeResourcesBalancedAllocationArgs& args, std::string_view path);
VoidResult ValidatePodTopologySpreadArgs(const PodTopologySpreadArgs& args, std::string_view path);
VoidResult ValidateVolumeBindingArgs(const VolumeBindingArgs& args, std::string_view path,
                                     bool storage_capacity_scoring = false);

}  // namespace berth::config
