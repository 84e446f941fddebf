#include "plugins/schedulinggates/schedulinggates.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "testing/builders.h"

namespace berth {
namespace {

TEST(SchedulingGates, PreEnqueue) {
  struct Case {
    std::string name;
    std::vector<std::string> gates;
    Code want_code;
    std::string want_message;
  };
  std::vector<Case> cases = {
      {"pod does not carry scheduling gates", {}, Code::kSuccess, ""},
      {"pod carries scheduling gates",
       {"foo", "bar"},
       Code::kUnschedulableAndUnresolvable,
       "waiting for scheduling gates: [foo bar]"},
      {"single gate",
       {"example.com/quota"},
       Code::kUnschedulableAndUnresolvable,
       "waiting for scheduling gates: [example.com/quota]"},
  };
  testing::FakeHandle handle;
  auto plugin = SchedulingGatesRegistration().factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  auto* pre = dynamic_cast<PreEnqueuePlugin*>(plugin->get());
  ASSERT_NE(pre, nullptr);
  EXPECT_EQ(pre->Name(), "SchedulingGates");
  for (const Case& tc : cases) {
    auto b = testing::MakePod().Name("p");
    for (const auto& g : tc.gates) b.SchedulingGate(g);
    Status got = pre->PreEnqueue(*b.Obj());
    EXPECT_EQ(got.code(), tc.want_code) << tc.name;
    EXPECT_EQ(got.Message(), tc.want_message) << tc.name;
  }
}

}  // namespace
}  // namespace berth
