// Compiled (not linked) by this project to prove the installed SDK ships the test builders and
// that they need nothing beyond Berth::sdk's headers. A test executable using them needs
// Quantity::Parse and NodeInfo, which live in Berth's own libraries, not in the installed SDK.
#include <berth/testing/builders.h>

#include <memory>

namespace {

using berth::testing::MakeNode;
using berth::testing::MakeNodeInfo;
using berth::testing::MakePod;

[[maybe_unused]] berth::NodeInfo TwoPodsOnOneNode() {
  auto node = MakeNode().Name("piworknode001").Capacity({{"cpu", "4"}, {"memory", "8Gi"}}).Obj();
  auto a = MakePod().Name("a").Req({{"cpu", "100m"}}).Obj();
  auto b = MakePod().Name("b").Req({{"cpu", "1"}}).Obj();
  return MakeNodeInfo(node, {a, b});
}

}  // namespace
