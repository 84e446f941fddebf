#include "dra/allocator.h"

#include <utility>

namespace berth::dra {

struct Allocator::Impl {};

void AddAllocation(AllocatedState&, const AllocationResult&) {}

AllocatedState AllocatedStateOf(const std::vector<std::shared_ptr<const ResourceClaim>>&) {
  return {};
}

Allocator::Allocator(Features, AllocatedState, DeviceClassLookup,
                     std::vector<std::shared_ptr<const ResourceSlice>>, cel::dra::SelectorCache*)
    : impl_(std::make_unique<Impl>()) {}

Allocator::~Allocator() = default;

void Allocator::SetShareIdGenerator(std::function<std::string()>) {}

Result<std::optional<std::vector<AllocationResult>>> Allocator::Allocate(
    const Node&, const std::vector<std::shared_ptr<const ResourceClaim>>&) const {
  return Error{"not implemented"};
}

}  // namespace berth::dra
