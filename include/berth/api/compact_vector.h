// CompactVector: std::vector's interface in one pointer, for the lists every API object carries.
//
// A Pod has a dozen lists and maps (tolerations, volumes, init containers, owner references,
// conditions, labels, annotations, ...) and most pods leave most of them empty; a std::vector
// is 24 bytes even then. CompactVector is 8 bytes: null when it never held an element,
// otherwise a pointer to one block holding its size, its capacity and its elements. A cluster of
// 100,000 nodes and their pods holds millions of these.
//
// The block holds the elements only, so a list of n elements costs what the allocator gives
// for n * sizeof(T) bytes, as a std::vector's does: a size header in the block would push many
// one- and two-element lists into the allocator's next size class. The size lives in the
// pointer's upper 16 bits (user-space addresses on x86-64 and AArch64 Linux fit in 48), and
// the capacity is what malloc_usable_size reports for the block. A list of 65,535 elements or
// more keeps its size and capacity in a 16-byte header before its elements instead.
//
// Differences from std::vector that callers must respect:
//   * iterators are plain pointers;
//   * there is no conversion to `const std::vector<T>&`: take a `std::span<const T>` (which
//     both convert to) or `const auto&` in code that reads either.
// A std::vector converts to a CompactVector implicitly, so objects can still be filled from one.
//
// Not thread-safe for concurrent writes; objects holding CompactVectors are immutable once shared.
#pragma once

#include <malloc.h>

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

namespace berth {

template <class T>
class CompactVector {
 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  CompactVector() noexcept = default;
  explicit CompactVector(size_type n) { resize(n); }
  CompactVector(size_type n, const T& value) { assign(n, value); }
  template <class InputIt, class = std::enable_if_t<!std::is_integral_v<InputIt>>>
  CompactVector(InputIt first, InputIt last) {
    assign(first, last);
  }
  CompactVector(std::initializer_list<T> init) { assign(init.begin(), init.end()); }
  CompactVector(const std::vector<T>& v) { assign(v.begin(), v.end()); }  // NOLINT: see above
  CompactVector(std::vector<T>&& v) {                                     // NOLINT: see above
    reserve(v.size());
    for (auto& e : v) emplace_back(std::move(e));
  }
  CompactVector(const CompactVector& o) { assign(o.begin(), o.end()); }
  CompactVector(CompactVector&& o) noexcept : bits_(std::exchange(o.bits_, 0)) {}
  ~CompactVector() { Release(); }

  CompactVector& operator=(const CompactVector& o) {
    if (this != &o) assign(o.begin(), o.end());
    return *this;
  }
  CompactVector& operator=(CompactVector&& o) noexcept {
    if (this != &o) {
      Release();
      bits_ = std::exchange(o.bits_, 0);
    }
    return *this;
  }
  CompactVector& operator=(std::initializer_list<T> init) {
    assign(init.begin(), init.end());
    return *this;
  }

  iterator begin() noexcept { return Data(); }
  iterator end() noexcept { return Data() + size(); }
  const_iterator begin() const noexcept { return Data(); }
  const_iterator end() const noexcept { return Data() + size(); }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  const_reverse_iterator crbegin() const noexcept { return rbegin(); }
  const_reverse_iterator crend() const noexcept { return rend(); }

  bool empty() const noexcept { return size() == 0; }
  size_type size() const noexcept {
    const size_type tag = bits_ >> kSizeShift;
    return tag == kLargeTag ? LargeHeaderOf(Data())->size : tag;
  }
  size_type capacity() const noexcept {
    if (bits_ == 0) return 0;
    if ((bits_ >> kSizeShift) == kLargeTag) return LargeHeaderOf(Data())->capacity;
    return std::min<size_type>(malloc_usable_size(Data()) / sizeof(T), kMaxSmall);
  }
  size_type max_size() const noexcept { return SIZE_MAX / sizeof(T) / 2; }
  T* data() noexcept { return Data(); }
  const T* data() const noexcept { return Data(); }

  T& operator[](size_type i) noexcept { return Data()[i]; }
  const T& operator[](size_type i) const noexcept { return Data()[i]; }
  T& at(size_type i) {
    if (i >= size()) throw std::out_of_range("CompactVector::at");
    return Data()[i];
  }
  const T& at(size_type i) const {
    if (i >= size()) throw std::out_of_range("CompactVector::at");
    return Data()[i];
  }
  T& front() noexcept { return Data()[0]; }
  const T& front() const noexcept { return Data()[0]; }
  T& back() noexcept { return Data()[size() - 1]; }
  const T& back() const noexcept { return Data()[size() - 1]; }

  void reserve(size_type n) {
    if (n > capacity()) Reallocate(n);
  }
  // Non-binding, as std::vector's: a block within the allocator's rounding of the exact size
  // is kept (reallocating it would land in the same size class).
  void shrink_to_fit() {
    if (empty()) {
      Release();
    } else if ((capacity() - size()) * sizeof(T) > 32) {
      Reallocate(size());
    }
  }
  void clear() noexcept { EraseTail(0); }

  template <class... Args>
  T& emplace_back(Args&&... args) {
    const size_type n = size();
    if (n == capacity()) {
      // Built first: args may refer to an element that growing moves.
      T value(std::forward<Args>(args)...);
      Reallocate(Grown(n + 1));
      ::new (static_cast<void*>(Data() + n)) T(std::move(value));
    } else {
      ::new (static_cast<void*>(Data() + n)) T(std::forward<Args>(args)...);
    }
    SetSize(n + 1);
    return Data()[n];
  }
  void push_back(const T& v) { emplace_back(v); }
  void push_back(T&& v) { emplace_back(std::move(v)); }
  void pop_back() noexcept { EraseTail(size() - 1); }

  void resize(size_type n) {
    if (n < size()) {
      EraseTail(n);
      return;
    }
    reserve(n);
    while (size() < n) emplace_back();
  }
  void resize(size_type n, const T& value) {
    if (n < size()) {
      EraseTail(n);
      return;
    }
    reserve(n);
    while (size() < n) emplace_back(value);
  }

  template <class InputIt, class = std::enable_if_t<!std::is_integral_v<InputIt>>>
  void assign(InputIt first, InputIt last) {
    clear();
    if constexpr (std::is_base_of_v<std::forward_iterator_tag,
                                    typename std::iterator_traits<InputIt>::iterator_category>) {
      reserve(static_cast<size_type>(std::distance(first, last)));
    }
    for (; first != last; ++first) emplace_back(*first);
  }
  void assign(size_type n, const T& value) {
    clear();
    resize(n, value);
  }
  void assign(std::initializer_list<T> init) { assign(init.begin(), init.end()); }

  // Insertions append, then rotate into place: lists in objects are short.
  template <class... Args>
  iterator emplace(const_iterator pos, Args&&... args) {
    const size_type at = Offset(pos);
    emplace_back(std::forward<Args>(args)...);
    std::rotate(begin() + at, end() - 1, end());
    return begin() + at;
  }
  iterator insert(const_iterator pos, const T& v) { return emplace(pos, v); }
  iterator insert(const_iterator pos, T&& v) { return emplace(pos, std::move(v)); }
  template <class InputIt, class = std::enable_if_t<!std::is_integral_v<InputIt>>>
  iterator insert(const_iterator pos, InputIt first, InputIt last) {
    const size_type at = Offset(pos);
    const size_type before = size();
    for (; first != last; ++first) emplace_back(*first);
    std::rotate(begin() + at, begin() + before, end());
    return begin() + at;
  }
  iterator insert(const_iterator pos, size_type n, const T& v) {
    const size_type at = Offset(pos);
    const size_type before = size();
    for (size_type i = 0; i < n; ++i) emplace_back(v);
    std::rotate(begin() + at, begin() + before, end());
    return begin() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<T> init) {
    return insert(pos, init.begin(), init.end());
  }

  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const size_type at = Offset(first);
    const size_type count = static_cast<size_type>(last - first);
    if (count == 0) return begin() + at;
    std::move(begin() + at + count, end(), begin() + at);
    EraseTail(size() - count);
    return begin() + at;
  }

  void swap(CompactVector& o) noexcept { std::swap(bits_, o.bits_); }
  friend void swap(CompactVector& a, CompactVector& b) noexcept { a.swap(b); }

  friend bool operator==(const CompactVector& a, const CompactVector& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const CompactVector& a, const std::vector<T>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend auto operator<=>(const CompactVector& a, const CompactVector& b) {
    return std::lexicographical_compare_three_way(a.begin(), a.end(), b.begin(), b.end(),
                                                  SynthThreeWay{});
  }

 private:
  // bits_: 0 when nothing was ever allocated; otherwise the elements' address in the low 48
  // bits and the size in the high 16, or kLargeTag there when a LargeHeader before the elements
  // holds size and capacity.
  static constexpr int kSizeShift = 48;
  static constexpr uintptr_t kAddressMask = (uintptr_t{1} << kSizeShift) - 1;
  static constexpr size_type kLargeTag = 0xFFFF;
  static constexpr size_type kMaxSmall = kLargeTag - 1;
  struct LargeHeader {
    size_type size;
    size_type capacity;
  };
  static_assert(sizeof(void*) == 8, "CompactVector keeps its size in a 64-bit pointer");
  static_assert(alignof(T) <= alignof(std::max_align_t) &&
                    sizeof(LargeHeader) % alignof(std::max_align_t) == 0,
                "elements must be aligned as malloc aligns");

  // <=> where T has it, otherwise from <, as std::vector's comparison does.
  struct SynthThreeWay {
    auto operator()(const T& a, const T& b) const {
      if constexpr (std::three_way_comparable<T>) {
        return a <=> b;
      } else {
        return a < b ? std::weak_ordering::less
                     : (b < a ? std::weak_ordering::greater : std::weak_ordering::equivalent);
      }
    }
  };

  T* Data() const noexcept { return reinterpret_cast<T*>(bits_ & kAddressMask); }
  static LargeHeader* LargeHeaderOf(T* data) noexcept {
    return reinterpret_cast<LargeHeader*>(reinterpret_cast<char*>(data) - sizeof(LargeHeader));
  }
  bool IsLarge() const noexcept { return (bits_ >> kSizeShift) == kLargeTag; }
  void SetSize(size_type n) noexcept {
    if (IsLarge()) {
      LargeHeaderOf(Data())->size = n;
    } else {
      bits_ = (bits_ & kAddressMask) | (static_cast<uintptr_t>(n) << kSizeShift);
    }
  }
  static size_type Grown(size_type needed) { return needed < 4 ? needed : needed + needed / 2; }
  size_type Offset(const_iterator pos) const noexcept {
    return bits_ ? static_cast<size_type>(pos - Data()) : 0;
  }

  void Reallocate(size_type new_capacity) {
    if (new_capacity > max_size()) throw std::length_error("CompactVector: too many elements");
    const size_type n = size();
    const bool large = new_capacity > kMaxSmall;
    const size_type header = large ? sizeof(LargeHeader) : 0;
    char* block = static_cast<char*>(std::malloc(header + new_capacity * sizeof(T)));
    if (block == nullptr) throw std::bad_alloc();
    T* fresh = reinterpret_cast<T*>(block + header);
    if ((reinterpret_cast<uintptr_t>(fresh) & ~kAddressMask) != 0) {
      std::free(block);
      throw std::bad_alloc();  // an address above 2^48: the size would not fit beside it
    }
    if (bits_) {
      if constexpr (std::is_nothrow_move_constructible_v<T> || !std::is_copy_constructible_v<T>) {
        std::uninitialized_move(begin(), end(), fresh);
      } else {
        try {
          std::uninitialized_copy(begin(), end(), fresh);
        } catch (...) {
          std::free(block);
          throw;
        }
      }
      Release();
    }
    bits_ = reinterpret_cast<uintptr_t>(fresh);
    if (large) {
      *LargeHeaderOf(fresh) = LargeHeader{n, new_capacity};
      bits_ |= static_cast<uintptr_t>(kLargeTag) << kSizeShift;
    } else {
      SetSize(n);
    }
  }
  void EraseTail(size_type new_size) noexcept {
    if (!bits_) return;
    std::destroy(begin() + new_size, end());
    SetSize(new_size);
  }
  void Release() noexcept {
    if (!bits_) return;
    std::destroy(begin(), end());
    std::free(IsLarge() ? reinterpret_cast<char*>(LargeHeaderOf(Data()))
                        : reinterpret_cast<char*>(Data()));
    bits_ = 0;
  }

  uintptr_t bits_ = 0;
};

// As std::erase_if for std::vector: removes the elements matching `pred`, returns how many.
template <class T, class Pred>
typename CompactVector<T>::size_type erase_if(CompactVector<T>& v, Pred pred) {
  auto kept = std::remove_if(v.begin(), v.end(), pred);
  const auto removed = static_cast<typename CompactVector<T>::size_type>(v.end() - kept);
  v.erase(kept, v.end());
  return removed;
}

}  // namespace berth
