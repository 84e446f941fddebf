#include "config/in_tree_plugins.h"

#include <algorithm>

#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using namespace names;  // NOLINT(build/namespaces): the table reads as a list of names

constexpr ConfigVersion kVersions[] = {ConfigVersion::kV1alpha1, ConfigVersion::kV1alpha2,
                                       ConfigVersion::kV1beta1,  ConfigVersion::kV1beta2,
                                       ConfigVersion::kV1beta3,  ConfigVersion::kV1};
constexpr std::string_view kVersionNames[] = {"v1alpha1", "v1alpha2", "v1beta1",
                                              "v1beta2",  "v1beta3",  "v1"};

constexpr std::string_view kCsiMigrated =
    "in-tree volume limits are counted by NodeVolumeLimits (CSI migration)";

constexpr PluginStatus kDefault = PluginStatus::kDefault;
constexpr PluginStatus kOptIn = PluginStatus::kOptIn;
constexpr PluginStatus kLegacy = PluginStatus::kLegacy;
constexpr PluginStatus kRenamed = PluginStatus::kRenamed;
constexpr PluginStatus kRemoved = PluginStatus::kRemoved;

constexpr InTreePlugin kPlugins[] = {
    {kSchedulingGates, kDefault},
    {kPrioritySort, kDefault},
    {kNodeUnschedulable, kDefault},
    {kNodeName, kDefault},
    {kTaintToleration, kDefault},
    {kNodeAffinity, kDefault, &DecodeNodeAffinityArgs},
    {kNodePorts, kDefault},
    {kNodeResourcesFit, kDefault, &DecodeNodeResourcesFitArgs},
    {kVolumeRestrictions, kDefault},
    {kNodeVolumeLimits, kDefault},
    {kVolumeBinding, kDefault, &DecodeVolumeBindingArgs},
    {kVolumeZone, kDefault},
    {kPodTopologySpread, kDefault, &DecodePodTopologySpreadArgs},
    {kInterPodAffinity, kDefault, &DecodeInterPodAffinityArgs},
    {kDynamicResources, kDefault, &DecodeDynamicResourcesArgs},
    {kDefaultPreemption, kDefault, &DecodeDefaultPreemptionArgs},
    {kNodeResourcesBalancedAllocation, kDefault, &DecodeNodeResourcesBalancedAllocationArgs},
    {kImageLocality, kDefault},
    {kDefaultBinder, kDefault},
    {kNodeDeclaredFeatures, kDefault},
    {kNetworkTraffic, kOptIn},
    {kCoscheduling, kOptIn},
    {kGangScheduling, kOptIn},
    {kNodeLabel, kLegacy},
    {kNodePreferAvoidPods, kLegacy},
    {kSelectorSpread, kLegacy},
    {kServiceAffinity, kLegacy},
    {kNodeResourcesLeastAllocated, kRenamed, nullptr, kNodeResourcesFit, "LeastAllocated"},
    {kNodeResourcesMostAllocated, kRenamed, nullptr, kNodeResourcesFit, "MostAllocated"},
    {kRequestedToCapacityRatio, kRenamed, nullptr, kNodeResourcesFit, "RequestedToCapacityRatio"},
    {kDefaultPodTopologySpread, kRenamed, nullptr, kSelectorSpread, "", "its later name"},
    {kEBSLimits, kRemoved, nullptr, "", "", kCsiMigrated},
    {kGCEPDLimits, kRemoved, nullptr, "", "", kCsiMigrated},
    {kAzureDiskLimits, kRemoved, nullptr, "", "", kCsiMigrated},
    {kCinderLimits, kRemoved, nullptr, "", "", kCsiMigrated},
};

// ------------------------------------------------------------------ default sets

// v1: kube-scheduler's MultiPoint list, in its order and with its weights. DynamicResources
// (DynamicResourceAllocation, GA and on) comes before DefaultPreemption, so that PostFilter
// frees an idle claim's devices before evicting pods.
constexpr DefaultPlugin kV1MultiPoint[] = {
    {kSchedulingGates},
    {kPrioritySort},
    {kNodeUnschedulable},
    {kNodeName},
    {kTaintToleration, 3},
    {kNodeAffinity, 2},
    {kNodePorts},
    {kNodeResourcesFit, 1},
    {kVolumeRestrictions},
    {kNodeVolumeLimits},
    {kVolumeBinding},
    {kVolumeZone},
    {kPodTopologySpread, 2},
    {kInterPodAffinity, 2},
    {kDynamicResources},
    {kDefaultPreemption},
    {kNodeResourcesBalancedAllocation, 1},
    {kImageLocality, 1},
    {kDefaultBinder},
    // NodeDeclaredFeatures (GA and locked on in v1.37) is appended by kube-scheduler's
    // applyFeatureGates after the static list.
    {kNodeDeclaredFeatures},
};
constexpr DefaultPointSet kV1Sets[] = {{"multiPoint", kV1MultiPoint}};

// v1beta3 (1.25-1.28, DynamicResourceAllocation alpha and off): the same without it.
constexpr DefaultPlugin kV1beta3MultiPoint[] = {
    {kSchedulingGates},
    {kPrioritySort},
    {kNodeUnschedulable},
    {kNodeName},
    {kTaintToleration, 3},
    {kNodeAffinity, 2},
    {kNodePorts},
    {kNodeResourcesFit, 1},
    {kVolumeRestrictions},
    {kNodeVolumeLimits},
    {kVolumeBinding},
    {kVolumeZone},
    {kPodTopologySpread, 2},
    {kInterPodAffinity, 2},
    {kDefaultPreemption},
    {kNodeResourcesBalancedAllocation, 1},
    {kImageLocality, 1},
    {kDefaultBinder},
};
constexpr DefaultPointSet kV1beta3Sets[] = {{"multiPoint", kV1beta3MultiPoint}};

// Points shared by v1alpha1..v1beta2.
constexpr DefaultPlugin kOldQueueSort[] = {{kPrioritySort}};
constexpr DefaultPlugin kOldPostFilter[] = {{kDefaultPreemption}};
constexpr DefaultPlugin kOldPreScore[] = {
    {kInterPodAffinity}, {kPodTopologySpread}, {kTaintToleration}, {kNodeAffinity}};
constexpr DefaultPlugin kOldVolumeBinding[] = {{kVolumeBinding}};
constexpr DefaultPlugin kOldBind[] = {{kDefaultBinder}};

// The last defaults of v1alpha1, v1alpha2 and v1beta1 (1.21-1.22, DefaultPodTopologySpread on).
constexpr DefaultPlugin kV1beta1PreFilter[] = {{kNodeResourcesFit},  {kNodePorts},
                                               {kPodTopologySpread}, {kInterPodAffinity},
                                               {kVolumeBinding},     {kNodeAffinity}};
constexpr DefaultPlugin kV1beta1Filter[] = {
    {kNodeUnschedulable}, {kNodeResourcesFit},   {kNodeName},        {kNodePorts},
    {kNodeAffinity},      {kVolumeRestrictions}, {kTaintToleration}, {kEBSLimits},
    {kGCEPDLimits},       {kNodeVolumeLimits},   {kAzureDiskLimits}, {kVolumeBinding},
    {kVolumeZone},        {kPodTopologySpread},  {kInterPodAffinity}};
constexpr DefaultPlugin kV1beta1Score[] = {{kNodeResourcesBalancedAllocation, 1},
                                           {kImageLocality, 1},
                                           {kInterPodAffinity, 1},
                                           {kNodeResourcesLeastAllocated, 1},
                                           {kNodeAffinity, 1},
                                           {kNodePreferAvoidPods, 10000},
                                           {kPodTopologySpread, 2},
                                           {kTaintToleration, 1}};
constexpr DefaultPointSet kV1beta1Sets[] = {
    {"queueSort", kOldQueueSort},   {"preFilter", kV1beta1PreFilter}, {"filter", kV1beta1Filter},
    {"postFilter", kOldPostFilter}, {"preScore", kOldPreScore},       {"score", kV1beta1Score},
    {"reserve", kOldVolumeBinding}, {"preBind", kOldVolumeBinding},   {"bind", kOldBind}};

// The last defaults of v1beta2 (1.27).
constexpr DefaultPlugin kV1beta2PreFilter[] = {
    {kNodeResourcesFit},  {kNodePorts},        {kVolumeRestrictions},
    {kPodTopologySpread}, {kInterPodAffinity}, {kVolumeBinding},
    {kVolumeZone},        {kNodeAffinity},     {kTaintToleration}};
constexpr DefaultPlugin kV1beta2Filter[] = {
    {kNodeUnschedulable}, {kNodeName},          {kTaintToleration},    {kNodeAffinity},
    {kNodePorts},         {kNodeResourcesFit},  {kVolumeRestrictions}, {kEBSLimits},
    {kGCEPDLimits},       {kNodeVolumeLimits},  {kAzureDiskLimits},    {kVolumeBinding},
    {kVolumeZone},        {kPodTopologySpread}, {kInterPodAffinity}};
constexpr DefaultPlugin kV1beta2Score[] = {{kNodeResourcesBalancedAllocation, 1},
                                           {kImageLocality, 1},
                                           {kInterPodAffinity, 1},
                                           {kNodeResourcesFit, 1},
                                           {kNodeAffinity, 1},
                                           {kPodTopologySpread, 2},
                                           {kTaintToleration, 1}};
constexpr DefaultPointSet kV1beta2Sets[] = {
    {"queueSort", kOldQueueSort},   {"preFilter", kV1beta2PreFilter}, {"filter", kV1beta2Filter},
    {"postFilter", kOldPostFilter}, {"preScore", kOldPreScore},       {"score", kV1beta2Score},
    {"reserve", kOldVolumeBinding}, {"preBind", kOldVolumeBinding},   {"bind", kOldBind}};

// ------------------------------------------------------------------ the legacy Policy

constexpr std::string_view kGeneral[] = {kNodeResourcesFit, kNodeName, kNodePorts, kNodeAffinity};
constexpr std::string_view kToNodeUnschedulable[] = {kNodeUnschedulable};
constexpr std::string_view kToNodeName[] = {kNodeName};
constexpr std::string_view kToNodePorts[] = {kNodePorts};
constexpr std::string_view kToNodeAffinity[] = {kNodeAffinity};
constexpr std::string_view kToFit[] = {kNodeResourcesFit};
constexpr std::string_view kToVolumeRestrictions[] = {kVolumeRestrictions};
constexpr std::string_view kToTaintToleration[] = {kTaintToleration};
constexpr std::string_view kToNodeVolumeLimits[] = {kNodeVolumeLimits};
constexpr std::string_view kToVolumeBinding[] = {kVolumeBinding};
constexpr std::string_view kToVolumeZone[] = {kVolumeZone};
constexpr std::string_view kToPodTopologySpread[] = {kPodTopologySpread};
constexpr std::string_view kToInterPodAffinity[] = {kInterPodAffinity};

constexpr std::string_view kPolicyCsiMigrated =
    "in-tree volume limits: counted by NodeVolumeLimits (CSI)";
constexpr std::string_view kConditionsAreTaints = "node conditions are taints (TaintToleration)";

constexpr PolicyPredicate kPredicates[] = {
    {"CheckNodeUnschedulable", kToNodeUnschedulable, true, true, ""},
    {"GeneralPredicates", kGeneral, true, false, ""},
    {"HostName", kToNodeName, false, false, ""},
    {"PodFitsHostPorts", kToNodePorts, false, false, ""},
    {"PodFitsPorts", kToNodePorts, false, false, ""},
    {"MatchNodeSelector", kToNodeAffinity, false, false, ""},
    {"PodFitsResources", kToFit, false, false, ""},
    {"NoDiskConflict", kToVolumeRestrictions, true, false, ""},
    {"PodToleratesNodeTaints", kToTaintToleration, true, true, ""},
    {"MaxEBSVolumeCount", {}, true, false, kPolicyCsiMigrated},
    {"MaxGCEPDVolumeCount", {}, true, false, kPolicyCsiMigrated},
    {"MaxCSIVolumeCountPred", kToNodeVolumeLimits, true, false, ""},
    {"MaxAzureDiskVolumeCount", {}, true, false, kPolicyCsiMigrated},
    {"MaxCinderVolumeCount", {}, false, false, kPolicyCsiMigrated},
    {"CheckVolumeBinding", kToVolumeBinding, true, false, ""},
    {"NoVolumeZoneConflict", kToVolumeZone, true, false, ""},
    {"EvenPodsSpread", kToPodTopologySpread, true, false, ""},
    {"MatchInterPodAffinity", kToInterPodAffinity, true, false, ""},
    {"CheckNodeCondition", {}, false, false, kConditionsAreTaints},
    {"CheckNodeMemoryPressure", {}, false, false, kConditionsAreTaints},
    {"CheckNodeDiskPressure", {}, false, false, kConditionsAreTaints},
    {"CheckNodePIDPressure", {}, false, false, kConditionsAreTaints},
    {"PodToleratesNodeNoExecuteTaints", {}, false, false, "covered by TaintToleration"},
};

// Default weights are the Policy era's (priorities absent); SelectorSpreadPriority's 1 is
// served by PodTopologySpread's system defaults, as with DefaultPodTopologySpread.
constexpr PolicyPriority kPriorities[] = {
    {"SelectorSpreadPriority", kSelectorSpread, 0, "", ""},
    {"ServiceSpreadingPriority", kSelectorSpread, 0, "", ""},
    {"InterPodAffinityPriority", kInterPodAffinity, 1, "", ""},
    {"LeastRequestedPriority", kNodeResourcesFit, 1, "LeastAllocated", ""},
    {"MostRequestedPriority", kNodeResourcesFit, 0, "MostAllocated", ""},
    {"RequestedToCapacityRatioPriority", kNodeResourcesFit, 0, "RequestedToCapacityRatio", ""},
    {"BalancedResourceAllocation", kNodeResourcesBalancedAllocation, 1, "", ""},
    {"NodePreferAvoidPodsPriority", kNodePreferAvoidPods, 10000, "", ""},
    {"NodeAffinityPriority", kNodeAffinity, 1, "", ""},
    {"TaintTolerationPriority", kTaintToleration, 1, "", ""},
    {"ImageLocalityPriority", kImageLocality, 1, "", ""},
    {"EvenPodsSpreadPriority", kPodTopologySpread, 2, "", ""},
    {"EqualPriority", "", 0, "", "gives every node the same score: no effect on the choice"},
};

constexpr std::string_view kPolicyBase[] = {kPrioritySort, kSchedulingGates, kDefaultPreemption,
                                            kDefaultBinder};

}  // namespace

std::span<const ConfigVersion> AllConfigVersions() { return kVersions; }

std::string_view ConfigVersionName(ConfigVersion version) {
  return kVersionNames[static_cast<size_t>(version)];
}

std::optional<ConfigVersion> ParseConfigApiVersion(std::string_view api_version) {
  if (api_version.substr(0, kConfigGroup.size()) != kConfigGroup) return std::nullopt;
  const std::string_view version = api_version.substr(kConfigGroup.size());
  for (ConfigVersion v : kVersions)
    if (ConfigVersionName(v) == version) return v;
  return std::nullopt;
}

bool InTreePlugin::Registered() const {
  return status == PluginStatus::kDefault || status == PluginStatus::kOptIn ||
         status == PluginStatus::kLegacy;
}

std::span<const InTreePlugin> InTreePlugins() { return kPlugins; }

const InTreePlugin* FindInTreePlugin(std::string_view name) {
  for (const InTreePlugin& p : kPlugins)
    if (p.name == name) return &p;
  return nullptr;
}

std::span<const DefaultPointSet> DefaultPluginSets(ConfigVersion version) {
  switch (version) {
    case ConfigVersion::kV1alpha1:
    case ConfigVersion::kV1alpha2:
    case ConfigVersion::kV1beta1:
      return kV1beta1Sets;
    case ConfigVersion::kV1beta2:
      return kV1beta2Sets;
    case ConfigVersion::kV1beta3:
      return kV1beta3Sets;
    case ConfigVersion::kV1:
      return kV1Sets;
  }
  return kV1Sets;
}

int32_t DefaultWeight(ConfigVersion version, std::string_view plugin) {
  for (const DefaultPointSet& set : DefaultPluginSets(version))
    for (const DefaultPlugin& p : set.plugins)
      if (p.name == plugin && p.weight > 0) return p.weight;
  return 0;
}

std::vector<std::string_view> DefaultPoints(ConfigVersion version, std::string_view plugin) {
  std::vector<std::string_view> out;
  for (const DefaultPointSet& set : DefaultPluginSets(version))
    for (const DefaultPlugin& p : set.plugins)
      if (p.name == plugin) out.push_back(set.point);
  return out;
}

std::span<const PolicyPredicate> PolicyPredicates() { return kPredicates; }

std::span<const PolicyPriority> PolicyPriorities() { return kPriorities; }

std::span<const std::string_view> PolicyBasePlugins() { return kPolicyBase; }

}  // namespace berth::config
