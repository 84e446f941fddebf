// CEL runtime values: the scalar kinds, string and bytes, lists, maps, types, errors and the two
// Kubernetes library types the DRA environment uses (Quantity, Semver).
//
// A Value is 24 bytes: a kind tag, an inline scalar and one shared pointer for everything that is
// not a scalar. Copying a Value never allocates, so evaluation allocates only where CEL makes
// new strings, lists or maps (concatenation, map(), lowerAscii(), ...) and on errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/api/quantity.h"

namespace berth::cel {

enum class Kind : uint8_t {
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kQuantity,
  kSemver,
  kError,
  kOptional,  // optional_type: a value or none
};

// The CEL type name of a kind ("int", "map", "kubernetes.Quantity", ...).
std::string_view KindName(Kind k);

// A semantic version (semver.org 2.0): compared by major, minor, patch and pre-release; build
// metadata is kept for printing only.
struct Semver {
  uint64_t major = 0, minor = 0, patch = 0;
  std::vector<std::string> pre;  // dot-separated pre-release identifiers
  std::string build;
};
// Parses strictly (blang/semver's Parse); with normalize, a leading 'v' is dropped, missing minor
// and patch become 0 and leading zeros are removed first (Kubernetes' semver(s, true)).
bool ParseSemver(std::string_view text, bool normalize, Semver& out);
int CompareSemver(const Semver& a, const Semver& b);
std::string SemverString(const Semver& v);

class Value;
using List = std::vector<Value>;
struct Map;

class Value {
 public:
  Value() : kind_(Kind::kNull), i_(0) {}
  static Value Null() { return Value(); }
  static Value Bool(bool b) {
    Value v(Kind::kBool);
    v.b_ = b;
    return v;
  }
  static Value Int(int64_t i) {
    Value v(Kind::kInt);
    v.i_ = i;
    return v;
  }
  static Value Uint(uint64_t u) {
    Value v(Kind::kUint);
    v.u_ = u;
    return v;
  }
  static Value Double(double d) {
    Value v(Kind::kDouble);
    v.d_ = d;
    return v;
  }
  static Value String(std::string s);
  static Value Bytes(std::string s);
  static Value MakeList(List items);
  static Value MakeMap(std::shared_ptr<const Map> m);
  static Value Type(Kind k) {
    Value v(Kind::kType);
    v.type_ = k;
    return v;
  }
  static Value FromQuantity(const Quantity& q);
  static Value FromSemver(Semver s);
  static Value Error(std::string message);
  // optional.of(*inner), or optional.none() when inner is null.
  static Value Optional(const Value* inner);

  Kind kind() const { return kind_; }
  bool IsError() const { return kind_ == Kind::kError; }
  bool bool_value() const { return b_; }
  int64_t int_value() const { return i_; }
  uint64_t uint_value() const { return u_; }
  double double_value() const { return d_; }
  Kind type_value() const { return type_; }
  // String, bytes and error text.
  const std::string& str() const { return *static_cast<const std::string*>(p_.get()); }
  const List& list() const { return *static_cast<const List*>(p_.get()); }
  const Map& map() const { return *static_cast<const Map*>(p_.get()); }
  const Quantity& quantity() const { return *static_cast<const Quantity*>(p_.get()); }
  const Semver& semver() const { return *static_cast<const Semver*>(p_.get()); }
  const std::string& error() const { return str(); }
  bool has_optional_value() const { return p_ != nullptr; }
  const Value& optional_value() const { return *static_cast<const Value*>(p_.get()); }

 private:
  explicit Value(Kind k) : kind_(k), i_(0) {}
  Kind kind_;
  union {
    bool b_;
    int64_t i_;
    uint64_t u_;
    double d_;
    Kind type_;
  };
  std::shared_ptr<const void> p_;
};

// A CEL map: insertion-ordered entries with keys of kind bool, int, uint or string. Maps in the
// DRA environment hold at most a few dozen entries, where a linear scan beats hashing.
struct Map {
  std::vector<std::pair<Value, Value>> entries;
  // Looking up a missing key yields this value instead of "no such key" (DRA's
  // device.attributes / device.capacity answer an empty map for an unknown domain). `in` and
  // has() still see the key as absent.
  std::shared_ptr<const Value> missing;

  // Heterogeneous key lookup: 1, 1u and 1.0 find the same entry. nullptr when absent.
  const Value* Find(const Value& key) const;
};

// Heterogeneous equality as the CEL specification defines it: numbers compare by value across
// int, uint and double; values of different kinds are unequal; NaN equals nothing. Returns an
// error value only when an operand is one.
bool Equal(const Value& a, const Value& b);
// Ordering for <, <=, >, >=: -1, 0, 1, or 2 when the pair is unordered (NaN) and 3 when no
// overload exists for the kinds.
int Compare(const Value& a, const Value& b);

// Text for error messages and test failures: CEL literal syntax where one exists.
std::string DebugString(const Value& v);

// Standard error texts (cel-go's wording, which the Kubernetes documentation quotes).
Value NoSuchOverload(std::string_view function);
Value NoSuchKey(const Value& key);

}  // namespace berth::cel
