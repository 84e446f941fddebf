// TopologyCounter: a flat hash map from topology pairs (topologyKey, value) to a signed count.
//
// Built once per scheduling cycle by InterPodAffinity and then read concurrently by Filter and
// Score, so reads never allocate: a lookup hashes the (key, value) string_views and probes an
// open-addressed slot array. Topology keys are few per cycle (usually one or two), so they are
// interned into a small table and slots refer to them by index; values are copied into one
// arena string, so the counter owns all of its text and can outlive the objects it was built
// from. Not thread-safe for writes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace berth::interpodaffinity {

class TopologyCounter {
 public:
  // Index of an interned topology key.
  using KeyId = uint32_t;
  static constexpr KeyId kNoKey = UINT32_MAX;

  // Interns `key` (if new) and returns its id. Ids are dense and stable for this counter.
  KeyId InternKey(std::string_view key);
  // The id of `key`, or kNoKey if it never appeared.
  KeyId FindKey(std::string_view key) const;
  const std::vector<std::string>& keys() const { return keys_; }

  // Adds `delta` to the pair. An entry that reaches zero stops counting towards size() but keeps
  // its slot, so a later Add finds it again without rehashing.
  void Add(KeyId key, std::string_view value, int64_t delta);
  void Add(std::string_view key, std::string_view value, int64_t delta) {
    Add(InternKey(key), value, delta);
  }
  // Adds every entry of `other` (keys matched by name).
  void Merge(const TopologyCounter& other);

  // The count of the pair, 0 when absent.
  int64_t Get(KeyId key, std::string_view value) const;
  int64_t Get(std::string_view key, std::string_view value) const {
    KeyId id = FindKey(key);
    return id == kNoKey ? 0 : Get(id, value);
  }

  // Pairs whose count is not zero (the size of the equivalent map that erases zero entries).
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  // Pairs that were ever added to, including ones whose count went back to zero.
  size_t entries() const { return used_; }

  // Calls fn(key, value, count) for every pair with a non-zero count, in no particular order.
  void ForEach(const std::function<void(std::string_view, std::string_view, int64_t)>& fn) const;

  void Reserve(size_t pairs);

 private:
  struct Slot {
    uint64_t hash = 0;
    KeyId key = kNoKey;  // kNoKey marks an empty slot
    uint32_t value_offset = 0;
    uint32_t value_size = 0;
    int64_t count = 0;
  };

  static uint64_t Hash(KeyId key, std::string_view value);
  std::string_view ValueOf(const Slot& s) const {
    return std::string_view(arena_).substr(s.value_offset, s.value_size);
  }
  // Index of the slot holding the pair, or of the empty slot where it would go.
  size_t Probe(uint64_t hash, KeyId key, std::string_view value) const;
  void Grow();

  std::vector<std::string> keys_;
  std::vector<Slot> slots_;  // size is 0 or a power of two
  std::string arena_;
  size_t used_ = 0;
  size_t live_ = 0;
};

}  // namespace berth::interpodaffinity
