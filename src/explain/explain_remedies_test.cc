// Plugins explain themselves: a Filter plugin implementing FilterRemedies or FilterRemedySearch
// (out-of-tree ones here, registered as a plugin library would be) is asked what would make
// the nodes it rejected pass, and only the answers that place the pod when applied are shown.
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "berth/framework/remedy.h"
#include "config/load.h"
#include "explain/explain.h"
#include "plugins/registry.h"
#include "testing/builders.h"

namespace berth::explain {
namespace {

using ::testing::ElementsAre;
using testing::MakeNode;
using testing::MakePod;

// Rejects the nodes whose "team" label is not the pod's; knows two changes, one that helps
// (the node's label) and one that does not (a label on the pod).
class TeamLabel final : public FilterPlugin, public FilterRemedies {
 public:
  std::string_view Name() const override { return "TeamLabel"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo& node) const override {
    return Team(node.node()->metadata.labels) == Team(pod->metadata.labels)
               ? Status::Success()
               : Status::Unresolvable("node(s) of another team");
  }
  std::vector<FilterRemedy> Remedies(const Pod& pod, const Node& node,
                                     const Status&) const override {
    auto labelled = std::make_shared<Node>(node);
    labelled->metadata.labels["team"] = Team(pod.metadata.labels);
    labelled->raw.reset();
    FilterRemedy right{
        "team-label",
        fmt::format("label node {} with team={}", node.metadata.name, Team(pod.metadata.labels)),
        nullptr,
        labelled,
        "",
        1};
    auto relabelled = std::make_shared<Pod>(pod);
    relabelled->metadata.labels["mood"] = "hopeful";
    relabelled->raw.reset();
    FilterRemedy wrong{"pod-mood",
                       "label the pod mood=hopeful",
                       relabelled,
                       nullptr,
                       "metadata:\n  labels:\n    mood: hopeful\n",
                       0};
    return {right, wrong};
  }

 private:
  static std::string Team(const Labels& labels) {
    auto it = labels.find("team");
    return it == labels.end() ? "" : it->second;
  }
};

TEST(ExplainRemediesTest, APluginsOwnRemediesAreCheckedAndOnlyThoseThatPlaceThePodShown) {
  Registry registry = InTreeRegistry();
  ASSERT_TRUE(registry
                  .Add({"TeamLabel",
                        [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
                          return std::unique_ptr<Plugin>(std::make_unique<TeamLabel>());
                        },
                        {}})
                  .ok());
  auto config = config::DefaultConfiguration(registry);
  config.profiles[0].plugins.filter.enabled.push_back({"TeamLabel"});
  std::vector<Object> objects{
      Object(MakeNode().Name("a").Label("team", "web").Capacity({{"cpu", "4"}}).Obj()),
      Object(MakeNode().Name("b").Capacity({{"cpu", "4"}}).Obj()),
      Object(MakePod().Name("job").Label("team", "ml").Obj())};
  auto e = Explain(config, registry, objects, "default/job", {});
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->result, "Unschedulable");
  EXPECT_EQ(e->attempt->filter_statuses.at("a").plugin(), "TeamLabel");
  std::vector<std::string> shown;
  for (const auto& s : e->suggestions) shown.push_back(s.kind + ": " + s.description);
  // The pod's new label leaves every node of another team: checked, and dropped.
  EXPECT_THAT(shown, ElementsAre("team-label: label node a with team=ml",
                                 "team-label: label node b with team=ml"));
  EXPECT_EQ(e->suggestions[0].node, "a");
  EXPECT_EQ(e->suggestions[0].opens_nodes, 1);
}

// Rejects the nodes running a pod labelled noisy=true. For each, in order: alternatives that
// relabel the noisy pod (noisy=true again, which does not help; noisy=false, which does) or
// evict it (which would help, but is not tried once an alternative passed); the relabelling is
// one sort of change on every node (a merge key). A note counts the noisy pods.
class Quiet final : public FilterPlugin, public FilterRemedySearch {
 public:
  explicit Quiet(Handle& handle) : handle_(handle) {}
  std::string_view Name() const override { return "Quiet"; }
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    for (const auto& p : node.pods())
      if (Noisy(*p->pod)) return Status::Unschedulable("node(s) with a noisy pod");
    return Status::Success();
  }
  RemedyProposal ProposeRemedies(const Pod&, std::span<const RejectedNode> rejected,
                                 size_t) const override {
    RemedyProposal out;
    int noisy = 0;
    for (const RejectedNode& r : rejected)
      for (const Ptr<Pod>& p : handle_.listers().ListPods()) {
        if (p->spec.node_name != r.node->metadata.name || !Noisy(*p)) continue;
        ++noisy;
        for (std::string value : {"true", "false"}) {
          auto relabelled = std::make_shared<Pod>(*p);
          relabelled->metadata.labels["noisy"] = value;
          relabelled->raw.reset();
          ClusterRemedy relabel;
          relabel.kind = "quiet";
          relabel.variant = "relabel";
          relabel.description = fmt::format("relabel pod {} noisy={}", p->Key(), value);
          relabel.bound_pods.push_back(relabelled);
          relabel.running_pod = p->Key();
          relabel.merge_key = "quiet/relabel";
          relabel.same_change = false;
          relabel.alternatives = r.node->metadata.name;
          out.remedies.push_back(std::move(relabel));
        }
        ClusterRemedy evict;
        evict.kind = "quiet";
        evict.variant = "evict";
        evict.description = fmt::format("evict pod {}", p->Key());
        evict.removed_pods.push_back(p->Key());
        evict.alternatives = r.node->metadata.name;
        out.remedies.push_back(std::move(evict));
      }
    out.notes.push_back(fmt::format("{} noisy pod(s) run on the rejected nodes", noisy));
    return out;
  }

 private:
  static bool Noisy(const Pod& p) {
    auto it = p.metadata.labels.find("noisy");
    return it != p.metadata.labels.end() && it->second == "true";
  }
  Handle& handle_;
};

TEST(ExplainRemediesTest, ASearchChangesBoundPodsTriesAlternativesInOrderAndMergesAlikeChanges) {
  Registry registry = InTreeRegistry();
  ASSERT_TRUE(registry
                  .Add({"Quiet",
                        [](const PluginArgs*, Handle& h) -> Result<std::unique_ptr<Plugin>> {
                          return std::unique_ptr<Plugin>(std::make_unique<Quiet>(h));
                        },
                        {}})
                  .ok());
  auto config = config::DefaultConfiguration(registry);
  config.profiles[0].plugins.filter.enabled.push_back({"Quiet"});
  std::vector<Object> objects{
      Object(MakeNode().Name("a").Capacity({{"cpu", "4"}}).Obj()),
      Object(MakeNode().Name("b").Capacity({{"cpu", "4"}}).Obj()),
      Object(MakePod().Name("noisy-a").Label("noisy", "true").Node("a").Obj()),
      Object(MakePod().Name("noisy-b").Label("noisy", "true").Node("b").Obj()),
      Object(MakePod().Name("calm").Obj())};
  auto e = Explain(config, registry, objects, "default/calm", {});
  ASSERT_TRUE(e.ok()) << e.error().message;
  ASSERT_EQ(e->result, "Unschedulable");
  EXPECT_THAT(e->notes, ElementsAre("2 noisy pod(s) run on the rejected nodes"));
  std::vector<std::string> shown;
  for (const auto& s : e->suggestions)
    shown.push_back(s.kind + "/" + s.change + ": " + s.description);
  // noisy=true places nothing (dropped); noisy=false passes on both nodes (one suggestion and a
  // count); the evictions are alternatives of a node already placed, so never tried.
  EXPECT_THAT(shown, ElementsAre("quiet/relabel: relabel pod default/noisy-a noisy=false; 1 other "
                                 "change(s) like it checked work too"));
  EXPECT_EQ(e->suggestions[0].running_pod, "default/noisy-a");
  EXPECT_EQ(e->suggestions[0].opens_nodes, 1);
}

}  // namespace
}  // namespace berth::explain
