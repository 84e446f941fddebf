#include "scheduler/node_result_reuse.h"

#include <algorithm>
#include <set>

#include "config/plugin_names.h"
#include "scheduler/equivalence.h"

namespace berth {

void NodeResultReuse::Slot::Resize(size_t n) {
  verdicts.assign(n, 0);
  rejection_of.assign(n, 0);
  scores.filled.assign(n, 0);
  Drop();
}

void NodeResultReuse::Slot::Drop() {
  if (++verdict_epoch >= (1u << 31)) {  // a verdict keeps the epoch in 31 bits
    std::fill(verdicts.begin(), verdicts.end(), 0);
    verdict_epoch = 1;
  }
  // No verdict of this epoch points at them, and no cycle holds one (pointers into them live
  // within a cycle, and a slot is dropped before its cycle's scan).
  rejections.clear();
  scores.NextEpoch();
  pod.reset();
}

uint32_t NodeResultReuse::Slot::Intern(Status status) {
  // Recent statuses first: a window of rejections mostly repeats the last few. (Status's ==
  // leaves out the plugin, which queueing hints and metrics read.)
  const size_t n = rejections.size();
  for (size_t k = 0; k < std::min<size_t>(n, 16); ++k) {
    const Status& seen = rejections[n - 1 - k];
    if (seen == status && seen.plugin() == status.plugin()) return static_cast<uint32_t>(n - 1 - k);
  }
  rejections.push_back(std::move(status));
  return static_cast<uint32_t>(n);
}

void NodeResultReuse::SetUp(const std::vector<std::unique_ptr<Framework>>& profiles,
                            const std::vector<std::string>& vouched_plugins,
                            bool reuse_equivalent_pods) {
  const bool vouched = !vouched_plugins.empty();
  if (vouched && profiles.size() != 1) return;
  if (!vouched && !reuse_equivalent_pods) return;
  std::set<std::string, std::less<>> local;
  if (vouched) {
    local.insert(vouched_plugins.begin(), vouched_plugins.end());
  } else {
    for (std::string_view name : NodeLocalPluginNames()) local.emplace(name);
  }
  for (const auto& fw : profiles) {
    bool all_local = true;
    for (const char* point : {"PreFilter", "Filter", "PreScore", "Score"})
      for (const auto& name : fw->ListPlugins(point))
        if (!local.count(name)) all_local = false;
    if (!all_local) continue;
    Profile profile{fw.get(), {}, {}};
    profile.dra_filter = fw->FilterPluginIndex(config::names::kDynamicResources);
    if (!vouched) {
      profile.spreading_scores.assign(fw->score_plugins().size(), false);
      for (std::string_view name : SpreadingPluginNames()) {
        if (int i = fw->FilterPluginIndex(name); i >= 0) profile.spreading_filters.push_back(i);
        if (int i = fw->ScorePluginIndex(name); i >= 0) profile.spreading_scores[i] = true;
      }
    }
    profiles_.push_back(std::move(profile));
  }
  if (!profiles_.empty()) mode_ = vouched ? Mode::kTemplateCopies : Mode::kEquivalentPods;
}

void NodeResultReuse::TrackNodeChanges(const Snapshot& snapshot) {
  const size_t n = snapshot.nodes().size();
  // A rebuilt node list, an update this scheduler did not follow, or a change in which nodes
  // hold an image (ImageLocality reads it for every node): start over.
  const bool all = snapshot.last_changed_from != snapshot_generation_ || changes_.images;
  for (Slot& slot : slots_) {
    if (slot.verdicts.size() != n) {
      slot.Resize(n);
    } else if (all) {
      slot.Drop();
    } else {
      for (uint32_t pos : changes_.positions) {
        if (pos >= n) {
          slot.Drop();
          break;
        }
        slot.Forget(pos);
      }
    }
  }
  snapshot_generation_ = snapshot.generation;
  feasible_rows_.clear();
}

bool NodeResultReuse::Admit(const Framework& fw, const CycleState& state, const PodInfo& pod,
                            size_t num_nodes) {
  slot_ = nullptr;
  if (mode_ == Mode::kOff) return false;
  const Profile* profile = nullptr;
  for (const Profile& p : profiles_)
    if (p.framework == &fw) profile = &p;
  if (!profile) return false;
  // Nominated pods are added to nodes while filtering, and the volume plugins read other
  // objects: neither may be in play. (Results kept for other pods stay valid: they never
  // depended on either.)
  if (fw.has_nominated_pods()) return false;
  if (mode_ == Mode::kEquivalentPods && UsesModeledVolumes(*pod.pod)) return false;
  const std::vector<bool>& skipped = state.skipped_filters();
  auto runs = [&](size_t i) { return i >= skipped.size() || !skipped[i]; };
  if (profile->dra_filter >= 0 && runs(static_cast<size_t>(profile->dra_filter))) return false;
  // The spreading plugins' Filter, where it runs, runs afresh every cycle; that needs it after
  // every other Filter plugin that runs (so a node's first rejection is still the same).
  size_t fresh_from = fw.num_filter_plugins();
  for (int i : profile->spreading_filters)
    if (runs(i)) fresh_from = std::min(fresh_from, static_cast<size_t>(i));
  for (size_t i = fresh_from; i < fw.num_filter_plugins(); ++i) {
    const bool spreading =
        std::find(profile->spreading_filters.begin(), profile->spreading_filters.end(),
                  static_cast<int>(i)) != profile->spreading_filters.end();
    if (runs(i) && !spreading) return false;
  }
  fresh_filters_from_ = fresh_from;
  Slot* slot = TakeSlot(pod, num_nodes);
  if (!slot) return false;
  ++recorded_cycles_;
  slot->last_used = ++cycles_;
  slot->scores.fresh = profile->spreading_scores;
  slot_ = slot;
  return true;
}

NodeResultReuse::Slot* NodeResultReuse::TakeSlot(const PodInfo& pod, size_t num_nodes) {
  if (mode_ == Mode::kTemplateCopies) {
    // Every pod is a copy of one template: one slot, never compared.
    if (slots_.empty()) slots_.emplace_back().Resize(num_nodes);
    return &slots_.front();
  }
  Slot* slot = nullptr;
  for (Slot& s : slots_)
    if (s.pod && SameSchedulingInputs(*s.pod, *pod.pod)) slot = &s;
  if (slot) {
    new_pods_in_a_row_ = 0;
    return slot;
  }
  if (new_pods_in_a_row_ < kOneOffStreak) {
    ++new_pods_in_a_row_;
  } else if (!SeenBefore(pod)) {
    return nullptr;
  }
  // An empty slot (dropped: its results are of a past epoch), a new one, or the least recently
  // used one, dropped.
  for (Slot& s : slots_)
    if (!s.pod) slot = &s;
  if (!slot && slots_.size() < kMaxSlots) {
    slot = &slots_.emplace_back();
    slot->Resize(num_nodes);
  } else if (!slot) {
    slot = &slots_.front();
    for (Slot& s : slots_)
      if (s.last_used < slot->last_used) slot = &s;
    slot->Drop();
  }
  slot->pod = pod.pod;
  return slot;
}

bool NodeResultReuse::SeenBefore(const PodInfo& pod) {
  for (auto& seen : pending_) {
    if (seen && SameSchedulingInputs(*seen, *pod.pod)) {
      seen.reset();
      return true;
    }
  }
  if (pending_.size() < kMaxSlots) {
    pending_.push_back(pod.pod);
  } else {
    pending_[next_pending_] = pod.pod;
    next_pending_ = (next_pending_ + 1) % kMaxSlots;
  }
  return false;
}

void NodeResultReuse::KeepRowsOf(const std::vector<const NodeInfo*>& sent,
                                 const std::vector<const NodeInfo*>& kept) {
  // Extenders answer in the order they were asked, so the kept nodes are a subsequence of the
  // nodes sent; an answer in another order scores this cycle without reuse.
  size_t j = 0, out = 0;
  for (const NodeInfo* ni : kept) {
    while (j < sent.size() && sent[j] != ni) ++j;
    if (j == sent.size()) {
      feasible_rows_.clear();
      return;
    }
    feasible_rows_[out++] = feasible_rows_[j++];
  }
  feasible_rows_.resize(out);
}

RawScoreMemo* NodeResultReuse::ScoreMemo(size_t feasible) {
  if (!slot_ || feasible_rows_.size() != feasible) return nullptr;
  slot_->scores.rows = feasible_rows_;
  return &slot_->scores;
}

}  // namespace berth
