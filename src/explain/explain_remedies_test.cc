// Plugins explain themselves: a Filter plugin implementing FilterRemedies (an out-of-tree
// one here, registered as a plugin library would be) is asked what would make a node it
// rejected pass, and only the answers that place the pod when applied are shown.
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

}  // namespace
}  // namespace berth::explain
