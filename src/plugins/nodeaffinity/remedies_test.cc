#include "plugins/nodeaffinity/remedies.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "berth/testing/builders.h"

namespace berth::nodeaffinity {
namespace {

using testing::MakeNode;
using testing::MakePod;

NodeSelector Requires(std::string key, std::string op, std::vector<std::string> values) {
  NodeSelector s;
  s.terms.emplace_back();
  s.terms[0].match_expressions.push_back({std::move(key), std::move(op), std::move(values)});
  return s;
}

// The labels a node lacks for the nodeSelector and the profile's addedAffinity together (one
// change, merged with the same change on other nodes); never a machine's own label.
TEST(NodeAffinityRemediesTest, LabelsForTheSelectorAndTheAddedAffinityTogether) {
  auto pod = MakePod().Name("p").NodeSelector("disk", "ssd").Obj();
  const NodeSelector added = Requires("pool", "In", {"batch", "spot"});
  auto n = MakeNode().Name("n").Label("disk", "hdd").Obj();
  const Status st = Status::Unresolvable("node(s) didn't match Pod's node affinity/selector");
  const RejectedNode rejected[] = {{n.get(), &st}};
  RemedyProposal p = ProposeNodeLabels(*pod, &added, rejected);
  ASSERT_EQ(p.remedies.size(), 1u);
  EXPECT_EQ(p.remedies[0].description,
            "label node n with disk=ssd,pool=batch (kubectl label node n disk=ssd pool=batch "
            "--overwrite)");
  EXPECT_EQ(p.remedies[0].merge_key, "label disk=ssd pool=batch");
  ASSERT_EQ(p.remedies[0].nodes.size(), 1u);
  EXPECT_EQ(p.remedies[0].nodes[0]->metadata.labels.at("pool"), "batch");

  auto by_host = MakePod().Name("h").NodeSelector("kubernetes.io/hostname", "other").Obj();
  EXPECT_TRUE(ProposeNodeLabels(*by_host, nullptr, rejected).remedies.empty());
}

}  // namespace
}  // namespace berth::nodeaffinity
