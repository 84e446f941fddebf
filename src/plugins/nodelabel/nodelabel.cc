#include "plugins/nodelabel/nodelabel.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <set>

#include "berth/framework/plugin.h"
#include "config/decode_util.h"

namespace berth {
namespace {

using config::internal::Fields;
using config::internal::Problems;

constexpr std::string_view kPresenceViolated = "node(s) didn't have the requested labels";

bool Has(const Node& node, const std::string& label) {
  return node.metadata.labels.count(label) > 0;
}

class NodeLabel final : public FilterPlugin, public ScorePlugin {
 public:
  explicit NodeLabel(NodeLabelArgs args) : args_(std::move(args)) {}
  std::string_view Name() const override { return kNodeLabelName; }

  Status Filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    for (const auto& l : args_.present_labels)
      if (!Has(*node.node(), l)) return Status::Unresolvable(std::string(kPresenceViolated));
    for (const auto& l : args_.absent_labels)
      if (Has(*node.node(), l)) return Status::Unresolvable(std::string(kPresenceViolated));
    return Status::Success();
  }

  Status Score(const CycleState&, const PodInfo&, const NodeInfo& node,
               int64_t* score) const override {
    const size_t total =
        args_.present_labels_preference.size() + args_.absent_labels_preference.size();
    if (total == 0) {
      *score = 0;
      return Status::Success();
    }
    int64_t met = 0;
    for (const auto& l : args_.present_labels_preference) met += Has(*node.node(), l);
    for (const auto& l : args_.absent_labels_preference) met += !Has(*node.node(), l);
    *score = met * kMaxNodeScore / static_cast<int64_t>(total);
    return Status::Success();
  }

 private:
  NodeLabelArgs args_;
};

Result<std::shared_ptr<const PluginArgs>> DecodeNodeLabelArgs(const nlohmann::json* raw,
                                                              const std::string& path) {
  Problems p;
  Fields f(raw, path, p,
           {"apiVersion", "kind", "presentLabels", "absentLabels", "presentLabelsPreference",
            "absentLabelsPreference"});
  auto args = std::make_shared<NodeLabelArgs>();
  if (auto v = f.StringList("presentLabels")) args->present_labels = std::move(*v);
  if (auto v = f.StringList("absentLabels")) args->absent_labels = std::move(*v);
  if (auto v = f.StringList("presentLabelsPreference"))
    args->present_labels_preference = std::move(*v);
  if (auto v = f.StringList("absentLabelsPreference"))
    args->absent_labels_preference = std::move(*v);
  // A label both required and forbidden (or both preferred and avoided) is a contradiction.
  auto conflict = [&](const std::vector<std::string>& a, const std::vector<std::string>& b,
                      std::string_view field) {
    const std::set<std::string> in_a(a.begin(), a.end());
    for (const auto& l : b)
      if (in_a.count(l))
        p.Add(f.PathOf(field),
              fmt::format("invalid value \"{}\": listed as present and absent", l));
  };
  if (p.ok()) {
    conflict(args->present_labels, args->absent_labels, "absentLabels");
    conflict(args->present_labels_preference, args->absent_labels_preference,
             "absentLabelsPreference");
  }
  if (!p.ok()) return p.error();
  return std::shared_ptr<const PluginArgs>(std::move(args));
}

}  // namespace

void NodeLabelArgs::Encode(nlohmann::json& out) const {
  out["presentLabels"] = present_labels;
  out["absentLabels"] = absent_labels;
  out["presentLabelsPreference"] = present_labels_preference;
  out["absentLabelsPreference"] = absent_labels_preference;
}

PluginRegistration NodeLabelRegistration() {
  static const NodeLabelArgs kDefaults;
  auto factory = [](const PluginArgs* args, Handle&) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "NodeLabelArgs");
    if (!typed.ok()) return typed.error();
    return std::unique_ptr<Plugin>(std::make_unique<NodeLabel>(**typed));
  };
  return MakeRegistration(kNodeLabelName, factory, DecodeNodeLabelArgs);
}

}  // namespace berth
