#include "plugins/dynamicresources/extended_claim_index.h"

namespace berth::dynamicresources {
namespace {

const std::string* ControllerUid(const ResourceClaim& claim) {
  for (const OwnerReference& ref : claim.metadata.owner_references)
    if (ref.controller) return &ref.uid;
  return nullptr;
}

}  // namespace

void ExtendedClaimIndex::SyncLocked(const DraClaimFeed& feed) {
  ClaimChanges c = feed.ClaimChangesSince(cursor_);
  cursor_ = c.cursor;
  if (c.resync) by_owner_.clear();
  for (const ClaimChange& change : c.changes) {
    if (change.old_claim)
      if (const std::string* uid = ControllerUid(*change.old_claim)) {
        auto [first, last] = by_owner_.equal_range(*uid);
        for (auto it = first; it != last; ++it)
          if (it->second->metadata.namespace_ == change.old_claim->metadata.namespace_ &&
              it->second->metadata.name == change.old_claim->metadata.name) {
            by_owner_.erase(it);
            break;
          }
      }
    if (change.new_claim)
      if (const std::string* uid = ControllerUid(*change.new_claim))
        by_owner_.emplace(*uid, change.new_claim);
  }
}

}  // namespace berth::dynamicresources
