#include "plugins/noderesources/dra_backed.h"

#include <algorithm>
#include <utility>

#include "berth/framework/dra.h"
#include "framework/claim_feed.h"
#include "framework/dra_extended_resources.h"

namespace berth::noderesources {

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
  std::shared_ptr<const dra::AllocatedState> state =
      held ? held->Update(dra->ListResourceClaims())
           : std::make_shared<const dra::AllocatedState>(
                 dra::AllocatedStateOf(dra->ListResourceClaims()));
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
