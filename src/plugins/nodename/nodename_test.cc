#include "plugins/nodename/nodename.h"

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

TEST(NodeName, Filter) {
  struct Case {
    std::string name;
    std::string pod_node;
    std::string node;
    bool fits;
  };
  std::vector<Case> cases = {
      {"no host specified", "", "foo", true},
      {"host matches", "foo", "foo", true},
      {"host doesn't match", "bar", "foo", false},
  };
  testing::FakeHandle handle;
  auto plugin = NodeNameRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* filter = dynamic_cast<FilterPlugin*>(plugin->get());
  ASSERT_NE(filter, nullptr);
  for (const Case& tc : cases) {
    SCOPED_TRACE(tc.name);
    auto b = testing::MakePod().Name("p");
    b.mutable_pod().spec.node_name = tc.pod_node;
    PodInfoPtr pod = b.Info();
    NodeInfo ni = testing::MakeNodeInfo(testing::MakeNode().Name(tc.node).Obj());
    CycleState state;
    Status got = filter->Filter(state, *pod, ni);
    if (tc.fits) {
      EXPECT_TRUE(got.IsSuccess());
    } else {
      EXPECT_EQ(got.code(), Code::kUnschedulableAndUnresolvable);
      EXPECT_EQ(got.reasons(),
                std::vector<std::string>{"node(s) didn't match the requested node name"});
    }
  }
}

}  // namespace
}  // namespace berth
