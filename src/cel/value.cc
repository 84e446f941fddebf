#include "cel/value.h"

#include <cmath>
#include <cstdio>

namespace berth::cel {

std::string_view KindName(Kind k) {
  switch (k) {
    case Kind::kNull:
      return "null_type";
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "int";
    case Kind::kUint:
      return "uint";
    case Kind::kDouble:
      return "double";
    case Kind::kString:
      return "string";
    case Kind::kBytes:
      return "bytes";
    case Kind::kList:
      return "list";
    case Kind::kMap:
      return "map";
    case Kind::kType:
      return "type";
    case Kind::kQuantity:
      return "kubernetes.Quantity";
    case Kind::kSemver:
      return "kubernetes.Semver";
    case Kind::kError:
      return "error";
    case Kind::kOptional:
      return "optional_type";
  }
  return "unknown";
}

Value Value::String(std::string s) {
  Value v(Kind::kString);
  v.p_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::Bytes(std::string s) {
  Value v(Kind::kBytes);
  v.p_ = std::make_shared<const std::string>(std::move(s));
  return v;
}

Value Value::MakeList(List items) {
  Value v(Kind::kList);
  v.p_ = std::make_shared<const List>(std::move(items));
  return v;
}

Value Value::MakeMap(std::shared_ptr<const Map> m) {
  Value v(Kind::kMap);
  v.p_ = std::move(m);
  return v;
}

Value Value::FromQuantity(const Quantity& q) {
  Value v(Kind::kQuantity);
  v.p_ = std::make_shared<const Quantity>(q);
  return v;
}

Value Value::FromSemver(Semver s) {
  Value v(Kind::kSemver);
  v.p_ = std::make_shared<const Semver>(std::move(s));
  return v;
}

Value Value::Error(std::string message) {
  Value v(Kind::kError);
  v.p_ = std::make_shared<const std::string>(std::move(message));
  return v;
}

Value Value::Optional(const Value* inner) {
  Value v(Kind::kOptional);
  if (inner) v.p_ = std::make_shared<const Value>(*inner);
  return v;
}

Value NoSuchOverload(std::string_view function) {
  return Value::Error("no such overload: " + std::string(function));
}

Value NoSuchKey(const Value& key) {
  if (key.kind() == Kind::kString) return Value::Error("no such key: " + key.str());
  return Value::Error("no such key: " + DebugString(key));
}

namespace {

bool IsNumber(Kind k) { return k == Kind::kInt || k == Kind::kUint || k == Kind::kDouble; }

// Orders two numbers of any numeric kinds exactly (no rounding through double for int/uint).
int CompareNumbers(const Value& a, const Value& b) {
  auto sign = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  Kind ka = a.kind(), kb = b.kind();
  if (ka == Kind::kDouble || kb == Kind::kDouble) {
    // The specification compares an int or uint with a double as doubles (lossy above 2^53).
    auto as_double = [](const Value& v) -> double {
      switch (v.kind()) {
        case Kind::kInt:
          return static_cast<double>(v.int_value());
        case Kind::kUint:
          return static_cast<double>(v.uint_value());
        default:
          return v.double_value();
      }
    };
    double x = as_double(a), y = as_double(b);
    if (std::isnan(x) || std::isnan(y)) return 2;
    return sign(x, y);
  }
  if (ka == kb) {
    return ka == Kind::kInt ? sign(a.int_value(), b.int_value())
                            : sign(a.uint_value(), b.uint_value());
  }
  if (ka == Kind::kInt) {
    if (a.int_value() < 0) return -1;
    return sign(static_cast<uint64_t>(a.int_value()), b.uint_value());
  }
  if (b.int_value() < 0) return 1;
  return sign(a.uint_value(), static_cast<uint64_t>(b.int_value()));
}

}  // namespace

const Value* Map::Find(const Value& key) const {
  for (const auto& [k, v] : entries) {
    if (k.kind() == key.kind()) {
      switch (key.kind()) {
        case Kind::kString:
          if (k.str() == key.str()) return &v;
          break;
        case Kind::kBool:
          if (k.bool_value() == key.bool_value()) return &v;
          break;
        case Kind::kInt:
          if (k.int_value() == key.int_value()) return &v;
          break;
        case Kind::kUint:
          if (k.uint_value() == key.uint_value()) return &v;
          break;
        default:
          break;
      }
    } else if (IsNumber(k.kind()) && IsNumber(key.kind()) && CompareNumbers(k, key) == 0) {
      return &v;
    }
  }
  return nullptr;
}

bool Equal(const Value& a, const Value& b) {
  if (IsNumber(a.kind()) && IsNumber(b.kind())) return CompareNumbers(a, b) == 0;
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Kind::kNull:
      return true;
    case Kind::kOptional:
      if (a.has_optional_value() != b.has_optional_value()) return false;
      return !a.has_optional_value() || Equal(a.optional_value(), b.optional_value());
    case Kind::kBool:
      return a.bool_value() == b.bool_value();
    case Kind::kString:
    case Kind::kBytes:
      return a.str() == b.str();
    case Kind::kType:
      return a.type_value() == b.type_value();
    case Kind::kQuantity:
      return a.quantity() == b.quantity();
    case Kind::kSemver:
      return CompareSemver(a.semver(), b.semver()) == 0;
    case Kind::kList: {
      const List &x = a.list(), &y = b.list();
      if (x.size() != y.size()) return false;
      for (size_t i = 0; i < x.size(); ++i) {
        if (!Equal(x[i], y[i])) return false;
      }
      return true;
    }
    case Kind::kMap: {
      const Map &x = a.map(), &y = b.map();
      if (x.entries.size() != y.entries.size()) return false;
      for (const auto& [k, v] : x.entries) {
        const Value* other = y.Find(k);
        if (other == nullptr || !Equal(v, *other)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

int Compare(const Value& a, const Value& b) {
  if (IsNumber(a.kind()) && IsNumber(b.kind())) return CompareNumbers(a, b);
  if (a.kind() != b.kind()) return 3;
  auto sign = [](auto x, auto y) { return x < y ? -1 : (x > y ? 1 : 0); };
  switch (a.kind()) {
    case Kind::kBool:
      return sign(a.bool_value(), b.bool_value());
    case Kind::kString:
    case Kind::kBytes: {
      int c = a.str().compare(b.str());
      return c < 0 ? -1 : (c > 0 ? 1 : 0);
    }
    case Kind::kQuantity:
      return sign(a.quantity(), b.quantity());
    case Kind::kSemver:
      return CompareSemver(a.semver(), b.semver());
    default:
      return 3;
  }
}

namespace {

std::string QuoteString(const std::string& s, char prefix) {
  std::string out;
  if (prefix) out += prefix;
  out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20 || (prefix && c >= 0x7f)) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\x%02x", c);
          out += buf;
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

}  // namespace

std::string DebugString(const Value& v) {
  switch (v.kind()) {
    case Kind::kNull:
      return "null";
    case Kind::kBool:
      return v.bool_value() ? "true" : "false";
    case Kind::kInt:
      return std::to_string(v.int_value());
    case Kind::kUint:
      return std::to_string(v.uint_value()) + "u";
    case Kind::kDouble: {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.17g", v.double_value());
      return buf;
    }
    case Kind::kString:
      return QuoteString(v.str(), 0);
    case Kind::kBytes:
      return QuoteString(v.str(), 'b');
    case Kind::kType:
      return std::string(KindName(v.type_value()));
    case Kind::kQuantity:
      return "quantity(\"" + v.quantity().String() + "\")";
    case Kind::kSemver:
      return "semver(\"" + SemverString(v.semver()) + "\")";
    case Kind::kError:
      return "error(" + v.error() + ")";
    case Kind::kOptional:
      return v.has_optional_value() ? "optional.of(" + DebugString(v.optional_value()) + ")"
                                    : "optional.none()";
    case Kind::kList: {
      std::string out = "[";
      for (size_t i = 0; i < v.list().size(); ++i) {
        if (i) out += ", ";
        out += DebugString(v.list()[i]);
      }
      return out + "]";
    }
    case Kind::kMap: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, val] : v.map().entries) {
        if (!first) out += ", ";
        first = false;
        out += DebugString(k) + ": " + DebugString(val);
      }
      return out + "}";
    }
  }
  return "?";
}

}  // namespace berth::cel
