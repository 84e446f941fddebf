#include "scheduler/extenders.h"

#include <fmt/format.h>

#include <mutex>
#include <optional>
#include <unordered_map>

namespace berth {

Status FilterWithExtenders(std::span<Extender* const> extenders, const Pod& pod,
                           std::vector<const NodeInfo*>* feasible, NodeStatusMap* statuses,
                           bool* rejected_some, std::vector<std::string>* skipped_errors) {
  for (Extender* ext : extenders) {
    if (feasible->empty()) break;
    if (!ext->IsInterested(pod)) continue;
    auto result = ext->Filter(pod, *feasible);
    if (!result.ok()) {
      if (ext->IsIgnorable()) {
        skipped_errors->push_back(result.error().message);
        continue;
      }
      return Status::Error(result.error().message);
    }
    for (const auto& [node, reason] : result->failed_and_unresolvable)
      (*statuses)[node] = Status::Unresolvable(reason).WithPlugin(ext->Name());
    for (const auto& [node, reason] : result->failed) {
      if (result->failed_and_unresolvable.count(node)) continue;
      (*statuses)[node] = Status::Unschedulable(reason).WithPlugin(ext->Name());
    }
    if (result->feasible.size() != feasible->size()) *rejected_some = true;
    *feasible = std::move(result->feasible);
  }
  return Status::Success();
}

void PrioritizeWithExtenders(std::span<Extender* const> extenders, const Pod& pod,
                             Parallelizer& parallelizer, ScoreTable* table) {
  std::vector<Extender*> interested;
  for (Extender* ext : extenders)
    if (ext->IsInterested(pod)) interested.push_back(ext);
  if (interested.empty()) return;

  // Extenders answer in the order they were asked: entry i is usually node i. A name index is
  // built only for an answer in another order.
  std::unordered_map<std::string_view, size_t> index;
  std::mutex index_mu;
  auto position = [&](size_t i, const std::string& host) -> std::optional<size_t> {
    if (i < table->nodes.size() && table->nodes[i]->name() == host) return i;
    std::lock_guard lock(index_mu);
    if (index.empty())
      for (size_t k = 0; k < table->nodes.size(); ++k) index.emplace(table->nodes[k]->name(), k);
    auto it = index.find(host);
    if (it == index.end()) return std::nullopt;
    return it->second;
  };

  std::vector<std::vector<int64_t>> contributions(interested.size());
  std::vector<char> answered(interested.size(), 0);  // written by workers: not vector<bool>
  const std::span<const NodeInfo* const> nodes(table->nodes);
  parallelizer.Until(static_cast<int>(interested.size()), [&](int e) {
    // Errors are ignored: the extender simply contributes nothing to this cycle.
    auto list = interested[e]->Prioritize(pod, nodes);
    if (!list.ok()) return;
    const int64_t weight = interested[e]->IsPrioritizer() ? interested[e]->Weight() : 0;
    std::vector<int64_t>& out = contributions[e];
    out.assign(nodes.size(), 0);
    for (size_t i = 0; i < list->size(); ++i) {
      const HostPriority& h = (*list)[i];
      if (auto at = position(i, h.host))
        out[*at] += h.score * weight * (kMaxNodeScore / kMaxExtenderPriority);
    }
    answered[e] = 1;
  });
  for (size_t e = 0; e < interested.size(); ++e) {
    if (!answered[e]) continue;
    for (size_t i = 0; i < nodes.size(); ++i) table->totals[i] += contributions[e][i];
    // Several extenders may share a name (urlPrefix); their contributions add up.
    auto& recorded = table->extender_scores[interested[e]->Name()];
    if (recorded.empty()) {
      recorded = std::move(contributions[e]);
    } else {
      for (size_t i = 0; i < nodes.size(); ++i) recorded[i] += contributions[e][i];
    }
  }
}

std::optional<Status> BindWithExtenders(std::span<Extender* const> extenders, const Pod& pod,
                                        const std::string& node) {
  for (Extender* ext : extenders) {
    if (!ext->IsBinder() || !ext->IsInterested(pod)) continue;
    VoidResult r = ext->Bind(pod, node);
    if (!r.ok() && ext->IsIgnorable()) continue;
    if (!r.ok()) return Status::Error(r.error().message);
    return Status::Success();
  }
  return std::nullopt;
}

bool AnyExtenderFilters(std::span<Extender* const> extenders) {
  for (const Extender* e : extenders)
    if (e->IsFilter()) return true;
  return false;
}

bool AnyExtenderPrioritizes(std::span<Extender* const> extenders) {
  for (const Extender* e : extenders)
    if (e->IsPrioritizer()) return true;
  return false;
}

}  // namespace berth
