#include "framework/shape_score.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace berth {
namespace {

TEST(BrokenLinearFunctionTest, UpstreamShapes) {
  struct Case {
    std::vector<BrokenLinearFunction::Point> points;
    std::vector<std::pair<int64_t, int64_t>> assertions;  // p -> expected
  };
  std::vector<Case> cases = {
      {{{10, 1}, {90, 9}},
       {{-10, 1},
        {0, 1},
        {9, 1},
        {10, 1},
        {15, 1},
        {19, 1},
        {20, 2},
        {89, 8},
        {90, 9},
        {99, 9},
        {100, 9},
        {110, 9}}},
      {{{0, 2}, {40, 10}, {100, 0}},
       {{-10, 2}, {0, 2}, {20, 6}, {30, 8}, {40, 10}, {70, 5}, {100, 0}, {110, 0}}},
      {{{0, 2}, {40, 2}, {100, 2}},
       {{-10, 2}, {0, 2}, {20, 2}, {30, 2}, {40, 2}, {70, 2}, {100, 2}, {110, 2}}},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    BrokenLinearFunction fn(cases[i].points);
    for (const auto& [p, want] : cases[i].assertions) {
      EXPECT_EQ(fn(p), want) << "case " << i << " p=" << p;
    }
  }
}

TEST(ShapeFunctionTest, ScalesShapeScoresToNodeScores) {
  const std::vector<config::UtilizationShapePoint> shape = {{0, 10}, {100, 0}};
  BrokenLinearFunction fn = ShapeFunction(shape);
  EXPECT_EQ(fn(0), 100);
  EXPECT_EQ(fn(25), 75);
  EXPECT_EQ(fn(50), 50);
  EXPECT_EQ(fn(100), 0);
}

}  // namespace
}  // namespace berth
