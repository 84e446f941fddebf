// cel-go's string extension library (ext.Strings), which the Kubernetes CEL environment enables:
// indices and lengths are in code points.
#include <algorithm>

#include "cel/builtins.h"

namespace berth::cel {

Value ListIndexOf(const Value* a, size_t n, bool last);  // k8s_lib.cc

namespace {

bool Is(const Value& v, Kind k) { return v.kind() == k; }

std::vector<char32_t> Cps(const std::string& s) {
  std::vector<char32_t> out;
  DecodeUtf8(s, out);
  return out;
}

Value CharAt(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString) || !Is(a[1], Kind::kInt)) return TypeError("charAt", a, n);
  auto cps = Cps(a[0].str());
  int64_t i = a[1].int_value();
  if (i < 0 || static_cast<size_t>(i) > cps.size()) {
    return Value::Error("index out of range: " + std::to_string(i));
  }
  if (static_cast<size_t>(i) == cps.size()) return Value::String("");
  return Value::String(EncodeUtf8(&cps[i], 1));
}

Value IndexOfImpl(const Value* a, size_t n, bool last) {
  if (Is(a[0], Kind::kList)) return ListIndexOf(a, n, last);
  if (!Is(a[0], Kind::kString) || !Is(a[1], Kind::kString) || (n == 3 && !Is(a[2], Kind::kInt))) {
    return TypeError(last ? "lastIndexOf" : "indexOf", a, n);
  }
  auto hay = Cps(a[0].str());
  auto needle = Cps(a[1].str());
  int64_t size = static_cast<int64_t>(hay.size()), len = static_cast<int64_t>(needle.size());
  int64_t offset = n == 3 ? a[2].int_value() : (last ? size : 0);
  if (offset < 0 || offset > size) {
    return Value::Error("index out of range: " + std::to_string(offset));
  }
  auto match_at = [&](int64_t i) {
    return i + len <= size && std::equal(needle.begin(), needle.end(), hay.begin() + i);
  };
  if (last) {
    for (int64_t i = std::min(offset, size - len); i >= 0; --i) {
      if (match_at(i)) return Value::Int(i);
    }
  } else {
    for (int64_t i = offset; i + len <= size; ++i) {
      if (match_at(i)) return Value::Int(i);
    }
  }
  return Value::Int(-1);
}

Value IndexOf(const Value* a, size_t n, EvalContext&) { return IndexOfImpl(a, n, false); }
Value LastIndexOf(const Value* a, size_t n, EvalContext&) { return IndexOfImpl(a, n, true); }

Value Case(const Value* a, size_t n, bool lower) {
  if (!Is(a[0], Kind::kString)) return TypeError(lower ? "lowerAscii" : "upperAscii", a, n);
  std::string s = a[0].str();
  for (char& c : s) {
    if (lower && c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (!lower && c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return Value::String(std::move(s));
}
Value LowerAscii(const Value* a, size_t n, EvalContext&) { return Case(a, n, true); }
Value UpperAscii(const Value* a, size_t n, EvalContext&) { return Case(a, n, false); }

Value Replace(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kString) || !Is(a[1], Kind::kString) || !Is(a[2], Kind::kString) ||
      (n == 4 && !Is(a[3], Kind::kInt))) {
    return TypeError("replace", a, n);
  }
  if (!ctx.Charge(TraversalCost(a[0].str().size()))) return CostExceeded();
  const std::string &s = a[0].str(), &from = a[1].str(), &to = a[2].str();
  // An empty `from` inserts `to` around every code point: charge for the output up front.
  if (from.empty() && !ctx.Charge(TraversalCost((s.size() + 1) * to.size()))) {
    return CostExceeded();
  }
  int64_t limit = n == 4 ? a[3].int_value() : -1;
  std::string out;
  size_t pos = 0;
  int64_t done = 0;
  while (limit < 0 || done < limit) {
    size_t hit;
    if (from.empty()) {
      // Go's strings.Replace with an empty old string inserts before each code point and at the
      // end.
      if (pos > s.size()) break;
      hit = pos;
    } else {
      hit = s.find(from, pos);
      if (hit == std::string::npos) break;
    }
    out.append(s, pos, hit - pos);
    out += to;
    ++done;
    if (from.empty()) {
      if (hit >= s.size()) {
        pos = s.size() + 1;
        break;
      }
      size_t step = 1;
      while (hit + step < s.size() && (static_cast<unsigned char>(s[hit + step]) & 0xC0) == 0x80)
        ++step;
      out.append(s, hit, step);
      pos = hit + step;
    } else {
      pos = hit + from.size();
    }
  }
  if (pos <= s.size()) out.append(s, pos, std::string::npos);
  return Value::String(std::move(out));
}

Value Split(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kString) || !Is(a[1], Kind::kString) || (n == 3 && !Is(a[2], Kind::kInt))) {
    return TypeError("split", a, n);
  }
  if (!ctx.Charge(TraversalCost(a[0].str().size()))) return CostExceeded();
  const std::string &s = a[0].str(), &sep = a[1].str();
  int64_t limit = n == 3 ? a[2].int_value() : -1;
  List out;
  if (limit == 0) return Value::MakeList(std::move(out));
  if (sep.empty()) {
    auto cps = Cps(s);
    for (size_t i = 0; i < cps.size(); ++i) {
      if (limit > 0 && static_cast<int64_t>(out.size()) == limit - 1) {
        out.push_back(Value::String(EncodeUtf8(&cps[i], cps.size() - i)));
        break;
      }
      out.push_back(Value::String(EncodeUtf8(&cps[i], 1)));
    }
    return Value::MakeList(std::move(out));
  }
  size_t pos = 0;
  while (limit < 0 || static_cast<int64_t>(out.size()) < limit - 1) {
    size_t hit = s.find(sep, pos);
    if (hit == std::string::npos) break;
    out.push_back(Value::String(s.substr(pos, hit - pos)));
    pos = hit + sep.size();
  }
  out.push_back(Value::String(s.substr(pos)));
  return Value::MakeList(std::move(out));
}

Value Substring(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString) || !Is(a[1], Kind::kInt) || (n == 3 && !Is(a[2], Kind::kInt))) {
    return TypeError("substring", a, n);
  }
  auto cps = Cps(a[0].str());
  int64_t size = static_cast<int64_t>(cps.size());
  int64_t start = a[1].int_value(), end = n == 3 ? a[2].int_value() : size;
  if (start < 0 || start > size)
    return Value::Error("index out of range: " + std::to_string(start));
  if (end < 0 || end > size) return Value::Error("index out of range: " + std::to_string(end));
  if (start > end) {
    return Value::Error("invalid substring range. start: " + std::to_string(start) +
                        ", end: " + std::to_string(end));
  }
  return Value::String(EncodeUtf8(cps.data() + start, end - start));
}

bool IsSpace(char32_t c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F ||
         c == 0x3000;
}

Value Trim(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString)) return TypeError("trim", a, n);
  auto cps = Cps(a[0].str());
  size_t b = 0, e = cps.size();
  while (b < e && IsSpace(cps[b])) ++b;
  while (e > b && IsSpace(cps[e - 1])) --e;
  return Value::String(EncodeUtf8(cps.data() + b, e - b));
}

Value Join(const Value* a, size_t n, EvalContext& ctx) {
  if (!Is(a[0], Kind::kList) || (n == 2 && !Is(a[1], Kind::kString)))
    return TypeError("join", a, n);
  if (!ctx.Charge(TraversalCost(a[0].list().size()))) return CostExceeded();
  std::string out;
  for (size_t i = 0; i < a[0].list().size(); ++i) {
    const Value& v = a[0].list()[i];
    if (!Is(v, Kind::kString)) return TypeError("join", a, n);
    if (i && n == 2) out += a[1].str();
    out += v.str();
  }
  return Value::String(std::move(out));
}

Value Reverse(const Value* a, size_t n, EvalContext&) {
  if (!Is(a[0], Kind::kString)) return TypeError("reverse", a, n);
  auto cps = Cps(a[0].str());
  std::reverse(cps.begin(), cps.end());
  return Value::String(EncodeUtf8(cps.data(), cps.size()));
}

const Builtin kStrings[] = {
    {"charAt", true, 2, 2, CharAt, Type::kString},
    {"indexOf", true, 2, 3, IndexOf, Type::kInt},
    {"lastIndexOf", true, 2, 3, LastIndexOf, Type::kInt},
    {"lowerAscii", true, 1, 1, LowerAscii, Type::kString},
    {"upperAscii", true, 1, 1, UpperAscii, Type::kString},
    {"replace", true, 3, 4, Replace, Type::kString},
    {"split", true, 2, 3, Split, Type::kList},
    {"substring", true, 2, 3, Substring, Type::kString},
    {"trim", true, 1, 1, Trim, Type::kString},
    {"join", true, 1, 2, Join, Type::kString},
    {"reverse", true, 1, 1, Reverse, Type::kString},
};

}  // namespace

std::span<const Builtin> StringBuiltins() { return kStrings; }

}  // namespace berth::cel
