#include "framework/shape_score.h"

#include "berth/framework/plugin.h"

namespace berth {

int64_t BrokenLinearFunction::operator()(int64_t p) const {
  for (size_t i = 0; i < points_.size(); ++i) {
    if (p <= points_[i].utilization) {
      if (i == 0) return points_[0].score;
      const Point& lo = points_[i - 1];
      const Point& hi = points_[i];
      return lo.score +
             (hi.score - lo.score) * (p - lo.utilization) / (hi.utilization - lo.utilization);
    }
  }
  return points_.back().score;
}

BrokenLinearFunction ShapeFunction(std::span<const config::UtilizationShapePoint> shape) {
  std::vector<BrokenLinearFunction::Point> points;
  points.reserve(shape.size());
  for (const config::UtilizationShapePoint& p : shape) {
    points.push_back({p.utilization, p.score * (kMaxNodeScore / kMaxCustomPriorityScore)});
  }
  return BrokenLinearFunction(std::move(points));
}

}  // namespace berth
