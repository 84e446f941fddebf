#include "scheduler/fit_error.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace berth {

std::map<std::string, int> ReasonCounts(const NodeStatusMap& statuses) {
  std::map<std::string, int> counts;
  for (const auto& [node, status] : statuses)
    for (const auto& r : status.reasons()) ++counts[r];
  return counts;
}

std::string ReasonHistogram(const NodeStatusMap& statuses) {
  const std::map<std::string, int> counts = ReasonCounts(statuses);
  std::vector<std::string> entries;
  entries.reserve(counts.size());
  for (const auto& [reason, n] : counts) entries.push_back(fmt::format("{} {}", n, reason));
  // Sorted as whole strings, so "10 x" comes before "2 y", as kube-scheduler prints it.
  std::sort(entries.begin(), entries.end());
  return fmt::format("{}", fmt::join(entries, ", "));
}

std::string FitErrorMessage(int num_all_nodes, const Status* pre_filter,
                            const NodeStatusMap& statuses,
                            const std::vector<std::string>& post_filter) {
  std::string msg = fmt::format("0/{} nodes are available:", num_all_nodes);
  if (pre_filter && !pre_filter->Message().empty()) {
    msg += fmt::format(" {}.", pre_filter->Message());
  } else if (!pre_filter) {
    std::string hist = ReasonHistogram(statuses);
    if (!hist.empty()) msg += fmt::format(" {}.", hist);
  }
  // PostFilter messages carry their own punctuation.
  std::string post = fmt::format("{}", fmt::join(post_filter, ", "));
  if (!post.empty()) msg += " " + post;
  return msg;
}

}  // namespace berth
