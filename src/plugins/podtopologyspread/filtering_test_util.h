// Test helpers of the filtering tests: the expected counts per eligible domain, and the node
// sets of kube-scheduler's cases.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <climits>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugins/podtopologyspread/state.h"
#include "plugins/podtopologyspread/test_util.h"

namespace berth::podtopologyspread::testutil {

using DomainMap = std::map<std::string, int32_t>;
using NodeList = std::vector<std::shared_ptr<const Node>>;
using PodList = std::vector<std::shared_ptr<const Pod>>;

// Eligible domains with their counts, and the minimum, for every constraint.
inline void ExpectCounts(const FilterState& fs, const std::vector<DomainMap>& want) {
  ASSERT_EQ(fs.counts.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("constraint " + std::to_string(i));
    const DomainCounts& dc = fs.counts[i];
    EXPECT_EQ(dc.num_domains(), static_cast<int32_t>(want[i].size()));
    int32_t min = INT32_MAX;
    for (const auto& [value, count] : want[i]) {
      EXPECT_EQ(dc.EligibleCount(value), std::optional<int32_t>(count)) << "domain " << value;
      min = std::min(min, count);
    }
    EXPECT_EQ(dc.MinCount(), min);
  }
}

inline NodeList FourNodesTwoZones() {
  return {N("node-a", {{"zone", "zone1"}, {"node", "node-a"}}),
          N("node-b", {{"zone", "zone1"}, {"node", "node-b"}}),
          N("node-x", {{"zone", "zone2"}, {"node", "node-x"}}),
          N("node-y", {{"zone", "zone2"}, {"node", "node-y"}})};
}

inline NodeList ThreeNodesNoZones(bool taint_c = false) {
  return {N("node-a", {{"node", "node-a"}, {"foo", ""}}),
          N("node-b", {{"node", "node-b"}, {"foo", ""}}),
          N("node-c", {{"node", "node-c"}, {"bar", ""}}, taint_c)};
}

// A gtest name for a case: its name with every other character than letters and digits as '_'.
inline constexpr auto CaseName = [](const auto& info) {
  std::string n;
  for (char c : info.param.name) n += std::isalnum(c) ? c : '_';
  return n;
};

}  // namespace berth::podtopologyspread::testutil
