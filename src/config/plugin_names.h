// The names of the in-tree plugins, each spelled once. Every other mention of an in-tree plugin
// (the plugins' own Name(), the registry, the default sets, the older versions' renames, the
// Policy mapping) uses these constants; what is known about each plugin is in
// in_tree_plugins.h.
//
// Constants only: plugin headers include this file, so it stays free of other includes.
#pragma once

#include <string_view>

namespace berth::config::names {

// Plugins of the default v1 profile.
inline constexpr std::string_view kSchedulingGates = "SchedulingGates";
inline constexpr std::string_view kPrioritySort = "PrioritySort";
inline constexpr std::string_view kNodeUnschedulable = "NodeUnschedulable";
inline constexpr std::string_view kNodeName = "NodeName";
inline constexpr std::string_view kTaintToleration = "TaintToleration";
inline constexpr std::string_view kNodeAffinity = "NodeAffinity";
inline constexpr std::string_view kNodePorts = "NodePorts";
inline constexpr std::string_view kNodeResourcesFit = "NodeResourcesFit";
inline constexpr std::string_view kVolumeRestrictions = "VolumeRestrictions";
inline constexpr std::string_view kNodeVolumeLimits = "NodeVolumeLimits";
inline constexpr std::string_view kVolumeBinding = "VolumeBinding";
inline constexpr std::string_view kVolumeZone = "VolumeZone";
inline constexpr std::string_view kPodTopologySpread = "PodTopologySpread";
inline constexpr std::string_view kInterPodAffinity = "InterPodAffinity";
inline constexpr std::string_view kDynamicResources = "DynamicResources";
inline constexpr std::string_view kDefaultPreemption = "DefaultPreemption";
inline constexpr std::string_view kNodeResourcesBalancedAllocation =
    "NodeResourcesBalancedAllocation";
inline constexpr std::string_view kImageLocality = "ImageLocality";
inline constexpr std::string_view kDefaultBinder = "DefaultBinder";
inline constexpr std::string_view kNodeDeclaredFeatures = "NodeDeclaredFeatures";

// Opt-in: registered, in no default set.
inline constexpr std::string_view kNetworkTraffic = "NetworkTraffic";
inline constexpr std::string_view kCoscheduling = "Coscheduling";
inline constexpr std::string_view kGangScheduling = "GangScheduling";

// Legacy plugins Berth keeps for configurations of the Policy era.
inline constexpr std::string_view kNodeLabel = "NodeLabel";
inline constexpr std::string_view kNodePreferAvoidPods = "NodePreferAvoidPods";
inline constexpr std::string_view kSelectorSpread = "SelectorSpread";
inline constexpr std::string_view kServiceAffinity = "ServiceAffinity";

// Names older versions used for what is now another plugin.
inline constexpr std::string_view kNodeResourcesLeastAllocated = "NodeResourcesLeastAllocated";
inline constexpr std::string_view kNodeResourcesMostAllocated = "NodeResourcesMostAllocated";
inline constexpr std::string_view kRequestedToCapacityRatio = "RequestedToCapacityRatio";
inline constexpr std::string_view kDefaultPodTopologySpread = "DefaultPodTopologySpread";

// The in-tree cloud volume limits, removed from the v1 API.
inline constexpr std::string_view kEBSLimits = "EBSLimits";
inline constexpr std::string_view kGCEPDLimits = "GCEPDLimits";
inline constexpr std::string_view kAzureDiskLimits = "AzureDiskLimits";
inline constexpr std::string_view kCinderLimits = "CinderLimits";

}  // namespace berth::config::names
