// Boxed<T>: an optional value kept out of line, one pointer wide.
//
// For large members most objects leave unset (a Pod's affinity is 184 bytes inline as a
// std::optional, and most pods have none): an unset Boxed costs 8 bytes and no allocation. It has
// std::optional's interface for what callers use (has_value, operator bool, ->, *, value,
// value_or, emplace, reset, assignment from T or std::nullopt) and copies deeply, so an object
// holding one keeps value semantics.
//
// Not thread-safe for concurrent writes; objects holding one are immutable once shared.
#pragma once

#include <compare>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

namespace berth {

template <class T>
class Boxed {
 public:
  using value_type = T;

  Boxed() = default;
  Boxed(std::nullopt_t) {}  // NOLINT(google-explicit-constructor): optional-like
  Boxed(const T& v) : ptr_(std::make_unique<T>(v)) {}                                // NOLINT
  Boxed(T&& v) : ptr_(std::make_unique<T>(std::move(v))) {}                          // NOLINT
  Boxed(const std::optional<T>& v) : ptr_(v ? std::make_unique<T>(*v) : nullptr) {}  // NOLINT
  Boxed(const Boxed& o) : ptr_(o.ptr_ ? std::make_unique<T>(*o.ptr_) : nullptr) {}
  Boxed(Boxed&&) noexcept = default;
  Boxed& operator=(const Boxed& o) {
    if (this != &o) ptr_ = o.ptr_ ? std::make_unique<T>(*o.ptr_) : nullptr;
    return *this;
  }
  Boxed& operator=(Boxed&&) noexcept = default;
  Boxed& operator=(std::nullopt_t) {
    ptr_.reset();
    return *this;
  }
  Boxed& operator=(const T& v) {
    emplace(v);
    return *this;
  }
  Boxed& operator=(T&& v) {
    emplace(std::move(v));
    return *this;
  }

  bool has_value() const noexcept { return ptr_ != nullptr; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  T* operator->() noexcept { return ptr_.get(); }
  const T* operator->() const noexcept { return ptr_.get(); }
  T& operator*() noexcept { return *ptr_; }
  const T& operator*() const noexcept { return *ptr_; }
  T& value() {
    if (!ptr_) throw std::bad_optional_access();
    return *ptr_;
  }
  const T& value() const {
    if (!ptr_) throw std::bad_optional_access();
    return *ptr_;
  }
  template <class U>
  T value_or(U&& fallback) const {
    return ptr_ ? *ptr_ : static_cast<T>(std::forward<U>(fallback));
  }

  template <class... Args>
  T& emplace(Args&&... args) {
    ptr_ = std::make_unique<T>(std::forward<Args>(args)...);
    return *ptr_;
  }
  void reset() noexcept { ptr_.reset(); }

  friend bool operator==(const Boxed& a, const Boxed& b) {
    if (!a.ptr_ || !b.ptr_) return !a.ptr_ && !b.ptr_;
    return *a.ptr_ == *b.ptr_;
  }
  friend bool operator==(const Boxed& a, std::nullopt_t) { return !a.ptr_; }
  friend bool operator==(const Boxed& a, const std::optional<T>& b) {
    return a.has_value() == b.has_value() && (!a.ptr_ || *a.ptr_ == *b);
  }
  // As std::optional: equal to a value only when set to an equal one.
  template <class U>
  requires(!std::is_same_v<U, Boxed> && !std::is_same_v<U, std::nullopt_t> &&
           !std::is_same_v<U, std::optional<T>>) friend bool
  operator==(const Boxed& a, const U& v) {
    return a.ptr_ && *a.ptr_ == v;
  }

 private:
  std::unique_ptr<T> ptr_;
};

}  // namespace berth
