// The structured allocator: an exhaustive, depth-first search over the devices of the pools a
// node reaches, claim by claim, request by request, device by device, stopping at the first
// complete solution (upstream's allocateOne).
#include "dra/allocator.h"

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <shared_mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cel/dra.h"
#include "dra/allocator_impl.h"
#include "dra/internal.h"
#include "dra/pool_cache.h"

namespace berth::dra {
namespace {

std::string RandomShareId() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  uint64_t hi = rng(), lo = rng();
  for (int i = 0; i < 32; ++i) {
    uint64_t& w = i < 16 ? hi : lo;
    int nibble = static_cast<int>(w & 0xf);
    w >>= 4;
    if (i == 12) nibble = 4;                 // version 4
    if (i == 16) nibble = 8 | (nibble & 3);  // RFC 4122 variant
    if (i == 8 || i == 12 || i == 16 || i == 20) out += '-';
    out += kHex[nibble];
  }
  return out;
}

}  // namespace

Allocator::Allocator(Features features, AllocatedState allocated, DeviceClassLookup classes,
                     std::vector<std::shared_ptr<const ResourceSlice>> slices,
                     cel::dra::SelectorCache* cache)
    : Allocator(features, std::make_shared<const AllocatedState>([&] {
                  if (!allocated.indexed) IndexByPool(allocated);
                  return std::move(allocated);
                }()),
                std::move(classes), std::make_shared<const SliceIndex>(features, std::move(slices)),
                cache) {}

Allocator::Allocator(Features features, std::shared_ptr<const AllocatedState> allocated,
                     DeviceClassLookup classes, std::shared_ptr<const SliceIndex> slices,
                     cel::dra::SelectorCache* cache)
    : impl_(std::make_unique<Impl>()) {
  impl_->features = features;
  impl_->state = std::move(allocated);
  impl_->classes = std::move(classes);
  impl_->cache = cache;
  impl_->share_ids = RandomShareId;
  impl_->index = std::move(slices);
}

Allocator::~Allocator() = default;

void Allocator::SetShareIdGenerator(std::function<std::string()> gen) {
  impl_->share_ids = std::move(gen);
}

void Allocator::SetShortcuts(bool on) { impl_->shortcuts = on; }

bool IsFailedAllocationOnNode(const Error& e) { return e.code == kFailedAllocationOnNode; }

}  // namespace berth::dra
