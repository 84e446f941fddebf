#include "plugins/nodeunschedulable/nodeunschedulable.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "testing/builders.h"

namespace berth {
namespace {

TEST(NodeUnschedulable, Filter) {
  struct Case {
    std::string name;
    std::vector<Toleration> tolerations;
    bool unschedulable;
    bool fits;
  };
  std::vector<Case> cases = {
      {"Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)",
       {},
       true,
       false},
      {"Schedule pod to normal node", {}, false, true},
      {"Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
       {{"node.kubernetes.io/unschedulable", "", "", "NoSchedule"}},
       true,
       true},
      {"Exists toleration without key tolerates cordoned nodes",
       {{"", "Exists", "", ""}},
       true,
       true},
      {"Toleration for another effect does not help",
       {{"node.kubernetes.io/unschedulable", "Exists", "", "NoExecute"}},
       true,
       false},
  };
  testing::FakeHandle handle;
  auto plugin = NodeUnschedulableRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  ASSERT_NE(filter, nullptr);
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto b = testing::MakePod().Name("p");
    for (const auto& t : tc.tolerations) b.Toleration(t);
    PodInfoPtr pod = b.Info();
    NodeInfo ni =
        testing::MakeNodeInfo(testing::MakeNode().Name("n").Unschedulable(tc.unschedulable).Obj());
    CycleState state;
    Status got = filter->Filter(state, *pod, ni);
    if (tc.fits) {
      EXPECT_TRUE(got.IsSuccess()) << got.Message();
    } else {
      EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(got.reasons(), std::vector<std::string>{"node(s) were unschedulable"});
    }
  }
}

}  // namespace
}  // namespace berth
