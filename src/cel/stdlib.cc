// CEL's standard functions: size, the string predicates, matches, type conversions and type().
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <list>
#include <mutex>
#include <unordered_map>

#include "cel/builtins.h"
#include "cel/lexer.h"
#include "cel/regex.h"

namespace berth::cel {

Value TypeError(std::string_view function, const Value* args, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (args[i].IsError()) return args[i];
  }
  std::string sig = "found no matching overload for '" + std::string(function) + "' applied to '(";
  for (size_t i = 0; i < n; ++i) {
    if (i) sig += ", ";
    sig += KindName(args[i].kind());
  }
  return Value::Error(sig + ")'");
}

bool DecodeUtf8(std::string_view s, std::vector<char32_t>& out) {
  out.clear();
  for (size_t i = 0; i < s.size();) {
    unsigned char c = s[i];
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > s.size()) return false;
    char32_t cp = len == 1 ? c : len == 2 ? (c & 0x1F) : len == 3 ? (c & 0x0F) : (c & 0x07);
    for (int k = 1; k < len; ++k) {
      unsigned char cc = s[i + k];
      if ((cc >> 6) != 2) return false;
      cp = (cp << 6) | (cc & 0x3F);
    }
    out.push_back(cp);
    i += len;
  }
  return true;
}

std::string EncodeUtf8(const char32_t* cps, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) AppendUtf8(out, cps[i]);
  return out;
}

namespace {

size_t CodePoints(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

Value Size(const Value* a, size_t n, EvalContext&) {
  switch (a[0].kind()) {
    case Kind::kString:
      return Value::Int(static_cast<int64_t>(CodePoints(a[0].str())));
    case Kind::kBytes:
      return Value::Int(static_cast<int64_t>(a[0].str().size()));
    case Kind::kList:
      return Value::Int(static_cast<int64_t>(a[0].list().size()));
    case Kind::kMap:
      return Value::Int(static_cast<int64_t>(a[0].map().entries.size()));
    default:
      return TypeError("size", a, n);
  }
}

bool Strings(const Value* a, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (a[i].kind() != Kind::kString) return false;
  }
  return true;
}

Value Contains(const Value* a, size_t n, EvalContext& ctx) {
  if (!Strings(a, n)) return TypeError("contains", a, n);
  if (!ctx.Charge(TraversalCost(a[0].str().size()))) return CostExceeded();
  return Value::Bool(a[0].str().find(a[1].str()) != std::string::npos);
}

Value StartsWith(const Value* a, size_t n, EvalContext& ctx) {
  if (!Strings(a, n)) return TypeError("startsWith", a, n);
  if (!ctx.Charge(TraversalCost(a[1].str().size()))) return CostExceeded();
  return Value::Bool(a[0].str().starts_with(a[1].str()));
}

Value EndsWith(const Value* a, size_t n, EvalContext& ctx) {
  if (!Strings(a, n)) return TypeError("endsWith", a, n);
  if (!ctx.Charge(TraversalCost(a[1].str().size()))) return CostExceeded();
  return Value::Bool(a[0].str().ends_with(a[1].str()));
}

Value Matches(const Value* a, size_t n, EvalContext& ctx) {
  if (!Strings(a, n)) return TypeError("matches", a, n);
  if (!ctx.Charge(TraversalCost(a[0].str().size()) * TraversalCost(a[1].str().size())))
    return CostExceeded();
  auto re = CompileRegex(a[1].str());
  if (!re.ok()) return Value::Error(re.error().message);
  return Value::Bool(re2::RE2::PartialMatch(a[0].str(), **re));
}

Value RangeError() { return Value::Error("range error"); }

Value ParseInt(const std::string& s) {
  errno = 0;
  char* end = nullptr;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || *end || std::isspace(static_cast<unsigned char>(s[0]))) {
    return Value::Error("invalid syntax: int(\"" + s + "\")");
  }
  if (errno == ERANGE) return RangeError();
  return Value::Int(v);
}

Value ToInt(const Value* a, size_t n, EvalContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case Kind::kInt:
      return v;
    case Kind::kUint:
      if (v.uint_value() > uint64_t(INT64_MAX)) return RangeError();
      return Value::Int(static_cast<int64_t>(v.uint_value()));
    case Kind::kDouble: {
      double d = v.double_value();
      // Both bounds exclusive: 2^63 itself and -2^63 are out of range in cel-go.
      if (!(d > -9223372036854775808.0 && d < 9223372036854775808.0)) return RangeError();
      return Value::Int(static_cast<int64_t>(d));
    }
    case Kind::kString:
      return ParseInt(v.str());
    default:
      return TypeError("int", a, n);
  }
}

Value ToUint(const Value* a, size_t n, EvalContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case Kind::kUint:
      return v;
    case Kind::kInt:
      if (v.int_value() < 0) return RangeError();
      return Value::Uint(static_cast<uint64_t>(v.int_value()));
    case Kind::kDouble: {
      double d = v.double_value();
      if (!(d > -1.0 && d < 18446744073709551616.0)) return RangeError();
      return Value::Uint(static_cast<uint64_t>(d));
    }
    case Kind::kString: {
      const std::string& s = v.str();
      errno = 0;
      char* end = nullptr;
      if (s.empty() || s[0] == '-' || s[0] == '+' ||
          std::isspace(static_cast<unsigned char>(s[0]))) {
        return Value::Error("invalid syntax: uint(\"" + s + "\")");
      }
      unsigned long long u = std::strtoull(s.c_str(), &end, 10);
      if (*end) return Value::Error("invalid syntax: uint(\"" + s + "\")");
      if (errno == ERANGE) return RangeError();
      return Value::Uint(u);
    }
    default:
      return TypeError("uint", a, n);
  }
}

Value ToDouble(const Value* a, size_t n, EvalContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case Kind::kDouble:
      return v;
    case Kind::kInt:
      return Value::Double(static_cast<double>(v.int_value()));
    case Kind::kUint:
      return Value::Double(static_cast<double>(v.uint_value()));
    case Kind::kString: {
      const std::string& s = v.str();
      char* end = nullptr;
      double d = std::strtod(s.c_str(), &end);
      if (s.empty() || *end || std::isspace(static_cast<unsigned char>(s[0]))) {
        return Value::Error("invalid syntax: double(\"" + s + "\")");
      }
      return Value::Double(d);
    }
    default:
      return TypeError("double", a, n);
  }
}

}  // namespace

// Shortest text that reads back as the same double, in Go's strconv 'g'-like form.
std::string FormatDouble(double d) {
  if (std::isnan(d)) return "NaN";
  if (std::isinf(d)) return d > 0 ? "+Inf" : "-Inf";
  char buf[40];
  for (int prec = 1; prec <= 17; ++prec) {
    std::snprintf(buf, sizeof buf, "%.*g", prec, d);
    if (std::strtod(buf, nullptr) == d) break;
  }
  // Go prints exponents with at least two digits and no leading '+0' padding beyond that:
  // 1e+06 stays "1e+06", which %g already gives.
  return buf;
}

namespace {

Value ToString(const Value* a, size_t n, EvalContext&) {
  const Value& v = a[0];
  switch (v.kind()) {
    case Kind::kString:
      return v;
    case Kind::kInt:
      return Value::String(std::to_string(v.int_value()));
    case Kind::kUint:
      return Value::String(std::to_string(v.uint_value()));
    case Kind::kDouble:
      return Value::String(FormatDouble(v.double_value()));
    case Kind::kBool:
      return Value::String(v.bool_value() ? "true" : "false");
    case Kind::kBytes: {
      std::vector<char32_t> cps;
      if (!DecodeUtf8(v.str(), cps))
        return Value::Error("invalid UTF-8 in bytes, cannot convert to string");
      return Value::String(v.str());
    }
    case Kind::kQuantity:
      return Value::String(v.quantity().String());
    case Kind::kSemver:
      return Value::String(SemverString(v.semver()));
    default:
      return TypeError("string", a, n);
  }
}

Value ToBytes(const Value* a, size_t n, EvalContext&) {
  if (a[0].kind() == Kind::kBytes) return a[0];
  if (a[0].kind() == Kind::kString) return Value::Bytes(a[0].str());
  return TypeError("bytes", a, n);
}

Value ToBool(const Value* a, size_t n, EvalContext&) {
  if (a[0].kind() == Kind::kBool) return a[0];
  if (a[0].kind() != Kind::kString) return TypeError("bool", a, n);
  const std::string& s = a[0].str();
  if (s == "true" || s == "TRUE" || s == "True" || s == "t" || s == "1") return Value::Bool(true);
  if (s == "false" || s == "FALSE" || s == "False" || s == "f" || s == "0") {
    return Value::Bool(false);
  }
  return Value::Error("type conversion error from 'string' to 'bool'");
}

Value TypeOf(const Value* a, size_t, EvalContext&) { return Value::Type(a[0].kind()); }
Value Dyn(const Value* a, size_t, EvalContext&) { return a[0]; }

const Builtin kStandard[] = {
    {"size", false, 1, 1, Size, Type::kInt},
    {"size", true, 1, 1, Size, Type::kInt},
    {"contains", true, 2, 2, Contains, Type::kBool},
    {"startsWith", true, 2, 2, StartsWith, Type::kBool},
    {"endsWith", true, 2, 2, EndsWith, Type::kBool},
    {"matches", true, 2, 2, Matches, Type::kBool},
    {"matches", false, 2, 2, Matches, Type::kBool},
    {"int", false, 1, 1, ToInt, Type::kInt},
    {"uint", false, 1, 1, ToUint, Type::kUint},
    {"double", false, 1, 1, ToDouble, Type::kDouble},
    {"string", false, 1, 1, ToString, Type::kString},
    {"bytes", false, 1, 1, ToBytes, Type::kBytes},
    {"bool", false, 1, 1, ToBool, Type::kBool},
    {"type", false, 1, 1, TypeOf, Type::kType},
    {"dyn", false, 1, 1, Dyn, Type::kDyn},
};

}  // namespace

std::span<const Builtin> StandardBuiltins() { return kStandard; }

namespace {

template <class F>
void ForEachBuiltin(F&& f) {
  for (auto table :
       {StandardBuiltins(), StringBuiltins(), KubernetesBuiltins(), OptionalBuiltins()}) {
    for (const Builtin& b : table) f(b);
  }
}

}  // namespace

const Builtin* FindBuiltin(std::string_view name, bool receiver, size_t nargs) {
  const Builtin* found = nullptr;
  ForEachBuiltin([&](const Builtin& b) {
    if (!found && b.name == name && b.receiver == receiver && nargs >= b.min_args &&
        nargs <= b.max_args) {
      found = &b;
    }
  });
  return found;
}

bool BuiltinNameExists(std::string_view name, bool receiver) {
  bool found = false;
  ForEachBuiltin([&](const Builtin& b) { found |= b.name == name && b.receiver == receiver; });
  return found;
}

}  // namespace berth::cel
