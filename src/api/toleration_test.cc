// Tolerations with the comparison operators Lt and Gt (TaintTolerationComparisonOperators):
// the cases of Kubernetes' TestTolerationToleratesTaint and TestCompareNumericValues.
#include <gtest/gtest.h>

#include <string>

#include "api/tolerations.h"
#include "berth/api/selectors.h"

namespace berth {
namespace {

struct Case {
  std::string description;
  Toleration toleration;
  Taint taint;
  bool tolerated;
};

TEST(TolerationToleratesTaint, ComparisonOperators) {
  const std::string sla = "node.kubernetes.io/sla";
  const Case cases[] = {
      {"toleration with Gt operator - taint value less than toleration value, expect not "
       "tolerated",
       {sla, "Gt", "950", "NoSchedule"},
       {sla, "800", "NoSchedule"},
       false},
      {"toleration with Gt operator - taint value greater than toleration value, expect tolerated",
       {sla, "Gt", "750", "NoSchedule"},
       {sla, "950", "NoSchedule"},
       true},
      {"toleration with Lt operator - taint value greater than toleration value, expect not "
       "tolerated",
       {sla, "Lt", "800", "NoSchedule"},
       {sla, "950", "NoSchedule"},
       false},
      {"toleration with Lt operator - taint value less than toleration value, expect tolerated",
       {sla, "Lt", "950", "NoSchedule"},
       {sla, "800", "NoSchedule"},
       true},
      {"toleration with Gt operator and taint with equal numeric value, expect not tolerated",
       {sla, "Gt", "950", "NoSchedule"},
       {sla, "950", "NoSchedule"},
       false},
      {"toleration with Gt operator and taint with non-numeric value, expect not tolerated",
       {sla, "Gt", "950", "NoSchedule"},
       {sla, "high", "NoSchedule"},
       false},
      {"toleration with Gt operator and negative numeric values - taint value less than "
       "threshold, expect not tolerated",
       {"test-key", "Gt", "-100", "NoSchedule"},
       {"test-key", "-200", "NoSchedule"},
       false},
      {"toleration with Gt operator and large int64 values - taint value less than threshold, "
       "expect not tolerated",
       {"test-key", "Gt", "9223372036854775806", "NoSchedule"},
       {"test-key", "100", "NoSchedule"},
       false},
      // Key and effect still have to match.
      {"Gt with another key",
       {"other", "Gt", "1", "NoSchedule"},
       {sla, "950", "NoSchedule"},
       false},
      {"Gt with another effect", {sla, "Gt", "1", "NoExecute"}, {sla, "950", "NoSchedule"}, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(TolerationToleratesTaint(c.toleration, c.taint, true), c.tolerated) << c.description;
    // With the gate off Lt and Gt tolerate nothing, as does the two-argument form.
    EXPECT_FALSE(TolerationToleratesTaint(c.toleration, c.taint, false)) << c.description;
    EXPECT_FALSE(TolerationToleratesTaint(c.toleration, c.taint)) << c.description;
  }
}

TEST(TolerationToleratesTaint, CompareNumericValues) {
  struct Numeric {
    std::string description, toleration, taint, op;
    bool result;
  };
  const Numeric cases[] = {
      {"Gt operator - taint value greater than toleration value, expect true", "100", "200", "Gt",
       true},
      {"Gt operator - taint value less than toleration value, expect false", "200", "100", "Gt",
       false},
      {"Gt operator - taint value equal to toleration value, expect false", "100", "100", "Gt",
       false},
      {"Gt operator - negative numbers, taint greater, expect true", "-100", "-50", "Gt", true},
      {"Gt operator - negative numbers, taint less, expect false", "-50", "-100", "Gt", false},
      {"Gt operator - zero and positive, expect true", "0", "1", "Gt", true},
      {"Gt operator - large int64 values, taint greater, expect true", "9223372036854775806",
       "9223372036854775807", "Gt", true},
      {"Lt operator - taint value less than toleration value, expect true", "200", "100", "Lt",
       true},
      {"Lt operator - taint value greater than toleration value, expect false", "100", "200", "Lt",
       false},
      {"Lt operator - taint value equal to toleration value, expect false", "100", "100", "Lt",
       false},
      {"Lt operator - negative numbers, taint less, expect true", "-50", "-100", "Lt", true},
      {"Lt operator - negative numbers, taint greater, expect false", "-100", "-50", "Lt", false},
      {"Lt operator - zero and negative, expect true", "0", "-1", "Lt", true},
      {"Gt operator - invalid toleration value (non-numeric), expect false", "abc", "100", "Gt",
       false},
      {"Gt operator - invalid toleration value (empty string), expect false", "", "100", "Gt",
       false},
      {"Gt operator - invalid toleration value (leading zero), expect false", "0100", "200", "Gt",
       false},
      {"Gt operator - invalid toleration value (plus sign), expect false", "+100", "200", "Gt",
       false},
      {"Gt operator - invalid toleration value (floating point), expect false", "100.5", "200",
       "Gt", false},
      {"Gt operator - invalid toleration value (just minus sign), expect false", "-", "100", "Gt",
       false},
      {"Gt operator - invalid taint value (non-numeric), expect false", "100", "xyz", "Gt", false},
      {"Gt operator - invalid taint value (empty string), expect false", "100", "", "Gt", false},
      {"Gt operator - invalid taint value (leading zero), expect false", "100", "0200", "Gt",
       false},
      {"Lt operator - invalid taint value (plus sign), expect false", "100", "+200", "Lt", false},
      {"Lt operator - invalid taint value (spaces), expect false", "100", " 200 ", "Lt", false},
      {"Gt operator - both zero, expect false", "0", "0", "Gt", false},
      {"Lt operator - both zero, expect false", "0", "0", "Lt", false},
      {"Gt operator - max int64 as taint, expect true", "0", "9223372036854775807", "Gt", true},
      {"Lt operator - min int64 as taint, expect true", "0", "-9223372036854775808", "Lt", true},
      // Beyond int64, and "-0", do not parse.
      {"Gt operator - taint value beyond int64, expect false", "0", "9223372036854775808", "Gt",
       false},
      {"Lt operator - minus zero, expect false", "1", "-0", "Lt", false},
  };
  for (const Numeric& c : cases) {
    const Toleration t{"k", c.op, c.toleration, "NoSchedule"};
    const Taint taint{"k", c.taint, "NoSchedule"};
    EXPECT_EQ(TolerationToleratesTaint(t, taint, true), c.result) << c.description;
  }
}

TEST(FindUntoleratedTaint, ComparisonOperatorsFollowTheGate) {
  const Taint taints[] = {{"sla", "999", "NoSchedule"}};
  const Toleration tolerations[] = {{"sla", "Gt", "950", "NoSchedule"}};
  EXPECT_EQ(FindUntoleratedTaint(taints, tolerations, &IsScheduleBlockingTaint, true), nullptr);
  EXPECT_EQ(FindUntoleratedTaint(taints, tolerations, &IsScheduleBlockingTaint), &taints[0]);
}

}  // namespace
}  // namespace berth
