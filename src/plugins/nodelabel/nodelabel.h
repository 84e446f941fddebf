// NodeLabel (Filter, Score; legacy, opt-in): kube-scheduler's plugin for the Policy era
// (CheckNodeLabelPresence / labelPreference), kept for old configurations.
//
// Args (NodeLabelArgs): presentLabels / absentLabels — a node must carry every present label
// and none of the absent ones (else UnschedulableAndUnresolvable "node(s) didn't have the
// requested labels"); presentLabelsPreference / absentLabelsPreference — the score is the share
// of preferences the node meets, scaled to 0..100.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/registry.h"
#include "config/plugin_names.h"

namespace berth {

inline constexpr std::string_view kNodeLabelName = config::names::kNodeLabel;

struct NodeLabelArgs final : PluginArgs {
  std::vector<std::string> present_labels, absent_labels;
  std::vector<std::string> present_labels_preference, absent_labels_preference;

  std::string_view Kind() const override { return "NodeLabelArgs"; }
  void Encode(nlohmann::json& out) const override;
};

PluginRegistration NodeLabelRegistration();

}  // namespace berth
