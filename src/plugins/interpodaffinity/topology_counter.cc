#include "plugins/interpodaffinity/topology_counter.h"

#include <bit>

namespace berth::interpodaffinity {

TopologyCounter::KeyId TopologyCounter::InternKey(std::string_view key) {
  KeyId id = FindKey(key);
  if (id != kNoKey) return id;
  keys_.emplace_back(key);
  return static_cast<KeyId>(keys_.size() - 1);
}

TopologyCounter::KeyId TopologyCounter::FindKey(std::string_view key) const {
  // A linear scan beats hashing: a cycle sees one or two distinct topology keys.
  for (size_t i = 0; i < keys_.size(); ++i)
    if (keys_[i] == key) return static_cast<KeyId>(i);
  return kNoKey;
}

uint64_t TopologyCounter::Hash(KeyId key, std::string_view value) {
  uint64_t h = std::hash<std::string_view>{}(value);
  h ^= (static_cast<uint64_t>(key) + 1) * 0x9E3779B97F4A7C15ull;
  // Final avalanche so the low bits used for the slot index depend on every input bit.
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  return h;
}

size_t TopologyCounter::Probe(uint64_t hash, KeyId key, std::string_view value) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    const Slot& s = slots_[i];
    if (s.key == kNoKey) return i;
    if (s.hash == hash && s.key == key && ValueOf(s) == value) return i;
  }
}

void TopologyCounter::Reserve(size_t pairs) {
  // Keep the load factor at or below one half.
  size_t want = std::bit_ceil(pairs * 2 < 8 ? size_t{8} : pairs * 2);
  if (want <= slots_.size()) return;
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(want, Slot{});
  const size_t mask = want - 1;
  for (const Slot& s : old) {
    if (s.key == kNoKey) continue;
    size_t i = s.hash & mask;
    while (slots_[i].key != kNoKey) i = (i + 1) & mask;
    slots_[i] = s;
  }
}

void TopologyCounter::Grow() { Reserve(slots_.empty() ? 4 : slots_.size()); }

void TopologyCounter::Add(KeyId key, std::string_view value, int64_t delta) {
  if ((used_ + 1) * 2 > slots_.size()) Grow();
  const uint64_t h = Hash(key, value);
  Slot& s = slots_[Probe(h, key, value)];
  if (s.key == kNoKey) {
    s.hash = h;
    s.key = key;
    s.value_offset = static_cast<uint32_t>(arena_.size());
    s.value_size = static_cast<uint32_t>(value.size());
    arena_.append(value);
    ++used_;
  }
  const bool was_live = s.count != 0;
  s.count += delta;
  const bool is_live = s.count != 0;
  if (was_live != is_live) is_live ? ++live_ : --live_;
}

void TopologyCounter::Merge(const TopologyCounter& other) {
  if (other.used_ == 0) return;
  // Map the other counter's key ids once instead of per entry.
  std::vector<KeyId> remap(other.keys_.size());
  for (size_t i = 0; i < other.keys_.size(); ++i) remap[i] = InternKey(other.keys_[i]);
  Reserve(used_ + other.used_);
  for (const Slot& s : other.slots_) {
    // Zero entries are carried over too: entries() must match what the other counter saw.
    if (s.key != kNoKey) Add(remap[s.key], other.ValueOf(s), s.count);
  }
}

int64_t TopologyCounter::Get(KeyId key, std::string_view value) const {
  if (slots_.empty() || key == kNoKey) return 0;
  const Slot& s = slots_[Probe(Hash(key, value), key, value)];
  return s.key == kNoKey ? 0 : s.count;
}

void TopologyCounter::ForEach(
    const std::function<void(std::string_view, std::string_view, int64_t)>& fn) const {
  for (const Slot& s : slots_)
    if (s.key != kNoKey && s.count != 0) fn(keys_[s.key], ValueOf(s), s.count);
}

}  // namespace berth::interpodaffinity
