#include "plugins/noderesources/dra_backed.h"

#include <algorithm>
#include <utility>

#include "berth/framework/dra.h"
#include "framework/claim_feed.h"
#include "framework/dra_extended_resources.h"

namespace berth::noderesources {

namespace {

std::string KeyOf(const ResourceClaim& claim) {
  if (!claim.metadata.uid.empty()) return claim.metadata.uid;
  return claim.metadata.namespace_ + "/" + claim.metadata.name;
}

// The claims' held devices from the changes since the tracker's previous call, instead of
// listing every claim each cycle.
std::shared_ptr<const dra::AllocatedState> Follow(const DraClaimFeed& feed,
                                                  dra::AllocatedStateTracker& held) {
  const uint64_t from = held.position();
  ClaimChanges c = feed.ClaimChangesSince(from);
  std::vector<dra::AllocatedStateTracker::KeyedClaim> changes;
  changes.reserve(c.changes.size());
  for (ClaimChange& change : c.changes) {
    std::string key = change.new_claim ? KeyOf(*change.new_claim) : std::string();
    if (change.old_claim) {
      std::string old_key = KeyOf(*change.old_claim);
      if (old_key != key) changes.emplace_back(std::move(old_key), nullptr);
    }
    if (change.new_claim) changes.emplace_back(std::move(key), std::move(change.new_claim));
  }
  held.Advance(from, c.cursor, c.resync, std::move(changes));
  return held.State();
}

}  // namespace

std::shared_ptr<const DraBackedResources> DraBackedResources::Gather(
    const Handle& handle, std::span<const ScoredResource> resources, cel::dra::SelectorCache* cache,
    dra::AllocatedStateTracker* held, dra::ClassDeviceIndexCache* indexes) {
  auto may_be_backed = [](const ScoredResource& r) {
    return r.kind == ScoredResource::Kind::kScalar &&
           dra_extended::IsDraExtendedResourceName(r.name);
  };
  // Scoring cpu and memory alone (the defaults) costs nothing here.
  if (std::none_of(resources.begin(), resources.end(), may_be_backed)) return nullptr;
  const DraListers* dra = DraListersOf(handle.listers());
  if (dra == nullptr) return nullptr;
  std::vector<std::shared_ptr<const DeviceClass>> classes(resources.size());
  bool any = false;
  for (size_t i = 0; i < resources.size(); ++i) {
    if (!may_be_backed(resources[i])) continue;
    classes[i] = dra_extended::ResolveDeviceClass(*dra, resources[i].name);
    any = any || classes[i] != nullptr;
  }
  if (!any) return nullptr;
  std::shared_ptr<const dra::AllocatedState> state;
  const DraClaimFeed* feed = DraClaimFeedOf(handle.listers());
  if (held != nullptr && feed != nullptr) {
    state = Follow(*feed, *held);
  } else if (held != nullptr) {
    state = held->Update(dra->ListResourceClaims());
  } else {
    state = std::make_shared<const dra::AllocatedState>(
        dra::AllocatedStateOf(dra->ListResourceClaims()));
  }
  std::shared_ptr<const dra::ClassDeviceIndex> index;
  const DraSliceGeneration* generation = DraSliceGenerationOf(handle.listers());
  if (indexes != nullptr && generation != nullptr) {
    index = indexes->For(generation->ResourceSliceGeneration(),
                         [dra] { return dra->ListResourceSlices(); });
  } else {
    index = std::make_shared<const dra::ClassDeviceIndex>(dra->ListResourceSlices());
  }
  return std::make_shared<const DraBackedResources>(std::move(classes), std::move(index),
                                                    std::move(state), cache);
}

void DraBackedResources::Apply(const NodeInfo& node, std::span<const ScoredResource> resources,
                               std::span<const int64_t> pod_requests,
                               std::span<int64_t> allocatable, std::span<int64_t> requested) const {
  for (size_t i = 0; i < classes_.size(); ++i) {
    if (classes_[i] == nullptr || pod_requests[i] == 0 ||
        node.allocatable().Scalar(resources[i].name) != 0)
      continue;
    Result<dra::ClassDeviceCount> count =
        index_->Count(*node.node(), classes_[i], *state_, *cache_);
    if (!count.ok() || count->devices == 0) continue;
    allocatable[i] = count->devices;
    requested[i] = count->allocated + pod_requests[i];
  }
}

}  // namespace berth::noderesources
