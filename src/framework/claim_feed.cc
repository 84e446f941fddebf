#include "framework/claim_feed.h"

#include <algorithm>
#include <utility>

namespace berth {
namespace {

// A reader that falls further behind than this resyncs. A resync costs one pass over the
// claims, as replaying as many changes would: keeping more than there are claims saves nothing.
constexpr size_t kMinKept = 4096;

std::string KeyOf(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
}

}  // namespace

const DraClaimFeed* DraClaimFeedOf(const ClusterListers& listers) {
  return dynamic_cast<const DraClaimFeed*>(&listers);
}

const DraSliceGeneration* DraSliceGenerationOf(const ClusterListers& listers) {
  return dynamic_cast<const DraSliceGeneration*>(&listers);
}

void ClaimChangeLog::Put(Ptr<ResourceClaim> claim) {
  if (!claim) return;
  std::lock_guard lock(mu_);
  Ptr<ResourceClaim>& slot = current_[KeyOf(claim->metadata.namespace_, claim->metadata.name)];
  if (slot == claim) return;  // the same object again is no change
  AppendLocked(ClaimChange{std::exchange(slot, claim), claim});
}

void ClaimChangeLog::Erase(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = current_.find(KeyOf(ns, name));
  if (it == current_.end()) return;
  ClaimChange change{std::move(it->second), nullptr};
  current_.erase(it);
  AppendLocked(std::move(change));
}

void ClaimChangeLog::AppendLocked(ClaimChange change) {
  journal_.push_back(std::move(change));
  ++next_;
  const size_t keep = std::max(kMinKept, current_.size());
  while (journal_.size() > keep) {
    journal_.pop_front();
    ++first_;
  }
}

ClaimChanges ClaimChangeLog::ClaimChangesSince(uint64_t cursor) const {
  ClaimChanges out;
  std::lock_guard lock(mu_);
  out.cursor = next_;
  if (cursor == 0 || cursor < first_ || cursor > next_) {
    out.resync = true;
    out.changes.reserve(current_.size());
    for (const auto& [key, claim] : current_) out.changes.push_back(ClaimChange{nullptr, claim});
    return out;
  }
  out.changes.assign(journal_.begin() + static_cast<std::ptrdiff_t>(cursor - first_),
                     journal_.end());
  return out;
}

size_t ClaimChangeLog::kept() const {
  std::lock_guard lock(mu_);
  return journal_.size();
}

}  // namespace berth
