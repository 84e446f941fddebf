// FlatMap: a sorted map kept in one vector, for the small string-keyed maps every object carries
// (labels, annotations, resource lists).
//
// A std::map allocates one tree node per entry (a two-entry label set is two allocations of
// ~100 bytes each); a cluster of 100,000 nodes and their pods holds millions of these maps with
// none to six entries. FlatMap keeps the entries contiguous, in key order, in a CompactVector
// (8 bytes when empty), with std::map's
// interface for what objects need: ordered iteration, heterogeneous lookup by anything that
// compares with the key (std::string_view, const char*), operator[], insert/emplace/erase.
//
// Differences from std::map that callers must respect:
//   * value_type is std::pair<Key, T> (the key is not const; do not modify it through an
//     iterator);
//   * inserting or erasing invalidates every iterator, pointer and reference into the map.
// Lookups are binary searches; an insertion shifts later entries, which is cheap at the sizes
// objects have and O(1) when keys arrive in order (as decoders produce them).
//
// Not thread-safe for concurrent writes; objects holding FlatMaps are immutable once shared.
#pragma once

#include <algorithm>
#include <compare>
#include <cstddef>
#include <initializer_list>
#include <stdexcept>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "berth/api/compact_vector.h"

namespace berth {

template <class Key, class T>
class FlatMap {
 public:
  using key_type = Key;
  using mapped_type = T;
  using value_type = std::pair<Key, T>;
  using key_compare = std::less<>;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = value_type&;
  using const_reference = const value_type&;
  using iterator = typename CompactVector<value_type>::iterator;
  using const_iterator = typename CompactVector<value_type>::const_iterator;
  using reverse_iterator = typename CompactVector<value_type>::reverse_iterator;
  using const_reverse_iterator = typename CompactVector<value_type>::const_reverse_iterator;

  FlatMap() = default;
  FlatMap(std::initializer_list<value_type> init) { insert(init.begin(), init.end()); }
  template <class InputIt>
  FlatMap(InputIt first, InputIt last) {
    insert(first, last);
  }

  iterator begin() noexcept { return entries_.begin(); }
  iterator end() noexcept { return entries_.end(); }
  const_iterator begin() const noexcept { return entries_.begin(); }
  const_iterator end() const noexcept { return entries_.end(); }
  const_iterator cbegin() const noexcept { return entries_.begin(); }
  const_iterator cend() const noexcept { return entries_.end(); }
  reverse_iterator rbegin() noexcept { return entries_.rbegin(); }
  reverse_iterator rend() noexcept { return entries_.rend(); }
  const_reverse_iterator rbegin() const noexcept { return entries_.rbegin(); }
  const_reverse_iterator rend() const noexcept { return entries_.rend(); }

  bool empty() const noexcept { return entries_.empty(); }
  size_type size() const noexcept { return entries_.size(); }
  void clear() noexcept { entries_.clear(); }
  void reserve(size_type n) { entries_.reserve(n); }
  // Releases spare capacity left by incremental insertion.
  void shrink_to_fit() { entries_.shrink_to_fit(); }

  template <class K>
  iterator lower_bound(const K& key) {
    return std::lower_bound(entries_.begin(), entries_.end(), key, KeyLess{});
  }
  template <class K>
  const_iterator lower_bound(const K& key) const {
    return std::lower_bound(entries_.begin(), entries_.end(), key, KeyLess{});
  }
  template <class K>
  iterator upper_bound(const K& key) {
    return std::upper_bound(entries_.begin(), entries_.end(), key, KeyLess{});
  }
  template <class K>
  const_iterator upper_bound(const K& key) const {
    return std::upper_bound(entries_.begin(), entries_.end(), key, KeyLess{});
  }

  template <class K>
  iterator find(const K& key) {
    auto it = lower_bound(key);
    return it != entries_.end() && !(key < it->first) ? it : entries_.end();
  }
  template <class K>
  const_iterator find(const K& key) const {
    auto it = lower_bound(key);
    return it != entries_.end() && !(key < it->first) ? it : entries_.end();
  }
  template <class K>
  bool contains(const K& key) const {
    return find(key) != end();
  }
  template <class K>
  size_type count(const K& key) const {
    return contains(key) ? 1 : 0;
  }

  template <class K>
  T& at(const K& key) {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("FlatMap::at: no such key");
    return it->second;
  }
  template <class K>
  const T& at(const K& key) const {
    auto it = find(key);
    if (it == end()) throw std::out_of_range("FlatMap::at: no such key");
    return it->second;
  }

  T& operator[](const Key& key) { return try_emplace(key).first->second; }
  T& operator[](Key&& key) { return try_emplace(std::move(key)).first->second; }

  template <class K, class... Args>
  std::pair<iterator, bool> try_emplace(K&& key, Args&&... args) {
    auto it = PositionFor(key);
    if (it != entries_.end() && !(key < it->first)) return {it, false};
    it = entries_.emplace(it, std::piecewise_construct, std::forward_as_tuple(std::forward<K>(key)),
                          std::forward_as_tuple(std::forward<Args>(args)...));
    return {it, true};
  }
  template <class K, class M>
  std::pair<iterator, bool> insert_or_assign(K&& key, M&& value) {
    auto [it, inserted] = try_emplace(std::forward<K>(key), std::forward<M>(value));
    if (!inserted) it->second = std::forward<M>(value);
    return {it, inserted};
  }

  std::pair<iterator, bool> insert(const value_type& v) { return try_emplace(v.first, v.second); }
  std::pair<iterator, bool> insert(value_type&& v) {
    return try_emplace(std::move(v.first), std::move(v.second));
  }
  template <class P>
  requires std::is_constructible_v<value_type, P&&> std::pair<iterator, bool> insert(P&& p) {
    return insert(value_type(std::forward<P>(p)));
  }
  // The hint is ignored (inserters pass end(), and keys in order are appended in O(1) anyway).
  iterator insert(const_iterator, const value_type& v) { return insert(v).first; }
  iterator insert(const_iterator, value_type&& v) { return insert(std::move(v)).first; }
  template <class InputIt>
  void insert(InputIt first, InputIt last) {
    for (; first != last; ++first) insert(*first);
  }
  void insert(std::initializer_list<value_type> init) { insert(init.begin(), init.end()); }
  template <class... Args>
  std::pair<iterator, bool> emplace(Args&&... args) {
    return insert(value_type(std::forward<Args>(args)...));
  }

  iterator erase(const_iterator pos) { return entries_.erase(pos); }
  iterator erase(iterator pos) { return entries_.erase(pos); }
  iterator erase(const_iterator first, const_iterator last) { return entries_.erase(first, last); }
  template <class K>
  requires(!std::is_convertible_v<K, const_iterator> &&
           !std::is_convertible_v<K, iterator>) size_type erase(const K& key) {
    auto it = find(key);
    if (it == end()) return 0;
    entries_.erase(it);
    return 1;
  }

  // Replaces the contents with `entries` in any order, in O(n log n); of equal keys the last
  // wins, as repeated operator[] assignments would leave it.
  void AssignUnsorted(std::vector<value_type> entries) {
    std::stable_sort(entries.begin(), entries.end(),
                     [](const value_type& a, const value_type& b) { return a.first < b.first; });
    entries_.clear();
    entries_.reserve(entries.size());
    for (auto& e : entries) {
      if (!entries_.empty() && !(entries_.back().first < e.first)) {
        entries_.back().second = std::move(e.second);
      } else {
        entries_.push_back(std::move(e));
      }
    }
  }

  void swap(FlatMap& o) noexcept { entries_.swap(o.entries_); }

  friend bool operator==(const FlatMap&, const FlatMap&) = default;
  friend auto operator<=>(const FlatMap& a, const FlatMap& b) { return a.entries_ <=> b.entries_; }

 private:
  struct KeyLess {
    template <class K>
    bool operator()(const value_type& v, const K& key) const {
      return v.first < key;
    }
    template <class K>
    bool operator()(const K& key, const value_type& v) const {
      return key < v.first;
    }
  };

  // Where `key` belongs; O(1) for a key after every present one, the order decoders produce.
  template <class K>
  iterator PositionFor(const K& key) {
    if (entries_.empty() || entries_.back().first < key) return entries_.end();
    return lower_bound(key);
  }

  CompactVector<value_type> entries_;
};

// FlatSet: FlatMap's sorted-vector layout for a set of keys (8 bytes empty, against
// std::set's 48), with std::set's interface for what callers use: ordered iteration, find,
// count, contains, insert, erase. Inserting or erasing invalidates iterators, as in FlatMap.
template <class Key>
class FlatSet {
 public:
  using key_type = Key;
  using value_type = Key;
  using size_type = std::size_t;
  using const_iterator = typename CompactVector<Key>::const_iterator;
  using iterator = const_iterator;  // keys are not modified in place

  FlatSet() = default;
  FlatSet(std::initializer_list<Key> init) {
    for (const auto& k : init) insert(k);
  }

  const_iterator begin() const noexcept { return keys_.begin(); }
  const_iterator end() const noexcept { return keys_.end(); }
  bool empty() const noexcept { return keys_.empty(); }
  size_type size() const noexcept { return keys_.size(); }
  void clear() noexcept { keys_.clear(); }

  template <class K>
  const_iterator find(const K& key) const {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key, std::less<>{});
    return it != keys_.end() && !(key < *it) ? it : keys_.end();
  }
  template <class K>
  bool contains(const K& key) const {
    return find(key) != end();
  }
  template <class K>
  size_type count(const K& key) const {
    return contains(key) ? 1 : 0;
  }

  template <class K>
  std::pair<const_iterator, bool> insert(K&& key) {
    auto it = std::lower_bound(keys_.begin(), keys_.end(), key, std::less<>{});
    if (it != keys_.end() && !(key < *it)) return {it, false};
    return {keys_.emplace(it, std::forward<K>(key)), true};
  }
  template <class K>
  size_type erase(const K& key) {
    auto it = find(key);
    if (it == end()) return 0;
    keys_.erase(it);
    return 1;
  }

  friend bool operator==(const FlatSet&, const FlatSet&) = default;

 private:
  CompactVector<Key> keys_;
};

}  // namespace berth
