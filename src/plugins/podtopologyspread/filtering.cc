#include <climits>
#include <string>
#include <utility>

#include "plugins/podtopologyspread/podtopologyspread.h"
#include "plugins/podtopologyspread/state.h"

namespace berth::podtopologyspread {
namespace {

constexpr std::string_view kHardConstraintsError =
    "get constraints from pod: obtaining pod's hard topology spread constraints: ";

}  // namespace

// ---------------------------------------------------------------- DomainCounts

DomainCounts::DomainCounts(std::shared_ptr<const KeyDomains> domains)
    : domains_(std::move(domains)),
      count_(domains_->num_domains(), 0),
      eligible_(domains_->num_domains(), 0) {}

void DomainCounts::Seal() {
  num_domains_ = 0;
  histogram_.clear();
  for (size_t d = 0; d < eligible_.size(); ++d) {
    if (!eligible_[d]) continue;
    ++num_domains_;
    Histogram(count_[d], 1);
  }
  for (const auto& [value, count] : extra_) {
    ++num_domains_;
    Histogram(count, 1);
  }
}

void DomainCounts::Histogram(int32_t count, int32_t delta) {
  auto it = histogram_.try_emplace(count, 0).first;
  it->second += delta;
  if (it->second <= 0) histogram_.erase(it);
}

void DomainCounts::Update(int32_t domain, std::string_view value, int32_t delta) {
  int32_t* count;
  bool was_eligible;
  if (domain >= 0) {
    count = &count_[domain];
    was_eligible = eligible_[domain] != 0;
    eligible_[domain] = 1;
  } else {
    auto [it, inserted] = extra_.try_emplace(std::string(value), 0);
    count = &it->second;
    was_eligible = !inserted;
  }
  if (was_eligible) {
    Histogram(*count, -1);
  } else {
    ++num_domains_;
  }
  *count += delta;
  Histogram(*count, 1);
}

int32_t DomainCounts::CountOfValue(std::string_view value) const {
  const int32_t d = domains_->Find(value);
  if (d >= 0) return count_[d];
  auto it = extra_.find(value);
  return it == extra_.end() ? 0 : it->second;
}

int32_t DomainCounts::MinCount() const {
  return histogram_.empty() ? INT32_MAX : histogram_.begin()->first;
}

std::optional<int32_t> DomainCounts::EligibleCount(std::string_view value) const {
  const int32_t d = domains_->Find(value);
  if (d >= 0) {
    if (!eligible_[d]) return std::nullopt;
    return count_[d];
  }
  auto it = extra_.find(value);
  if (it == extra_.end()) return std::nullopt;
  return it->second;
}

// ---------------------------------------------------------------- PreFilter / Filter

Status PodTopologySpread::PreFilter(CycleState& state, const PodInfo& pod,
                                    std::span<const NodeInfo* const> nodes,
                                    PreFilterResult* result) {
  (void)result;
  const Pod& p = *pod.pod;
  auto constraints = Constraints(p, kDoNotSchedule);
  if (!constraints.ok()) {
    return Status::Error(std::string(kHardConstraintsError) + constraints.error().message);
  }
  if (constraints->empty()) return Status::Skip();

  auto fs = std::make_shared<FilterState>();
  fs->constraints =
      std::make_shared<const std::vector<SpreadConstraint>>(std::move(constraints).value());
  const std::vector<SpreadConstraint>& cs = *fs->constraints;
  const size_t k = cs.size();

  std::lock_guard lock(cache_.mutex());
  fs->table = RefreshTable(nodes);
  const NodeTable& table = *fs->table;

  bool honor_affinity = false, honor_taints = false;
  std::vector<std::shared_ptr<const KeyDomains>> domains(k);
  for (size_t i = 0; i < k; ++i) {
    domains[i] = cache_.Domains(cs[i].topology_key);
    honor_affinity |= cs[i].honor_node_affinity;
    honor_taints |= cs[i].honor_node_taints;
  }
  // Without a nodeSelector or required node affinity every node matches, so nothing to check.
  honor_affinity &= HasNodeAffinityInputs(p);
  const std::vector<uint8_t>* inclusion =
      honor_affinity || honor_taints ? &cache_.Inclusion(p, honor_affinity, honor_taints) : nullptr;
  std::vector<const SpreadCache::Counts*> counts(k, nullptr);
  const bool memoize = k < SpreadCache::kCountsCapacity;
  for (size_t i = 0; i < k; ++i) {
    if (memoize && !cs[i].count_key.empty())
      counts[i] = &cache_.CountsFor(cs[i].count_key, cs[i].selector, p.metadata.namespace_);
  }

  fs->counts.reserve(k);
  for (size_t i = 0; i < k; ++i) {
    fs->counts.emplace_back(domains[i]);
    fs->counts.back().self_match = cs[i].selector.Matches(p.metadata.labels);
  }

  // The walk over every node is the plugin's hot loop: flat arrays only.
  struct Lane {
    const int32_t* domain;  // per slot, -1 without the key
    const int32_t* pods;    // per slot matching pods (memoized), null when none can match
    int32_t* count;         // per domain
    uint8_t* eligible;      // per domain
    uint8_t required;       // inclusion flags the node must have
  };
  std::vector<Lane> lanes(k);
  bool direct_counting = false;
  for (size_t i = 0; i < k; ++i) {
    const SpreadConstraint& c = cs[i];
    lanes[i] = {domains[i]->slot_domains(), counts[i] ? counts[i]->data() : nullptr,
                fs->counts[i].mutable_counts(), fs->counts[i].mutable_eligible(),
                static_cast<uint8_t>((c.honor_node_affinity ? SpreadCache::kAffinityMatches : 0) |
                                     (c.honor_node_taints ? SpreadCache::kTaintsTolerated : 0))};
    direct_counting |= counts[i] == nullptr && !c.count_key.empty();
  }
  const uint8_t* flags = inclusion ? inclusion->data() : nullptr;
  const size_t n = table.size();
  if (k == 1 && !direct_counting) {
    const Lane l = lanes[0];
    for (size_t s = 0; s < n; ++s) {
      const int32_t d = l.domain[s];
      if (d < 0 || (flags && (flags[s] & l.required) != l.required)) continue;
      l.eligible[d] = 1;
      if (l.pods) l.count[d] += l.pods[s];
    }
  } else {
    for (size_t s = 0; s < n; ++s) {
      // A node counts only if it carries every constraint's key (which also rules out slots
      // without a node).
      bool has_all = true;
      for (size_t i = 0; i < k && has_all; ++i) has_all = lanes[i].domain[s] >= 0;
      if (!has_all) continue;
      const uint8_t f = flags ? flags[s] : 0xff;
      for (size_t i = 0; i < k; ++i) {
        const Lane& l = lanes[i];
        if ((f & l.required) != l.required) continue;
        const int32_t d = l.domain[s];
        l.eligible[d] = 1;
        if (l.pods) {
          l.count[d] += l.pods[s];
        } else if (!cs[i].count_key.empty()) {
          l.count[d] += CountMatchingPods(cache_.pods(s), cs[i].selector, p.metadata.namespace_);
        }
      }
    }
  }
  for (auto& dc : fs->counts) dc.Seal();

  state.Write(kFilterStateKey, std::move(fs));
  return Status::Success();
}

Status PodTopologySpread::Filter(const CycleState& state, const PodInfo& pod,
                                 const NodeInfo& node) const {
  (void)pod;
  const FilterState* fs = state.Read(kFilterStateKey);
  if (fs == nullptr) {
    return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  }
  const std::vector<SpreadConstraint>& cs = *fs->constraints;
  if (cs.empty()) return Status::Success();
  const Node* n = node.node();
  if (n == nullptr) return Status::Error("node not found");

  const int32_t slot = fs->table->SlotOf(node);
  for (size_t i = 0; i < cs.size(); ++i) {
    const SpreadConstraint& c = cs[i];
    const DomainCounts& dc = fs->counts[i];
    int32_t matching;
    if (slot >= 0) {
      const int32_t d = dc.domains().slot_domain(slot);
      if (d < 0) return node_label_not_match_;
      matching = dc.Count(d);
    } else {
      // A node outside the cycle's snapshot (e.g. built by a test): look its value up.
      auto it = n->metadata.labels.find(c.topology_key);
      if (it == n->metadata.labels.end()) {
        return node_label_not_match_;
      }
      matching = dc.CountOfValue(it->second);
    }
    // With fewer eligible domains than minDomains, the global minimum is taken as 0.
    const int64_t min_count = dc.num_domains() < c.min_domains ? 0 : dc.MinCount();
    const int64_t skew = int64_t{matching} + (dc.self_match ? 1 : 0) - min_count;
    if (skew > c.max_skew) return constraints_not_match_;
  }
  return Status::Success();
}

Status PodTopologySpread::AddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                 const PodInfoPtr& pod_to_add, const NodeInfo& node) const {
  return UpdateWithPod(state, *pod_to_schedule.pod, *pod_to_add->pod, node, 1);
}

Status PodTopologySpread::RemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                    const PodInfoPtr& pod_to_remove, const NodeInfo& node) const {
  return UpdateWithPod(state, *pod_to_schedule.pod, *pod_to_remove->pod, node, -1);
}

Status PodTopologySpread::UpdateWithPod(CycleState& state, const Pod& pod_to_schedule,
                                        const Pod& other, const NodeInfo& node,
                                        int32_t delta) const {
  FilterState* fs = state.ReadMutable(kFilterStateKey);
  if (fs == nullptr) {
    return Status::Error("reading \"PreFilterPodTopologySpread\" from cycleState: not found");
  }
  const Node* n = node.node();
  if (n == nullptr || other.metadata.namespace_ != pod_to_schedule.metadata.namespace_) {
    return Status::Success();
  }
  const std::vector<SpreadConstraint>& cs = *fs->constraints;
  if (!NodeHasAllKeys(*n, cs)) return Status::Success();
  const int32_t slot = fs->table->SlotOf(node);
  for (size_t i = 0; i < cs.size(); ++i) {
    const SpreadConstraint& c = cs[i];
    if (!c.selector.Matches(other.metadata.labels)) continue;
    if (!NodeIncluded(c, pod_to_schedule, *n, comparison_operators_)) continue;
    DomainCounts& dc = fs->counts[i];
    const std::string& value = n->metadata.labels.find(c.topology_key)->second;
    const int32_t d = slot >= 0 ? dc.domains().slot_domain(slot) : dc.domains().Find(value);
    dc.Update(d, value, delta);
  }
  return Status::Success();
}

}  // namespace berth::podtopologyspread
