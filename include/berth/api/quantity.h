// Resource quantities with Kubernetes semantics ("100m", "1.5Gi", "2e3", "500Mi").
//
// A Quantity is an exact decimal number stored in nano units (10^-9) in a 128-bit integer, which
// covers every value a scheduler meets (up to ~10^29) without rounding. Values finer than one nano
// are rounded up, as Kubernetes does. The suffix family (decimal SI, binary SI, decimal exponent)
// of the parsed text is remembered so that String() prints the canonical form Kubernetes prints.
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "berth/api/result.h"
#include "berth/export.h"

namespace berth {

class BERTH_EXPORT Quantity {
 public:
  enum class Format : uint8_t { kDecimalSI, kBinarySI, kDecimalExponent };

  constexpr Quantity() = default;

  // Parses Kubernetes quantity syntax: [+-]digits[.digits][suffix], suffix one of
  // n u m "" k M G T P E (decimal), Ki Mi Gi Ti Pi Ei (binary) or e<int>/E<int> (exponent).
  static Result<Quantity> Parse(std::string_view text);

  static Quantity FromMilli(int64_t milli, Format f = Format::kDecimalSI);
  static Quantity FromInt(int64_t value, Format f = Format::kDecimalSI);

  // Value rounded up to a whole unit (Kubernetes Quantity.Value()).
  int64_t Value() const;
  // Value in thousandths, rounded up (Kubernetes Quantity.MilliValue()).
  int64_t MilliValue() const;
  bool IsZero() const { return nanos_ == 0; }
  bool IsNegative() const { return nanos_ < 0; }
  Format format() const { return format_; }

  // Canonical text, e.g. "100m", "1Gi", "1500M", "12e6".
  std::string String() const;

  Quantity& operator+=(const Quantity& o) {
    nanos_ += o.nanos_;
    return *this;
  }
  Quantity& operator-=(const Quantity& o) {
    nanos_ -= o.nanos_;
    return *this;
  }
  friend bool operator==(const Quantity& a, const Quantity& b) { return a.nanos_ == b.nanos_; }
  friend std::strong_ordering operator<=>(const Quantity& a, const Quantity& b) {
    return a.nanos_ <=> b.nanos_;
  }

 private:
  // Aligned to 8 rather than 16 so a Quantity is 24 bytes, not 32: every resource list entry
  // of every pod and node holds one. x86-64 and AArch64 load it as two 64-bit words either way.
  __int128 nanos_ __attribute__((packed, aligned(8))) = 0;
  Format format_ = Format::kDecimalSI;
};

}  // namespace berth
