#include "plugins/defaultpreemption/preemption.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

namespace berth::preemption {

int64_t StartTimeKey(const Pod& pod) {
  // A pod that has not started yet is, for kube-scheduler, starting at the current wall-clock
  // time, which no recorded start can exceed. Using +inf keeps that order without tying the
  // result to an injected clock.
  return pod.status.start_time != 0 ? pod.status.start_time : std::numeric_limits<int64_t>::max();
}

bool MoreImportantPod(const Pod& a, const Pod& b) {
  const int32_t pa = a.Priority(), pb = b.Priority();
  if (pa != pb) return pa > pb;
  return StartTimeKey(a) < StartTimeKey(b);
}

int32_t CalculateNumCandidates(int32_t num_nodes, int32_t min_percentage, int32_t min_absolute) {
  // 64-bit product: 5000 nodes * 100% fits in 32 bits, but configs are not trusted to be small.
  int64_t n = static_cast<int64_t>(num_nodes) * min_percentage / 100;
  n = std::max<int64_t>(n, min_absolute);
  n = std::min<int64_t>(n, num_nodes);
  return static_cast<int32_t>(n);
}

std::vector<CompiledPdb> CompilePdbs(const std::vector<Ptr<PodDisruptionBudget>>& pdbs) {
  std::vector<CompiledPdb> out;
  out.reserve(pdbs.size());
  for (const auto& pdb : pdbs) {
    CompiledSelector sel = CompiledSelector::FromOptional(pdb->selector);
    // A budget whose selector is empty protects nothing (unlike most empty selectors).
    if (sel.Empty()) sel = CompiledSelector::Nothing();
    out.push_back({pdb, std::move(sel)});
  }
  return out;
}

void SplitByPdbViolation(std::span<const PodInfoPtr> pods, std::span<const CompiledPdb> pdbs,
                         std::vector<PodInfoPtr>* violating,
                         std::vector<PodInfoPtr>* non_violating) {
  std::vector<int64_t> allowed;
  allowed.reserve(pdbs.size());
  for (const auto& p : pdbs) allowed.push_back(p.pdb->disruptions_allowed);

  for (const auto& pi : pods) {
    const Pod& pod = *pi->pod;
    bool violated = false;
    // Budgets select by label, so an unlabelled pod cannot be covered by one.
    if (!pod.metadata.labels.empty()) {
      for (size_t i = 0; i < pdbs.size(); ++i) {
        const PodDisruptionBudget& pdb = *pdbs[i].pdb;
        if (pdb.metadata.namespace_ != pod.metadata.namespace_) continue;
        if (!pdbs[i].selector.Matches(pod.metadata.labels)) continue;
        // The API server has already counted an eviction it processed for this pod.
        if (pdb.disrupted_pods.count(pod.metadata.name) > 0) continue;
        if (--allowed[i] < 0) violated = true;
      }
    }
    (violated ? violating : non_violating)->push_back(pi);
  }
}

namespace {

// Start of the earliest-started victim among those of the highest priority. Victims are not
// assumed sorted here: extenders may return them in any order.
int64_t EarliestStartOfHighestPriority(const std::vector<PodInfoPtr>& victims) {
  int32_t max_priority = victims.front()->pod->Priority();
  int64_t earliest = StartTimeKey(*victims.front()->pod);
  for (const auto& v : victims) {
    const int32_t p = v->pod->Priority();
    if (p == max_priority) {
      earliest = std::min(earliest, StartTimeKey(*v->pod));
    } else if (p > max_priority) {
      max_priority = p;
      earliest = StartTimeKey(*v->pod);
    }
  }
  return earliest;
}

// Smaller is better in every component.
using RankKey = std::tuple<int64_t, int64_t, int64_t, int64_t, int64_t>;

RankKey Rank(const Candidate& c) {
  const auto& pods = c.victims.pods;
  if (pods.empty()) {
    // Nothing to evict is the best possible outcome on every criterion.
    return {c.victims.num_pdb_violations, std::numeric_limits<int64_t>::min(),
            std::numeric_limits<int64_t>::min(), 0, std::numeric_limits<int64_t>::min()};
  }
  int64_t sum = 0;
  // Shifting priorities to be non-negative keeps a node with several negative-priority victims
  // from beating a node with fewer of them.
  constexpr int64_t kShift = int64_t{std::numeric_limits<int32_t>::max()} + 1;
  for (const auto& v : pods) sum += v->pod->Priority() + kShift;
  return {c.victims.num_pdb_violations,
          // The first victim is the most important one (victims are kept sorted).
          pods.front()->pod->Priority(), sum, static_cast<int64_t>(pods.size()),
          // Later is better: negate.
          -EarliestStartOfHighestPriority(pods)};
}

}  // namespace

int PickOneNodeForPreemption(std::span<const Candidate> candidates) {
  int best = -1;
  RankKey best_key;
  for (size_t i = 0; i < candidates.size(); ++i) {
    RankKey key = Rank(candidates[i]);
    if (best < 0 || key < best_key) {
      best = static_cast<int>(i);
      best_key = key;
    }
  }
  return best;
}

Result<std::vector<Candidate>> CallExtenders(std::span<Extender* const> extenders, const Pod& pod,
                                             std::vector<Candidate> candidates,
                                             const Snapshot& snapshot) {
  if (extenders.empty() || candidates.empty()) return candidates;
  std::map<std::string, Victims> by_node;
  for (auto& c : candidates) by_node.emplace(std::move(c.node_name), std::move(c.victims));
  for (Extender* ext : extenders) {
    if (!ext->SupportsPreemption() || !ext->IsInterested(pod)) continue;
    auto processed = ext->ProcessPreemption(pod, by_node, snapshot);
    if (!processed.ok()) {
      if (ext->IsIgnorable()) continue;
      return processed.error();
    }
    std::map<std::string, Victims> next = std::move(processed).value();
    for (auto it = next.begin(); it != next.end();) {
      if (!it->second.pods.empty()) {
        ++it;
        continue;
      }
      if (!ext->IsIgnorable())
        return Error{fmt::format("expected at least one victim pod on node \"{}\"", it->first)};
      it = next.erase(it);
    }
    by_node = std::move(next);
    if (by_node.empty()) break;
  }
  std::vector<Candidate> out;
  out.reserve(by_node.size());
  for (auto& [node, victims] : by_node) out.push_back({node, std::move(victims)});
  return out;
}

}  // namespace berth::preemption
