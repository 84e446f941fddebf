// ServiceAffinity (PreFilter, Filter, Score; legacy, opt-in): the Policy era's
// CheckServiceAffinity predicate and ServiceAntiAffinity priority, kept for old configurations.
//
// Args (ServiceAffinityArgs):
//   affinityLabels — pods of one Service land on nodes that agree on these labels: the values
//     come from the pod's nodeSelector, else from the node of an already placed pod matching the
//     pod's labels (when the pod belongs to a Service); a node that differs is Unschedulable
//     "node(s) didn't match service affinity".
//   antiAffinityLabelsPreference — spread a Service's pods over the values of these labels: a
//     node scores by how few of the Service's pods run under its label value (each label an
//     equal share of 100; nodes without the label get nothing for it).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kServiceAffinityName = config::names::kServiceAffinity;

struct ServiceAffinityArgs final : PluginArgs {
  std::vector<std::string> affinity_labels;
  std::vector<std::string> anti_affinity_labels_preference;
  std::string_view Kind() const override { return "ServiceAffinityArgs"; }
  void Encode(nlohmann::json& out) const override;
};

PluginRegistration ServiceAffinityRegistration();

}  // namespace berth
