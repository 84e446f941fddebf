// Chunked parallel loops for InterPodAffinity's per-cycle counting (internal).
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/framework/handle.h"

namespace berth::interpodaffinity {

// The value of `node`'s label `key`, or null.
inline const std::string* NodeLabel(const Node& node, std::string_view key) {
  auto it = node.metadata.labels.find(key);
  return it == node.metadata.labels.end() ? nullptr : &it->second;
}

// Splits [0, n) into contiguous chunks, one accumulator per chunk, and runs
// body(begin, end, accumulator) for each chunk through `parallelizer`. Returns the accumulators
// (fewer than the parallelism allows when n is small, so tiny clusters stay single-threaded).
template <class Acc, class Body>
std::vector<Acc> ForEachChunk(Parallelizer& parallelizer, size_t n, Body&& body) {
  // Below this many nodes per chunk, handing work to another thread costs more than it saves.
  constexpr size_t kMinPerChunk = 64;
  size_t chunks =
      std::min<size_t>((n + kMinPerChunk - 1) / kMinPerChunk,
                       static_cast<size_t>(std::max(1, parallelizer.parallelism())) * 2);
  std::vector<Acc> accs(std::max<size_t>(chunks, 1));
  if (chunks <= 1) {
    if (n > 0) body(size_t{0}, n, accs[0]);
    return accs;
  }
  parallelizer.Until(static_cast<int>(chunks), [&](int c) {
    const size_t begin = n * static_cast<size_t>(c) / chunks;
    const size_t end = n * (static_cast<size_t>(c) + 1) / chunks;
    body(begin, end, accs[static_cast<size_t>(c)]);
  });
  return accs;
}

}  // namespace berth::interpodaffinity
