#include "scheduler/opportunistic_batch.h"

#include <algorithm>

namespace berth {

std::string_view OpportunisticBatch::FlushReason(Flush f) {
  switch (f) {
    case Flush::kPodSkipped:
      return "pod_skipped";
    case Flush::kPodNominated:
      return "pod_nominated";
    case Flush::kPodIncompatible:
      return "pod_incompatible";
    case Flush::kExpired:
      return "expired";
    case Flush::kNodeMissing:
      return "node_missing";
    case Flush::kPreScoreError:
      return "prescore_error";
    case Flush::kRescoreError:
      return "rescore_error";
    case Flush::kPodNotBatchable:
      return "pod_not_batchable";
    case Flush::kEmptyList:
      return "empty_list";
    case Flush::kCount:
      break;
  }
  return "";
}

void OpportunisticBatch::SetUp(const std::vector<std::unique_ptr<Framework>>& profiles,
                               bool enabled, bool has_extenders, SchedulerMetricsSink* metrics) {
  states_.clear();
  metrics_ = metrics;
  enabled_ = enabled && !has_extenders;
  if (!enabled_) return;
  for (const auto& fw : profiles) {
    std::vector<const PodSigner*> signers;
    bool all = true;
    for (const Plugin* p : fw->CyclePlugins()) {
      const auto* signer = dynamic_cast<const PodSigner*>(p);
      if (!signer) {
        all = false;
        break;
      }
      signers.push_back(signer);
    }
    if (all) AddProfile(fw.get(), std::move(signers), fw->profile_name());
  }
}

void OpportunisticBatch::AddProfile(const void* profile, std::vector<const PodSigner*> signers,
                                    std::string name) {
  State s;
  s.name = std::move(name);
  s.signers = std::move(signers);
  states_[profile] = std::move(s);
}

bool OpportunisticBatch::Batches(const void* profile) const { return states_.count(profile) > 0; }

bool OpportunisticBatch::Signable(const void* profile, const Pod& pod) const {
  auto it = states_.find(profile);
  if (it == states_.end()) return false;
  for (const PodSigner* s : it->second.signers)
    if (!s->Signable(pod)) return false;
  return true;
}

bool OpportunisticBatch::SameSignature(const State& s, const Pod& a, const Pod& b) const {
  // The profile is the same (one state per profile), so is the scheduler name.
  for (const PodSigner* signer : s.signers)
    if (!signer->SameSignature(a, b)) return false;
  return true;
}

void OpportunisticBatch::Attempt(const State& s, std::string_view result, uint64_t& count) {
  ++count;
  if (metrics_) metrics_->BatchAttempt(s.name, result);
}

void OpportunisticBatch::Drop(State& s, Flush why) {
  ++counts_.flushed[static_cast<size_t>(why)];
  if (metrics_) metrics_->BatchFlush(s.name, FlushReason(why));
  s.ranking.clear();
  s.next = 0;
  s.signed_pod.reset();
}

bool OpportunisticBatch::Compatible(State& s, const Pod& pod, bool signable, uint64_t cycle,
                                    TimePoint now) {
  if (s.Empty()) return false;
  // A cycle that chose no node, or another profile's, came between: what it changed is unknown.
  if (!s.has_last || cycle != s.last_cycle + 1) {
    Drop(s, Flush::kPodSkipped);
    return false;
  }
  if (!pod.status.nominated_node_name.empty()) {
    Drop(s, Flush::kPodNominated);
    return false;
  }
  if (!signable || !SameSignature(s, *s.signed_pod, pod)) {
    Drop(s, Flush::kPodIncompatible);
    return false;
  }
  // Bounds how stale the kept scores get: long runs of alike pods, or long gaps between them.
  if (now > s.created + kMaxAge) {
    Drop(s, Flush::kExpired);
    return false;
  }
  return true;
}

std::string OpportunisticBatch::Hint(const void* profile, const std::shared_ptr<const Pod>& pod,
                                     bool signable, uint64_t cycle, TimePoint now, Checks& checks) {
  auto it = states_.find(profile);
  if (it == states_.end()) return "";
  State& s = it->second;
  std::string hint;
  if (Compatible(s, *pod, signable, cycle, now)) {
    // The kept scores hold only while the previous pod's node takes no more such pods: when
    // it still fits, it is scored again with the kept nodes and competes with them.
    switch (checks.CheckLastChosen(s.last_chosen)) {
      case Checks::LastNode::kMissing:
        Drop(s, Flush::kNodeMissing);
        break;
      case Checks::LastNode::kFull:
        hint = s.ranking[s.next++];
        break;
      case Checks::LastNode::kStillFits: {
        std::vector<std::string> ranking(s.ranking.begin() + static_cast<long>(s.next),
                                         s.ranking.end());
        ranking.push_back(s.last_chosen);
        if (auto failed = checks.Rescore(&ranking)) {
          Drop(s, *failed);
          break;
        }
        s.ranking = std::move(ranking);
        s.next = 1;
        hint = s.ranking[0];
        break;
      }
    }
  }
  if (hint.empty()) Attempt(s, "no_hint", counts_.no_hint);
  return hint;
}

void OpportunisticBatch::Store(const void* profile, const std::shared_ptr<const Pod>& pod,
                               bool signable, const std::string& hinted, const std::string& chosen,
                               std::vector<std::string> rest, uint64_t cycle, TimePoint now) {
  auto it = states_.find(profile);
  if (it == states_.end()) return;
  State& s = it->second;
  s.last_cycle = cycle;
  s.has_last = true;
  s.last_chosen = chosen;
  if (!hinted.empty() && hinted == chosen) {
    // The hint was taken: the rest of the ranking serves the next pod.
    Attempt(s, "hint_used", counts_.hint_used);
    return;
  }
  if (!hinted.empty()) Attempt(s, "hint_not_used", counts_.hint_not_used);
  if (signable && !rest.empty()) {
    s.ranking = std::move(rest);
    s.next = 0;
    s.signed_pod = pod;
    s.created = now;
    return;
  }
  Drop(s, signable ? Flush::kEmptyList : Flush::kPodNotBatchable);
}

std::vector<std::string> OpportunisticBatch::Ranking(const void* profile) const {
  auto it = states_.find(profile);
  if (it == states_.end()) return {};
  const State& s = it->second;
  return {s.ranking.begin() + static_cast<long>(std::min(s.next, s.ranking.size())),
          s.ranking.end()};
}

}  // namespace berth
