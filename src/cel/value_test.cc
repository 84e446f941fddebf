#include "cel/value.h"

#include <gtest/gtest.h>

#include <cmath>

namespace berth::cel {
namespace {

TEST(CelValue, NumbersCompareAcrossKinds) {
  EXPECT_TRUE(Equal(Value::Int(1), Value::Uint(1)));
  EXPECT_TRUE(Equal(Value::Int(1), Value::Double(1.0)));
  EXPECT_FALSE(Equal(Value::Int(-1), Value::Uint(UINT64_MAX)));
  EXPECT_EQ(Compare(Value::Int(-1), Value::Uint(0)), -1);
  EXPECT_EQ(Compare(Value::Double(NAN), Value::Int(0)), 2);
  EXPECT_EQ(Compare(Value::String("a"), Value::Int(0)), 3);
}

TEST(CelValue, DifferentKindsAreUnequal) {
  EXPECT_FALSE(Equal(Value::String("1"), Value::Int(1)));
  EXPECT_FALSE(Equal(Value::Null(), Value::Bool(false)));
}

TEST(CelValue, MapFindIsHeterogeneousForNumbers) {
  Map m;
  m.entries.emplace_back(Value::Int(1), Value::String("one"));
  ASSERT_NE(m.Find(Value::Uint(1)), nullptr);
  ASSERT_NE(m.Find(Value::Double(1.0)), nullptr);
  EXPECT_EQ(m.Find(Value::Double(1.5)), nullptr);
  EXPECT_EQ(m.Find(Value::String("1")), nullptr);
}

TEST(CelValue, SemverOrdering) {
  Semver a, b, c;
  ASSERT_TRUE(ParseSemver("1.0.0-alpha", false, a));
  ASSERT_TRUE(ParseSemver("1.0.0-alpha.1", false, b));
  ASSERT_TRUE(ParseSemver("1.0.0", false, c));
  EXPECT_LT(CompareSemver(a, b), 0);
  EXPECT_LT(CompareSemver(b, c), 0);
  EXPECT_FALSE(ParseSemver("1.0", false, a));
  EXPECT_FALSE(ParseSemver("01.0.0", false, a));
  ASSERT_TRUE(ParseSemver("v1.2", true, a));
  EXPECT_EQ(SemverString(a), "1.2.0");
}

}  // namespace
}  // namespace berth::cel
