// The Kubernetes CEL libraries the DRA environment enables (k8s.io/apiserver/pkg/cel/library):
// lists, regex, sets, quantity and semver.
#include <cmath>
#include <cstdlib>

#include "cel/builtins.h"
#include "cel/regex.h"

namespace berth::cel {

Value ListIndexOf(const Value* a, size_t n, bool last) {
  const List& l = a[0].list();
  if (last) {
    for (size_t i = l.size(); i-- > 0;) {
      if (Equal(l[i], a[1])) return Value::Int(static_cast<int64_t>(i));
    }
  } else {
    for (size_t i = 0; i < l.size(); ++i) {
      if (Equal(l[i], a[1])) return Value::Int(static_cast<int64_t>(i));
    }
  }
  return Value::Int(-1);
}

namespace {

bool Is(const Value& v, Kind k) { return v.kind() == k; }

Value IsSorted(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kList)) return TypeError("isSorted", a, n);
  const List& l = a[0].list();
  if (!ctx.Charge(l.size())) return CostExceeded();
  for (size_t i = 1; i < l.size(); ++i) {
    int c = Compare(l[i - 1], l[i]);
    if (c == 3) return TypeError("isSorted", a, n);
    if (c > 0) return Value::Bool(false);
  }
  return Value::Bool(true);
}

Value Sum(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kList)) return TypeError("sum", a, n);
  const List& l = a[0].list();
  if (!ctx.Charge(l.size())) return CostExceeded();
  if (l.empty()) return Value::Int(0);
  Value acc = l[0];
  for (size_t i = 1; i < l.size(); ++i) {
    if (acc.kind() == Kind::kQuantity && l[i].kind() == Kind::kQuantity) {
      Quantity q = acc.quantity();
      q += l[i].quantity();
      acc = Value::FromQuantity(q);
      continue;
    }
    acc = Arithmetic(BinOp::kAdd, acc, l[i]);
    if (acc.IsError()) return acc;
  }
  return acc;
}

Value MinMax(const Value* a, size_t n, bool max) {
  if (!Is(a[0], Kind::kList)) return TypeError(max ? "max" : "min", a, n);
  const List& l = a[0].list();
  if (l.empty()) return Value::Error(std::string(max ? "max" : "min") + " called on empty list");
  size_t best = 0;
  for (size_t i = 1; i < l.size(); ++i) {
    int c = Compare(l[i], l[best]);
    if (c == 3) return TypeError(max ? "max" : "min", a, n);
    if ((max && c > 0) || (!max && c < 0)) best = i;
  }
  return l[best];
}
Value Min(const Value* a, size_t n, EvalContext&) { return MinMax(a, n, false); }
Value Max(const Value* a, size_t n, EvalContext&) { return MinMax(a, n, true); }

Value FindImpl(const Value* a, size_t n, EvalContext& ctx, bool all) {
  if (!Is(a[0], Kind::kString) || !Is(a[1], Kind::kString) || (n == 3 && !Is(a[2], Kind::kInt))) {
    return TypeError(all ? "findAll" : "find", a, n);
  }
  if (!ctx.Charge(TraversalCost(a[0].str().size()) * TraversalCost(a[1].str().size())))
    return CostExceeded();
  auto re = CompileRegex(a[1].str());
  if (!re.ok()) return Value::Error(re.error().message);
  const std::string& s = a[0].str();
  int64_t limit = all ? (n == 3 ? a[2].int_value() : -1) : 1;
  List out;
  // Successive non-overlapping matches, left to right. An empty match moves the search on one
  // UTF-8 character, and one that abuts the previous match is not reported (Go's FindAll, which
  // Kubernetes' CEL library calls).
  size_t pos = 0;
  size_t previous_end = std::string::npos;
  re2::StringPiece match;
  while (pos <= s.size() && (limit < 0 || static_cast<int64_t>(out.size()) < limit)) {
    if (!(*re)->Match(s, pos, s.size(), re2::RE2::UNANCHORED, &match, 1)) break;
    size_t begin = static_cast<size_t>(match.data() - s.data());
    size_t end = begin + match.size();
    bool accept = true;
    if (match.empty()) {
      accept = begin != previous_end;
      pos = end + 1;
      while (pos < s.size() && (static_cast<unsigned char>(s[pos]) & 0xC0) == 0x80) ++pos;
    } else {
      pos = end;
    }
    previous_end = end;
    if (accept) out.push_back(Value::String(std::string(match.data(), match.size())));
  }
  if (!all) return out.empty() ? Value::String("") : out.front();
  return Value::MakeList(std::move(out));
}
Value Find(const Value* a, size_t n, EvalContext& ctx) { return FindImpl(a, n, ctx, false); }
Value FindAll(const Value* a, size_t n, EvalContext& ctx) { return FindImpl(a, n, ctx, true); }

bool ContainsAll(const List& a, const List& b) {
  for (const Value& x : b) {
    bool found = false;
    for (const Value& y : a) found = found || Equal(x, y);
    if (!found) return false;
  }
  return true;
}

Value SetsContains(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kList) || !Is(a[1], Kind::kList)) return TypeError("sets.contains", a, n);
  if (!ctx.Charge(a[0].list().size() * a[1].list().size())) return CostExceeded();
  return Value::Bool(ContainsAll(a[0].list(), a[1].list()));
}
Value SetsEquivalent(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kList) || !Is(a[1], Kind::kList)) return TypeError("sets.equivalent", a, n);
  if (!ctx.Charge(a[0].list().size() * a[1].list().size())) return CostExceeded();
  return Value::Bool(ContainsAll(a[0].list(), a[1].list()) &&
                     ContainsAll(a[1].list(), a[0].list()));
}
Value SetsIntersects(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kList) || !Is(a[1], Kind::kList)) return TypeError("sets.intersects", a, n);
  if (!ctx.Charge(a[0].list().size() * a[1].list().size())) return CostExceeded();
  for (const Value& x : a[0].list()) {
    for (const Value& y : a[1].list()) {
      if (Equal(x, y)) return Value::Bool(true);
    }
  }
  return Value::Bool(false);
}

// ---- quantity ----

Value ParseQuantity(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString)) return TypeError("quantity", a, n);
  auto q = Quantity::Parse(a[0].str());
  if (!q.ok())
    return Value::Error(
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'");
  return Value::FromQuantity(*q);
}

Value IsQuantity(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString)) return TypeError("isQuantity", a, n);
  return Value::Bool(Quantity::Parse(a[0].str()).ok());
}

bool IsInteger(const Quantity& q) { return Quantity::FromInt(q.Value()) == q; }

// The quantity as a double: its canonical text is digits with an SI, binary or exponent suffix.
double ApproximateFloat(const Quantity& q) {
  std::string s = q.String();
  char* end = nullptr;
  double mantissa = std::strtod(s.c_str(), &end);
  std::string_view suffix(end);
  static const std::pair<std::string_view, double> kSuffixes[] = {{"n", 1e-9},
                                                                  {"u", 1e-6},
                                                                  {"m", 1e-3},
                                                                  {"k", 1e3},
                                                                  {"M", 1e6},
                                                                  {"G", 1e9},
                                                                  {"T", 1e12},
                                                                  {"P", 1e15},
                                                                  {"E", 1e18},
                                                                  {"Ki", 1024.0},
                                                                  {"Mi", 1048576.0},
                                                                  {"Gi", 1073741824.0},
                                                                  {"Ti", 1099511627776.0},
                                                                  {"Pi", 1125899906842624.0},
                                                                  {"Ei", 1152921504606846976.0}};
  if (suffix.empty()) return mantissa;
  if (suffix[0] == 'e' || suffix[0] == 'E') return mantissa * std::pow(10.0, std::atoi(end + 1));
  for (const auto& [sfx, mult] : kSuffixes) {
    if (suffix == sfx) return mantissa * mult;
  }
  return mantissa;
}

Value QuantitySign(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kQuantity)) return TypeError("sign", a, n);
  const Quantity& q = a[0].quantity();
  return Value::Int(q.IsZero() ? 0 : (q.IsNegative() ? -1 : 1));
}

Value QuantityIsInteger(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kQuantity)) return TypeError("isInteger", a, n);
  return Value::Bool(IsInteger(a[0].quantity()));
}

Value QuantityAsInteger(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kQuantity)) return TypeError("asInteger", a, n);
  if (!IsInteger(a[0].quantity())) return Value::Error("cannot convert value to integer");
  return Value::Int(a[0].quantity().Value());
}

Value QuantityAsFloat(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kQuantity)) return TypeError("asApproximateFloat", a, n);
  return Value::Double(ApproximateFloat(a[0].quantity()));
}

Value QuantityAddSub(const Value* a, size_t n, bool add) {
  if (!Is(a[0], Kind::kQuantity) || (!Is(a[1], Kind::kQuantity) && !Is(a[1], Kind::kInt))) {
    return TypeError(add ? "add" : "sub", a, n);
  }
  Quantity q = a[0].quantity();
  Quantity other = Is(a[1], Kind::kInt) ? Quantity::FromInt(a[1].int_value()) : a[1].quantity();
  if (add) {
    q += other;
  } else {
    q -= other;
  }
  return Value::FromQuantity(q);
}
Value QuantityAdd(const Value* a, size_t n, EvalContext&) { return QuantityAddSub(a, n, true); }
Value QuantitySub(const Value* a, size_t n, EvalContext&) { return QuantityAddSub(a, n, false); }

// ---- semver ----

Value ParseSemverFn(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString) || (n == 2 && !Is(a[1], Kind::kBool)))
    return TypeError("semver", a, n);
  Semver v;
  if (!ParseSemver(a[0].str(), n == 2 && a[1].bool_value(), v)) {
    return Value::Error("could not parse semver: " + a[0].str());
  }
  return Value::FromSemver(std::move(v));
}

Value IsSemver(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString) || (n == 2 && !Is(a[1], Kind::kBool)))
    return TypeError("isSemver", a, n);
  Semver v;
  return Value::Bool(ParseSemver(a[0].str(), n == 2 && a[1].bool_value(), v));
}

Value SemverPart(const Value* a, size_t n, int part) {
  static const char* kNames[] = {"major", "minor", "patch"};
  if (!Is(a[0], Kind::kSemver)) return TypeError(kNames[part], a, n);
  const Semver& v = a[0].semver();
  uint64_t x = part == 0 ? v.major : part == 1 ? v.minor : v.patch;
  return Value::Int(static_cast<int64_t>(x));
}
Value Major(const Value* a, size_t n, EvalContext&) { return SemverPart(a, n, 0); }
Value Minor(const Value* a, size_t n, EvalContext&) { return SemverPart(a, n, 1); }
Value Patch(const Value* a, size_t n, EvalContext&) { return SemverPart(a, n, 2); }

// ---- shared by quantity and semver ----

// compareTo / isGreaterThan / isLessThan on two quantities or two semvers.
Value Ordered(const Value* a, size_t n, std::string_view fn, int mode) {
  bool ok = (Is(a[0], Kind::kQuantity) && Is(a[1], Kind::kQuantity)) ||
            (Is(a[0], Kind::kSemver) && Is(a[1], Kind::kSemver));
  if (!ok) return TypeError(fn, a, n);
  int c = Compare(a[0], a[1]);
  if (mode == 0) return Value::Int(c);
  return Value::Bool(mode > 0 ? c > 0 : c < 0);
}
Value CompareTo(const Value* a, size_t n, EvalContext&) { return Ordered(a, n, "compareTo", 0); }
Value IsGreaterThan(const Value* a, size_t n, EvalContext&) {
  return Ordered(a, n, "isGreaterThan", 1);
}
Value IsLessThan(const Value* a, size_t n, EvalContext&) { return Ordered(a, n, "isLessThan", -1); }

const Builtin kKubernetes[] = {
    {"isSorted", true, 1, 1, IsSorted, Type::kBool},
    {"sum", true, 1, 1, Sum, Type::kDyn},
    {"min", true, 1, 1, Min, Type::kDyn},
    {"max", true, 1, 1, Max, Type::kDyn},
    {"find", true, 2, 2, Find, Type::kString},
    {"findAll", true, 2, 3, FindAll, Type::kList},
    {"sets.contains", false, 2, 2, SetsContains, Type::kBool},
    {"sets.equivalent", false, 2, 2, SetsEquivalent, Type::kBool},
    {"sets.intersects", false, 2, 2, SetsIntersects, Type::kBool},
    {"quantity", false, 1, 1, ParseQuantity, Type::kQuantity},
    {"isQuantity", false, 1, 1, IsQuantity, Type::kBool},
    {"sign", true, 1, 1, QuantitySign, Type::kInt},
    {"isInteger", true, 1, 1, QuantityIsInteger, Type::kBool},
    {"asInteger", true, 1, 1, QuantityAsInteger, Type::kInt},
    {"asApproximateFloat", true, 1, 1, QuantityAsFloat, Type::kDouble},
    {"add", true, 2, 2, QuantityAdd, Type::kQuantity},
    {"sub", true, 2, 2, QuantitySub, Type::kQuantity},
    {"semver", false, 1, 2, ParseSemverFn, Type::kSemver},
    {"isSemver", false, 1, 2, IsSemver, Type::kBool},
    {"major", true, 1, 1, Major, Type::kInt},
    {"minor", true, 1, 1, Minor, Type::kInt},
    {"patch", true, 1, 1, Patch, Type::kInt},
    {"compareTo", true, 2, 2, CompareTo, Type::kInt},
    {"isGreaterThan", true, 2, 2, IsGreaterThan, Type::kBool},
    {"isLessThan", true, 2, 2, IsLessThan, Type::kBool},
};

}  // namespace

std::span<const Builtin> KubernetesBuiltins() { return kKubernetes; }

}  // namespace berth::cel
