#include "berth/framework/plugin.h"

#include <algorithm>

namespace berth {

PreFilterResult PreFilterResult::Merge(const PreFilterResult& other) const {
  if (AllNodes()) return other;
  if (other.AllNodes()) return *this;
  PreFilterResult out;
  out.node_names.emplace();
  std::set_intersection(node_names->begin(), node_names->end(), other.node_names->begin(),
                        other.node_names->end(),
                        std::inserter(*out.node_names, out.node_names->end()));
  return out;
}

void DefaultNormalizeScore(int64_t max_priority, bool reverse, std::span<NodeScore> scores) {
  int64_t max_count = 0;
  for (const auto& s : scores) max_count = std::max(max_count, s.score);
  if (max_count == 0) {
    if (reverse)
      for (auto& s : scores) s.score = max_priority;
    return;
  }
  for (auto& s : scores) {
    int64_t v = max_priority * s.score / max_count;
    s.score = reverse ? max_priority - v : v;
  }
}

}  // namespace berth
