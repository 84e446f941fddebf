#include "berth/config/plugin_args.h"

#include <nlohmann/json.hpp>

#include "api/codec.h"
#include "config/decode_util.h"
#include "config/plugin_args_codec.h"

namespace berth::config {

namespace {

// apiVersion and kind first, as `kube-scheduler --write-config-to` prints them.
void WriteTypeMeta(nlohmann::json& out, std::string_view kind) {
  out["apiVersion"] = kConfigApiVersion;
  out["kind"] = kind;
}

nlohmann::json EncodeResources(const std::vector<ResourceSpec>& resources) {
  nlohmann::json list = nlohmann::json::array();
  for (const ResourceSpec& r : resources) list.push_back({{"name", r.name}, {"weight", r.weight}});
  return list;
}

nlohmann::json EncodeShape(const std::vector<UtilizationShapePoint>& shape) {
  nlohmann::json list = nlohmann::json::array();
  for (const UtilizationShapePoint& point : shape) {
    list.push_back({{"utilization", point.utilization}, {"score", point.score}});
  }
  return list;
}

}  // namespace

void NodeResourcesFitArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  if (!ignored_resources.empty()) out["ignoredResources"] = ignored_resources;
  if (!ignored_resource_groups.empty()) out["ignoredResourceGroups"] = ignored_resource_groups;
  nlohmann::json strategy = {{"type", scoring_strategy.type},
                             {"resources", EncodeResources(scoring_strategy.resources)}};
  if (scoring_strategy.type == "RequestedToCapacityRatio") {
    strategy["requestedToCapacityRatio"] = {{"shape", EncodeShape(scoring_strategy.shape)}};
  }
  out["scoringStrategy"] = std::move(strategy);
}

void NodeResourcesBalancedAllocationArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  out["resources"] = EncodeResources(resources);
}

void NodeAffinityArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  if (added_affinity) out["addedAffinity"] = EncodeNodeAffinity(*added_affinity);
}

void PodTopologySpreadArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  if (!default_constraints.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const TopologySpreadConstraint& c : default_constraints) {
      list.push_back(EncodeTopologySpreadConstraint(c));
    }
    out["defaultConstraints"] = std::move(list);
  }
  out["defaultingType"] = defaulting_type;
}

void InterPodAffinityArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  out["hardPodAffinityWeight"] = hard_pod_affinity_weight;
  out["ignorePreferredTermsOfExistingPods"] = ignore_preferred_terms_of_existing_pods;
}

void VolumeBindingArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  out["bindTimeoutSeconds"] = bind_timeout_seconds;
  if (!shape.empty()) out["shape"] = EncodeShape(shape);
}

void DefaultPreemptionArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  out["minCandidateNodesPercentage"] = min_candidate_nodes_percentage;
  out["minCandidateNodesAbsolute"] = min_candidate_nodes_absolute;
}

void DynamicResourcesArgs::Encode(nlohmann::json& out) const {
  WriteTypeMeta(out, Kind());
  out["filterTimeout"] = internal::FormatGoDurationMs(filter_timeout_ms);
  out["bindingTimeout"] = internal::FormatGoDurationMs(binding_timeout_ms);
}

}  // namespace berth::config
