#include "plugins/interpodaffinity/memo.h"

#include <algorithm>
#include <string_view>

#include "plugins/interpodaffinity/node_label.h"

namespace berth::interpodaffinity {
namespace {

// Length-prefixed, so no field can run into the next one.
void Put(std::string& out, std::string_view s) {
  out += std::to_string(s.size());
  out += ':';
  out.append(s);
}

void PutCount(std::string& out, size_t n) {
  out += std::to_string(n);
  out += '#';
}

void PutSelector(std::string& out, const std::optional<LabelSelector>& s) {
  if (!s) {
    out += '-';
    return;
  }
  out += '{';
  PutCount(out, s->match_labels.size());
  for (const auto& [k, v] : s->match_labels) {
    Put(out, k);
    Put(out, v);
  }
  PutCount(out, s->match_expressions.size());
  for (const auto& e : s->match_expressions) {
    Put(out, e.key);
    Put(out, e.op);
    PutCount(out, e.values.size());
    for (const auto& v : e.values) Put(out, v);
  }
  out += '}';
}

// matchLabelKeys / mismatchLabelKeys make the term depend on the pod's values of those keys.
void PutLabelKeys(std::string& out, const Pod& pod, const std::vector<std::string>& keys) {
  PutCount(out, keys.size());
  for (const auto& k : keys) {
    Put(out, k);
    auto it = pod.metadata.labels.find(k);
    if (it == pod.metadata.labels.end()) {
      out += '!';
    } else {
      out += '=';
      Put(out, it->second);
    }
  }
}

void PutNamespaces(std::string& out, const std::unordered_set<std::string>& namespaces) {
  std::vector<std::string_view> sorted(namespaces.begin(), namespaces.end());
  std::sort(sorted.begin(), sorted.end());
  PutCount(out, sorted.size());
  for (auto ns : sorted) Put(out, ns);
}

void PutTerm(std::string& out, const Pod& pod, const PodAffinityTerm& raw,
             const AffinityTerm& term) {
  PutSelector(out, raw.label_selector);
  PutLabelKeys(out, pod, raw.match_label_keys);
  PutLabelKeys(out, pod, raw.mismatch_label_keys);
  PutNamespaces(out, term.namespaces);
  PutSelector(out, raw.namespace_selector);
  out += term.namespace_selector.Empty()            ? 'E'
         : term.namespace_selector.MatchesNothing() ? '0'
                                                    : 'S';
  Put(out, term.topology_key);
}

}  // namespace

void AppendIncomingTermSignature(std::string& out, const Pod& pod, const PodAffinityTerm& raw,
                                 const AffinityTerm& merged) {
  out += '[';
  PutTerm(out, pod, raw, merged);
  out += ']';
}

IncomingMemo* MemoCache::Find(const std::string& signature) {
  for (auto it = memos_.begin(); it != memos_.end(); ++it) {
    if (it->first != signature) continue;
    memos_.splice(memos_.begin(), memos_, it);
    return memos_.front().second.get();
  }
  return nullptr;
}

IncomingMemo* MemoCache::Insert(std::string signature, std::unique_ptr<IncomingMemo> memo) {
  memos_.emplace_front(std::move(signature), std::move(memo));
  while (memos_.size() > capacity_) memos_.pop_back();
  return memos_.front().second.get();
}

uint32_t ExistingTermIndex::GroupFor(const Pod& pod, const PodAffinityTerm* raw,
                                     const AffinityTerm& term, Kind kind, int32_t weight) {
  scratch_.clear();
  scratch_ += static_cast<char>(kind);
  Put(scratch_, std::to_string(weight));
  if (raw) {
    PutTerm(scratch_, pod, *raw, term);
  } else {
    // Without the spec term the compiled one cannot be described: give it a group of its own
    // (the address is unique while the index holds the pod).
    scratch_ += '#';
    Put(scratch_, std::to_string(reinterpret_cast<uintptr_t>(&term)));
  }
  if (auto it = by_signature_.find(scratch_); it != by_signature_.end()) return it->second;
  uint32_t g = index_.NewGroup();
  if (groups_.size() <= g) groups_.resize(g + 1);
  groups_[g] = Group{term, kind, weight, scratch_};
  by_signature_.emplace(scratch_, g);
  return g;
}

void ExistingTermIndex::Compute(const Node& node, const std::vector<PodInfoPtr>& pods,
                                std::vector<Contribution>& out) {
  static const std::vector<PodAffinityTerm> kNoTerms;
  static const std::vector<WeightedPodAffinityTerm> kNoWeighted;
  for (const PodInfoPtr& info : pods) {
    const Pod& pod = *info->pod;
    const auto& a = pod.spec.affinity;
    const auto* aff = a && a->pod_affinity ? &*a->pod_affinity : nullptr;
    const auto* anti = a && a->pod_anti_affinity ? &*a->pod_anti_affinity : nullptr;

    auto plain = [&](const std::vector<AffinityTerm>& terms,
                     const std::vector<PodAffinityTerm>& raw, Kind kind) {
      const bool aligned = raw.size() == terms.size();
      for (size_t i = 0; i < terms.size(); ++i) {
        const std::string* value = NodeLabel(node, terms[i].topology_key);
        if (!value) continue;
        uint32_t g = GroupFor(pod, aligned ? &raw[i] : nullptr, terms[i], kind, 0);
        out.push_back({g, terms[i].topology_key, *value, 1});
      }
    };
    auto weighted = [&](const std::vector<WeightedAffinityTerm>& terms,
                        const std::vector<WeightedPodAffinityTerm>& raw, Kind kind) {
      const bool aligned = raw.size() == terms.size();
      for (size_t i = 0; i < terms.size(); ++i) {
        const std::string* value = NodeLabel(node, terms[i].term.topology_key);
        if (!value) continue;
        uint32_t g =
            GroupFor(pod, aligned ? &raw[i].term : nullptr, terms[i].term, kind, terms[i].weight);
        out.push_back({g, terms[i].term.topology_key, *value, 1});
      }
    };

    for (Kind kind : kinds_) {
      switch (kind) {
        case Kind::kRequiredAffinity:
          plain(info->required_affinity(), aff ? aff->required : kNoTerms, kind);
          break;
        case Kind::kRequiredAntiAffinity:
          plain(info->required_anti_affinity(), anti ? anti->required : kNoTerms, kind);
          break;
        case Kind::kPreferredAffinity:
          weighted(info->preferred_affinity(), aff ? aff->preferred : kNoWeighted, kind);
          break;
        case Kind::kPreferredAntiAffinity:
          weighted(info->preferred_anti_affinity(), anti ? anti->preferred : kNoWeighted, kind);
          break;
      }
    }
  }
}

void ExistingTermIndex::Refresh(std::span<const NodeInfo* const> nodes) {
  // Computed on this thread: grouping interns signatures.
  index_.Refresh(
      nodes,
      [this](const Node& node, const std::vector<PodInfoPtr>& pods,
             std::vector<Contribution>& out) { Compute(node, pods, out); },
      nullptr);
  index_.ReleaseUnused([this](uint32_t g) {
    by_signature_.erase(groups_[g]->signature);
    groups_[g].reset();
  });
}

}  // namespace berth::interpodaffinity
