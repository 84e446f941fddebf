// Builders shared by the PodTopologySpread tests, shaped after the constraints and objects of
// kube-scheduler's podtopologyspread unit tests.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/api/objects.h"
#include "berth/config/plugin_args.h"
#include "berth/framework/node_info.h"
#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "testing/builders.h"

namespace berth::podtopologyspread::testutil {

using berth::testing::MakeNode;
using berth::testing::MakePod;

inline LabelSelector Exists(const std::string& key) {
  LabelSelector s;
  s.match_expressions.push_back({key, "Exists", {}});
  return s;
}

inline LabelSelector MatchLabels(std::initializer_list<std::pair<const char*, const char*>> l) {
  LabelSelector s;
  for (auto& [k, v] : l) s.match_labels[k] = v;
  return s;
}

inline const LabelSelector kFoo = Exists("foo");
inline const LabelSelector kBar = Exists("bar");

struct SpreadOpts {
  std::optional<int32_t> min_domains;
  std::optional<std::string> node_affinity_policy;
  std::optional<std::string> node_taints_policy;
  std::vector<std::string> match_label_keys;
};

inline TopologySpreadConstraint Spread(int32_t max_skew, std::string key, std::string_view action,
                                       std::optional<LabelSelector> selector,
                                       SpreadOpts opts = {}) {
  TopologySpreadConstraint c;
  c.max_skew = max_skew;
  c.topology_key = std::move(key);
  c.when_unsatisfiable = std::string(action);
  c.label_selector = std::move(selector);
  c.min_domains = opts.min_domains;
  c.node_affinity_policy = opts.node_affinity_policy;
  c.node_taints_policy = opts.node_taints_policy;
  c.match_label_keys = opts.match_label_keys;
  return c;
}

inline TopologySpreadConstraint Hard(int32_t max_skew, std::string key,
                                     std::optional<LabelSelector> selector, SpreadOpts opts = {}) {
  return Spread(max_skew, std::move(key), kDoNotSchedule, std::move(selector), std::move(opts));
}

inline TopologySpreadConstraint Soft(int32_t max_skew, std::string key,
                                     std::optional<LabelSelector> selector, SpreadOpts opts = {}) {
  return Spread(max_skew, std::move(key), kScheduleAnyway, std::move(selector), std::move(opts));
}

inline const SpreadOpts kIgnoreAffinity{std::nullopt, "Ignore", std::nullopt, {}};
inline const SpreadOpts kHonorTaints{std::nullopt, std::nullopt, "Honor", {}};

// A node with exactly `labels` (no implicit hostname label).
inline std::shared_ptr<const Node> N(
    const std::string& name, std::initializer_list<std::pair<const char*, const char*>> labels,
    bool unschedulable_taint = false) {
  auto b = MakeNode().Name(name);
  b.mutable_node().metadata.labels.clear();
  for (auto& [k, v] : labels) b.Label(k, v);
  if (unschedulable_taint) b.Taint("node.kubernetes.io/unschedulable", "", "NoSchedule");
  return b.Obj();
}

// A running pod on `node` with `labels`.
inline std::shared_ptr<const Pod> P(
    const std::string& name, const std::string& node,
    std::initializer_list<std::pair<const char*, const char*>> labels,
    const std::string& ns = "default") {
  auto b = MakePod().Name(name).Namespace(ns).Node(node);
  for (auto& [k, v] : labels) b.Label(k, v);
  return b.Obj();
}

inline Affinity NodeAffinity(const std::string& key, const std::string& op,
                             std::vector<std::string> values) {
  Affinity a;
  a.node_affinity.emplace();
  NodeSelectorTerm term;
  term.match_expressions.push_back({key, op, std::move(values)});
  a.node_affinity->required.emplace();
  a.node_affinity->required->terms.push_back(std::move(term));
  return a;
}

inline Toleration TolerateUnschedulable() {
  return Toleration{"node.kubernetes.io/unschedulable", "Exists", "", "NoSchedule", std::nullopt};
}

inline config::PodTopologySpreadArgs ListArgs(std::vector<TopologySpreadConstraint> defaults = {}) {
  config::PodTopologySpreadArgs args;
  args.defaulting_type = "List";
  args.default_constraints = std::move(defaults);
  return args;
}

inline config::PodTopologySpreadArgs SystemArgs() {
  config::PodTopologySpreadArgs args;
  args.defaulting_type = "System";
  return args;
}

// A plugin over a snapshot of `nodes` and `pods`, with `cluster` as its client.
struct Fixture {
  Fixture(const std::vector<std::shared_ptr<const Node>>& nodes,
          const std::vector<std::shared_ptr<const Pod>>& pods,
          const config::PodTopologySpreadArgs& args = ListArgs(), bool comparison_operators = false)
      : handle(Snapshot::Build(nodes, pods), &cluster),
        plugin(args, handle, comparison_operators) {}

  const NodeInfo& Node(const std::string& name) const { return *handle.snapshot().Get(name); }
  std::span<const NodeInfo* const> Nodes() const { return handle.snapshot().nodes(); }

  Status PreFilter(CycleState& state, const std::shared_ptr<const Pod>& pod) {
    PreFilterResult result;
    return plugin.PreFilter(state, *PodInfo::Create(pod), Nodes(), &result);
  }

  InMemoryCluster cluster;
  berth::testing::FakeHandle handle;
  PodTopologySpread plugin;
};

}  // namespace berth::podtopologyspread::testutil
