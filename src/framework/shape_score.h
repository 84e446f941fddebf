// Scores from a configured utilization shape (RequestedToCapacityRatio's and VolumeBinding's
// `shape`), as kube-scheduler's helper.BuildBrokenLinearFunction computes them. Shared by the
// plugins that take a shape, so both read it the same way.
#pragma once

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "berth/config/plugin_args.h"

namespace berth {

// Upper bound of the scores written in a shape; they are scaled to [0, kMaxNodeScore].
inline constexpr int32_t kMaxCustomPriorityScore = 10;
// Utilization is a percentage.
inline constexpr int64_t kMaxUtilization = 100;

// A piecewise-linear function through (utilization, score) points sorted by utilization; flat
// before the first and after the last point. Integer interpolation, truncating.
class BrokenLinearFunction {
 public:
  struct Point {
    int64_t utilization = 0;
    int64_t score = 0;
  };
  explicit BrokenLinearFunction(std::vector<Point> points) : points_(std::move(points)) {}
  // Precondition: at least one point.
  int64_t operator()(int64_t p) const;

 private:
  std::vector<Point> points_;
};

// The function of a configured shape, its scores (0..10) scaled to 0..kMaxNodeScore.
// Precondition: `shape` is non-empty and sorted by utilization (validation checks both).
BrokenLinearFunction ShapeFunction(std::span<const config::UtilizationShapePoint> shape);

}  // namespace berth
