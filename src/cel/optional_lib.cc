// Optional values (cel-go's OptionalTypes, part of the Kubernetes CEL base environment):
// optional.of, optional.none, optional.ofNonZeroValue, hasValue, value, orValue, or.
#include "cel/builtins.h"

namespace berth::cel {
namespace {

bool IsZero(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return true;
    case Kind::kBool:
      return !v.bool_value();
    case Kind::kInt:
      return v.int_value() == 0;
    case Kind::kUint:
      return v.uint_value() == 0;
    case Kind::kDouble:
      return v.double_value() == 0;
    case Kind::kString:
    case Kind::kBytes:
      return v.str().empty();
    case Kind::kList:
      return v.list().empty();
    case Kind::kMap:
      return v.map().entries.empty();
    case Kind::kOptional:
      return !v.has_optional_value();
    default:
      return false;
  }
}

Value Of(const Value* a, size_t, EvalContext&) { return Value::Optional(&a[0]); }
Value None(const Value*, size_t, EvalContext&) { return Value::Optional(nullptr); }
Value OfNonZero(const Value* a, size_t, EvalContext&) {
  return Value::Optional(IsZero(a[0]) ? nullptr : &a[0]);
}

Value HasValue(const Value* a, size_t n, EvalContext&) {
  if (a[0].kind() != Kind::kOptional) return TypeError("hasValue", a, n);
  return Value::Bool(a[0].has_optional_value());
}

Value GetValue(const Value* a, size_t n, EvalContext&) {
  if (a[0].kind() != Kind::kOptional) return TypeError("value", a, n);
  if (!a[0].has_optional_value()) return Value::Error("optional.none() dereference");
  return a[0].optional_value();
}

Value OrValue(const Value* a, size_t n, EvalContext&) {
  if (a[0].kind() != Kind::kOptional) return TypeError("orValue", a, n);
  return a[0].has_optional_value() ? a[0].optional_value() : a[1];
}

Value Or(const Value* a, size_t n, EvalContext&) {
  if (a[0].kind() != Kind::kOptional || a[1].kind() != Kind::kOptional) {
    return TypeError("or", a, n);
  }
  return a[0].has_optional_value() ? a[0] : a[1];
}

const Builtin kOptional[] = {
    {"optional.of", false, 1, 1, Of, Type::kDyn},
    {"optional.none", false, 0, 0, None, Type::kDyn},
    {"optional.ofNonZeroValue", false, 1, 1, OfNonZero, Type::kDyn},
    {"hasValue", true, 1, 1, HasValue, Type::kBool},
    {"value", true, 1, 1, GetValue, Type::kDyn},
    {"orValue", true, 2, 2, OrValue, Type::kDyn},
    {"or", true, 2, 2, Or, Type::kDyn},
};

}  // namespace

std::span<const Builtin> OptionalBuiltins() { return kOptional; }

}  // namespace berth::cel
