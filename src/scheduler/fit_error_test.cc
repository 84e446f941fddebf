#include "scheduler/fit_error.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace berth {
namespace {

NodeStatusMap Statuses(const std::vector<std::pair<std::string, int>>& reason_counts,
                       Code code = Code::kUnschedulable) {
  NodeStatusMap m;
  int node = 0;
  for (const auto& [reason, count] : reason_counts)
    for (int i = 0; i < count; ++i) m["node-" + std::to_string(node++)] = Status(code, reason);
  return m;
}

TEST(FitErrorTest, HistogramIsSortedAsStrings) {
  EXPECT_EQ(ReasonHistogram(Statuses({{"x", 10}, {"y", 2}})), "10 x, 2 y");
  // Sorted as text, not by count or by reason: "10 b" < "2 a".
  EXPECT_EQ(ReasonHistogram(Statuses({{"a", 2}, {"b", 10}})), "10 b, 2 a");
  EXPECT_EQ(ReasonHistogram(Statuses({{"Insufficient memory", 1}, {"Insufficient cpu", 1}})),
            "1 Insufficient cpu, 1 Insufficient memory");
  EXPECT_EQ(ReasonHistogram({}), "");
}

TEST(FitErrorTest, EveryReasonOfANodeCounts) {
  NodeStatusMap m;
  m["n1"] = Status(Code::kUnschedulable,
                   std::vector<std::string>{"Insufficient cpu", "Insufficient memory"});
  m["n2"] = Status::Unschedulable("Insufficient cpu");
  EXPECT_EQ(ReasonHistogram(m), "1 Insufficient memory, 2 Insufficient cpu");
}

TEST(FitErrorTest, MessageFormats) {
  const NodeStatusMap statuses =
      Statuses({{"Insufficient cpu", 2}, {"node(s) had untolerated taint(s)", 1}});
  EXPECT_EQ(FitErrorMessage(3, nullptr, statuses, {}),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.");

  // A PreFilter rejection replaces the histogram.
  Status pre = Status::Unresolvable("node(s) didn't satisfy plugin NodeAffinity");
  EXPECT_EQ(FitErrorMessage(3, &pre, statuses, {}),
            "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity.");

  // PostFilter messages follow after a space, with their own punctuation.
  EXPECT_EQ(FitErrorMessage(
                3, nullptr, statuses,
                {"preemption: 0/3 nodes are available: 3 No preemption victims found for incoming "
                 "pod."}),
            "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu. "
            "preemption: 0/3 nodes are available: 3 No preemption victims found for incoming "
            "pod.");
  EXPECT_EQ(
      FitErrorMessage(3, &pre, {}, {"preemption: not eligible due to preemptionPolicy=Never."}),
      "0/3 nodes are available: node(s) didn't satisfy plugin NodeAffinity. preemption: not "
      "eligible due to preemptionPolicy=Never.");
  // Several PostFilter plugins: their messages joined as one status message.
  EXPECT_EQ(FitErrorMessage(1, nullptr, Statuses({{"Insufficient cpu", 1}}),
                            {"no new claims to deallocate",
                             "preemption: 0/1 nodes are available: 1 No preemption victims found "
                             "for incoming pod."}),
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming "
            "pod.");
  EXPECT_EQ(FitErrorMessage(2, nullptr, {}, {}), "0/2 nodes are available:");
}

}  // namespace
}  // namespace berth
