#include <algorithm>
#include <climits>
#include <cmath>
#include <string>
#include <utility>

#include "framework/node_prefetch.h"
#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/state.h"

namespace berth::podtopologyspread {
namespace {

// Weight of a constraint whose topology has `domains` values among the scored nodes: smaller
// topologies are not watered down by bigger ones. ln(size + 2) lies in [0.69, 8.52] up to 5000.
double TopologyWeight(int64_t domains) { return std::log(static_cast<double>(domains + 2)); }

// maxSkew - 1 is added so that differences between domains count less as maxSkew grows.
double ScoreForCount(int64_t count, int32_t max_skew, double weight) {
  return static_cast<double>(count) * weight + static_cast<double>(max_skew - 1);
}

constexpr std::string_view kSoftConstraintsError =
    "calculating preScoreState: obtaining pod's soft topology spread constraints: ";

}  // namespace

// ---------------------------------------------------------------- ScoreState

int64_t ScoreState::Compute(const NodeInfo& node) const {
  const Node* n = node.node();
  if (n == nullptr || (require_all_keys && !NodeHasAllKeys(*n, constraints))) return 0;
  double score = 0;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const SpreadConstraint& c = constraints[i];
    auto it = n->metadata.labels.find(c.topology_key);
    if (it == n->metadata.labels.end()) continue;
    int64_t count = 0;
    if (c.is_hostname) {
      count = CountMatchingPods(node.pods(), c.selector, pod_namespace);
    } else if (const int32_t d = domains[i]->Find(it->second); d >= 0) {
      count = domain_pods[i][d];
    }
    score += ScoreForCount(count, c.max_skew, weights[i]);
  }
  return static_cast<int64_t>(std::round(score));
}

int32_t ScoreState::Find(const NodeInfo& node) const {
  // The first few lookups of a cycle (the nodes scored apart from the runs: those a snapshot
  // update just changed) look for the NodeInfo itself in the list, which costs less than
  // indexing every feasible node; more lookups get the index.
  constexpr int kScans = 16;
  if (lookups_.fetch_add(1, std::memory_order_relaxed) < kScans) {
    for (size_t j = 0; j < feasible.size(); ++j)
      if (feasible[j] == &node) return static_cast<int32_t>(j);
  }
  std::call_once(index_once_, [this] {
    index_ = PtrIndex(feasible.size());
    for (size_t j = 0; j < feasible.size(); ++j) {
      const Node* n = feasible[j]->node();
      if (n != nullptr && index_.Find(n) < 0) index_.Insert(n, static_cast<int32_t>(j));
    }
  });
  return index_.Find(node.node());
}

int64_t ScoreState::RunPosition(std::span<const NodeInfo* const> nodes) const {
  if (nodes.empty()) return -1;
  const auto at = reinterpret_cast<uintptr_t>(nodes.data());
  if (at < feasible_address || (at - feasible_address) % sizeof(const NodeInfo*) != 0) return -1;
  const size_t pos = (at - feasible_address) / sizeof(const NodeInfo*);
  if (pos + nodes.size() > feasible.size()) return -1;
  // The same addresses may hold another list by now: the nodes themselves must match.
  for (size_t k = 0; k < nodes.size(); ++k)
    if (feasible[pos + k] != nodes[k]) return -1;
  return static_cast<int64_t>(pos);
}

int64_t ScoreState::RawScore(const NodeInfo& node) const {
  const int32_t at = Find(node);
  return at >= 0 ? scores[at] : Compute(node);
}

bool ScoreState::Ignored(const NodeInfo& node) const {
  const int32_t at = Find(node);
  if (at >= 0) return ignored[at] != 0;
  const Node* n = node.node();
  return n == nullptr || (require_all_keys && !NodeHasAllKeys(*n, constraints));
}

// ---------------------------------------------------------------- PreScore / Score

namespace {

// What PreScore's steps share within one cycle, besides the ScoreState they fill.
struct PreScoreScratch {
  size_t k = 0;  // constraints
  bool require_all = false;
  bool honor_affinity = false, honor_taints = false, any_domain_constraint = false;
  // Per constraint: the domain of nodes without the key, -1 when they do not count.
  std::vector<int32_t> missing_domain;
  // Per feasible node: its slot in the table, -1 outside it.
  std::vector<int32_t> feasible_slot;
  // Per feasible node and constraint: the node's domain; -1 without the key, -2 for a value no
  // node of the table has (only for nodes outside the table).
  std::vector<int32_t> feasible_domain;
  // Per constraint and domain: whether a scored (feasible, not ignored) node is in it.
  std::vector<std::vector<uint8_t>> seeded;
  // Per constraint: the memoized matching pods per slot, null when not memoized.
  std::vector<const SpreadCache::Counts*> counts;
};

// Matching pods on a slot's node for constraint i.
int32_t PodsOnSlot(SpreadCache& cache, const PreScoreScratch& x, const SpreadConstraint& c,
                   size_t i, size_t slot, const std::string& pod_namespace) {
  if (x.counts[i] != nullptr) return x.counts[i]->Get(slot);
  if (c.count_key.empty()) return 0;
  return CountMatchingPods(cache.pods(slot), c.selector, pod_namespace);
}

// Every constraint's domains, and which node constraints (affinity, taints) any of them honours.
void ResolveDomains(SpreadCache& cache, ScoreState& st, PreScoreScratch& x) {
  const std::vector<SpreadConstraint>& cs = st.constraints;
  st.domains.resize(x.k);
  st.domain_pods.resize(x.k);
  x.missing_domain.assign(x.k, -1);
  for (size_t i = 0; i < x.k; ++i) {
    st.domains[i] = cache.Domains(cs[i].topology_key);
    if (cs[i].is_hostname) continue;
    x.any_domain_constraint = true;
    x.honor_affinity |= cs[i].honor_node_affinity;
    x.honor_taints |= cs[i].honor_node_taints;
    const KeyDomains& d = *st.domains[i];
    st.domain_pods[i].assign(d.num_domains() + 1, 0);
    if (!x.require_all) {
      // A node without the key falls in the domain of the empty value.
      const int32_t empty = d.Find("");
      x.missing_domain[i] = empty >= 0 ? empty : static_cast<int32_t>(d.num_domains());
    }
  }
}

// Feasible nodes: which are ignored, their domains, which domains are scored (seeded), and each
// constraint's weight from the number of scored domains.
void SeedFeasibleNodes(const NodeTable& table, std::span<const NodeInfo* const> feasible,
                       ScoreState& st, PreScoreScratch& x) {
  const std::vector<SpreadConstraint>& cs = st.constraints;
  const size_t k = x.k;
  const size_t f = feasible.size();
  st.feasible.assign(feasible.begin(), feasible.end());
  st.feasible_address = reinterpret_cast<uintptr_t>(feasible.data());
  st.scores.assign(f, 0);
  st.ignored.assign(f, 0);
  x.feasible_slot.assign(f, -1);
  x.feasible_domain.assign(f * k, -1);
  x.seeded.assign(k, {});
  std::vector<int64_t> topology_size(k, 0);
  std::vector<std::vector<std::string>> foreign_values(k);
  for (size_t i = 0; i < k; ++i) {
    if (!cs[i].is_hostname) x.seeded[i].assign(st.domains[i]->num_domains() + 1, 0);
  }
  int64_t ignored_count = 0;
  // The feasible NodeInfos are spread over the heap and read here for their node and list
  // position: ask for them a few nodes ahead, so that the misses of a large cluster overlap
  // instead of following one another.
  constexpr size_t kAhead = 8;
  for (size_t j = 0; j < std::min(f, kAhead); ++j) PrefetchNodeInfo(feasible[j]);
  for (size_t j = 0; j < f; ++j) {
    if (j + kAhead < f) PrefetchNodeInfo(feasible[j + kAhead]);
    const Node* n = feasible[j]->node();
    if (n == nullptr) {
      st.ignored[j] = 1;
      ++ignored_count;
      continue;
    }
    const int32_t slot = table.SlotOf(*feasible[j]);
    x.feasible_slot[j] = slot;
    int32_t* dom = &x.feasible_domain[j * k];
    bool has_all = true;
    for (size_t i = 0; i < k; ++i) {
      if (slot >= 0) {
        dom[i] = st.domains[i]->slot_domain(slot);
      } else if (auto it = n->metadata.labels.find(cs[i].topology_key);
                 it != n->metadata.labels.end()) {
        const int32_t d = st.domains[i]->Find(it->second);
        dom[i] = d >= 0 ? d : -2;
      }
      has_all &= dom[i] != -1;
    }
    if (x.require_all && !has_all) {
      st.ignored[j] = 1;
      ++ignored_count;
      continue;
    }
    for (size_t i = 0; i < k; ++i) {
      if (cs[i].is_hostname) continue;
      if (dom[i] == -2) {
        const std::string& v = n->metadata.labels.find(cs[i].topology_key)->second;
        auto& fv = foreign_values[i];
        if (std::find(fv.begin(), fv.end(), v) == fv.end()) {
          fv.push_back(v);
          ++topology_size[i];
        }
        continue;
      }
      const int32_t d = dom[i] >= 0 ? dom[i] : x.missing_domain[i];
      if (!x.seeded[i][d]) {
        x.seeded[i][d] = 1;
        ++topology_size[i];
      }
    }
  }
  st.weights.resize(k);
  for (size_t i = 0; i < k; ++i) {
    st.weights[i] = TopologyWeight(cs[i].is_hostname ? static_cast<int64_t>(f) - ignored_count
                                                     : topology_size[i]);
  }
}

// Matching pods per scored domain, over every node of the snapshot. The walk over every node is
// the hot loop: flat arrays only.
void CountPodsPerDomain(SpreadCache& cache, const NodeTable& table, const Pod& p, ScoreState& st,
                        PreScoreScratch& x) {
  const std::vector<SpreadConstraint>& cs = st.constraints;
  const size_t k = x.k;
  const bool require_all = x.require_all;
  const bool honor_affinity = x.honor_affinity && HasNodeAffinityInputs(p);
  const bool honor_taints = x.honor_taints;
  const std::vector<uint8_t>* inclusion =
      honor_affinity || honor_taints ? &cache.Inclusion(p, honor_affinity, honor_taints) : nullptr;
  struct Lane {
    const int32_t* domain;  // per slot, -1 without the key
    const int32_t* pods;    // per slot matching pods (memoized), null when not memoized
    int64_t* count;         // per domain
    const uint8_t* seeded;  // per domain
    int32_t missing;        // domain of nodes without the key, -1 when they do not count
    uint8_t required;       // inclusion flags the node must have
    size_t index;
  };
  std::vector<Lane> lanes;
  std::vector<const int32_t*> keys;  // every constraint's slot domains (for require_all)
  for (size_t i = 0; i < k; ++i) {
    keys.push_back(st.domains[i]->slot_domains());
    const SpreadConstraint& c = cs[i];
    if (c.is_hostname) continue;
    if (x.counts[i] == nullptr && c.count_key.empty()) continue;  // counts nothing
    lanes.push_back(
        {st.domains[i]->slot_domains(), x.counts[i] ? x.counts[i]->data() : nullptr,
         st.domain_pods[i].data(), x.seeded[i].data(), x.missing_domain[i],
         static_cast<uint8_t>((c.honor_node_affinity ? SpreadCache::kAffinityMatches : 0) |
                              (c.honor_node_taints ? SpreadCache::kTaintsTolerated : 0)),
         i});
  }
  const uint8_t* flags = inclusion ? inclusion->data() : nullptr;
  const size_t n = table.size();
  // Pods are summed for every domain and the domains no feasible node is in are cleared
  // afterwards, which keeps the loop free of lookups.
  // One counting lane: the system defaults (hostname and zone, keys not required) or one domain
  // constraint of the pod's own. Slots without a node have no domain, so the only check left is
  // the key, as in the general loop.
  if (lanes.size() == 1 && (keys.size() == 1 || !require_all) && lanes[0].pods != nullptr &&
      flags == nullptr) {
    const Lane l = lanes[0];
    const std::vector<int64_t>& sum = cache.DomainTotals(*x.counts[l.index], st.domains[l.index]);
    const size_t domains = sum.size() - 1;
    for (size_t d = 0; d < domains; ++d) l.count[d] += sum[d];
    if (!require_all && l.missing >= 0) l.count[l.missing] += sum[domains];
  } else {
    for (size_t s = 0; s < n && !lanes.empty(); ++s) {
      if (require_all) {
        // Carrying every key also rules out slots without a node.
        bool has_all = true;
        for (size_t i = 0; i < keys.size() && has_all; ++i) has_all = keys[i][s] >= 0;
        if (!has_all) continue;
      } else if (!table.has_node(s)) {
        continue;
      }
      const uint8_t f = flags ? flags[s] : 0xff;
      for (const Lane& l : lanes) {
        if ((f & l.required) != l.required) continue;
        const int32_t d = l.domain[s] >= 0 ? l.domain[s] : l.missing;
        if (d < 0) continue;
        l.count[d] += l.pods ? l.pods[s]
                             : PodsOnSlot(cache, x, cs[l.index], l.index, s, p.metadata.namespace_);
      }
    }
  }
  for (const Lane& l : lanes) {
    const size_t domains = st.domain_pods[l.index].size();
    for (size_t d = 0; d < domains; ++d)
      if (!l.seeded[d]) l.count[d] = 0;
  }
}

// Raw scores of the feasible nodes.
void RawScores(SpreadCache& cache, const std::vector<const NodeInfo*>& all,
               std::span<const NodeInfo* const> feasible, const Pod& p, ScoreState& st,
               const PreScoreScratch& x) {
  const std::vector<SpreadConstraint>& cs = st.constraints;
  const size_t k = x.k;
  for (size_t j = 0; j < feasible.size(); ++j) {
    if (st.ignored[j]) continue;
    const int32_t* dom = &x.feasible_domain[j * k];
    const int32_t slot = x.feasible_slot[j];
    // The memoized per-node counts describe the snapshot's NodeInfo, not a modified copy.
    const bool snapshot_node = slot >= 0 && all[slot] == feasible[j];
    double score = 0;
    for (size_t i = 0; i < k; ++i) {
      if (dom[i] == -1) continue;  // no such label on the node
      const SpreadConstraint& c = cs[i];
      int64_t count = 0;
      if (c.is_hostname) {
        count = snapshot_node
                    ? PodsOnSlot(cache, x, c, i, slot, p.metadata.namespace_)
                    : CountMatchingPods(feasible[j]->pods(), c.selector, p.metadata.namespace_);
      } else if (dom[i] >= 0) {
        count = st.domain_pods[i][dom[i]];
      }
      score += ScoreForCount(count, c.max_skew, st.weights[i]);
    }
    st.scores[j] = static_cast<int64_t>(std::round(score));
  }
}

}  // namespace

Status PodTopologySpread::PreScore(CycleState& state, const PodInfo& pod,
                                   std::span<const NodeInfo* const> feasible) {
  const std::vector<const NodeInfo*>& all = handle_.snapshot().nodes();
  if (all.empty()) return Status::Skip();
  const Pod& p = *pod.pod;
  auto constraints = Constraints(p, kScheduleAnyway);
  if (!constraints.ok()) {
    return Status::Error(std::string(kSoftConstraintsError) + constraints.error().message);
  }
  if (constraints->empty()) return Status::Skip();

  auto st = std::make_shared<ScoreState>();
  st->constraints = std::move(constraints).value();
  // Only the pod's own constraints (or configured List defaults) require every key: with the
  // system defaults, nodes without a zone still get hostname spreading.
  st->require_all_keys = !p.spec.topology_spread_constraints.empty() || !system_defaulted_;
  st->pod_namespace = p.metadata.namespace_;
  PreScoreScratch x;
  x.k = st->constraints.size();
  x.require_all = st->require_all_keys;

  std::lock_guard lock(cache_.mutex());
  const std::shared_ptr<const NodeTable> table = RefreshTable(all);
  ResolveDomains(cache_, *st, x);
  SeedFeasibleNodes(*table, feasible, *st, x);
  x.counts.assign(x.k, nullptr);
  const bool memoize = x.k < SpreadCache::kCountsCapacity;
  for (size_t i = 0; i < x.k; ++i) {
    const SpreadConstraint& c = st->constraints[i];
    if (memoize && !c.count_key.empty())
      x.counts[i] = &cache_.CountsFor(c.count_key, c.selector, p.metadata.namespace_);
  }
  if (x.any_domain_constraint) CountPodsPerDomain(cache_, *table, p, *st, x);
  RawScores(cache_, all, feasible, p, *st, x);

  state.Write(kScoreStateKey, std::move(st));
  return Status::Success();
}

Status PodTopologySpread::Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                int64_t* score) const {
  (void)pod;
  const ScoreState* st = state.Read(kScoreStateKey);
  if (st == nullptr) {
    return Status::Error("error reading \"PreScorePodTopologySpread\" from cycleState: not found");
  }
  *score = st->RawScore(node);
  return Status::Success();
}

Status PodTopologySpread::ScoreNodes(const CycleState& state, const PodInfo& pod,
                                     std::span<const NodeInfo* const> nodes, int64_t* out) const {
  const ScoreState* st = state.Read(kScoreStateKey);
  const int64_t pos = st != nullptr ? st->RunPosition(nodes) : -1;
  if (pos < 0) {
    for (size_t k = 0; k < nodes.size(); ++k) {
      if (Status s = Score(state, pod, *nodes[k], &out[k]); !s.IsSuccess()) return s;
    }
    return Status::Success();
  }
  std::copy_n(st->scores.begin() + pos, nodes.size(), out);
  return Status::Success();
}

Status PodTopologySpread::NormalizeScore(const CycleState& state, const PodInfo& pod,
                                         std::span<NodeScore> scores) const {
  (void)pod;
  const ScoreState* st = state.Read(kScoreStateKey);
  if (st == nullptr) {
    return Status::Error("error reading \"PreScorePodTopologySpread\" from cycleState: not found");
  }
  int64_t min_score = INT64_MAX, max_score = 0;
  std::vector<uint8_t> ignored(scores.size(), 0);
  // The framework hands the scores in PreScore's order: then the positions say which are ignored.
  bool in_order = scores.size() == st->feasible.size();
  for (size_t i = 0; i < scores.size() && in_order; ++i)
    in_order = scores[i].node == st->feasible[i];
  for (size_t i = 0; i < scores.size(); ++i) {
    if (in_order ? st->ignored[i] != 0
                 : scores[i].node == nullptr || st->Ignored(*scores[i].node)) {
      ignored[i] = 1;
      continue;
    }
    min_score = std::min(min_score, scores[i].score);
    max_score = std::max(max_score, scores[i].score);
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (ignored[i]) {
      scores[i].score = 0;
    } else if (max_score == 0) {
      scores[i].score = kMaxNodeScore;
    } else {
      scores[i].score = kMaxNodeScore * (max_score + min_score - scores[i].score) / max_score;
    }
  }
  return Status::Success();
}

}  // namespace berth::podtopologyspread
