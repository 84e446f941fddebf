#include <charconv>
#include <string>

#include "api/codec_internal.h"
#include "berth/api/quantity.h"

namespace berth {
Result<UnixTime> ParseTimestamp(std::string_view text);
}

namespace berth::codec {
namespace {

using nlohmann::json;

std::string_view TypeName(const json& v) {
  switch (v.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "a map";
    case json::value_t::array:
      return "a list";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      return "an integer";
    case json::value_t::number_float:
      return "a number";
    default:
      return "an unsupported value";
  }
}

bool NeedsBrackets(std::string_view key) {
  if (key.empty()) return true;
  for (char c : key) {
    if (c == '.' || c == '/' || c == '[' || c == ']' || c == ' ') return true;
  }
  return false;
}

}  // namespace

std::string Reader::PathString() const {
  std::string out = base_;
  for (const Elem& e : path_) {
    if (e.is_index) {
      out += "[" + std::to_string(e.index) + "]";
    } else if (NeedsBrackets(e.key)) {
      out += "[\"";
      out.append(e.key);
      out += "\"]";
    } else {
      if (!out.empty()) out.push_back('.');
      out.append(e.key);
    }
  }
  return out;
}

void Reader::Fail(std::string_view message) {
  if (error_) return;
  std::string msg = where_;
  if (described_ != nullptr) {
    std::string what = Describe(*described_);
    if (!what.empty()) {
      if (!msg.empty()) msg += " ";
      msg += "(" + what + ")";
    }
  }
  std::string path = PathString();
  if (!path.empty()) {
    if (!msg.empty()) msg += ": ";
    msg += path;
  }
  if (!msg.empty()) msg += ": ";
  msg.append(message);
  // Errors are single lines even when the offending text is not.
  for (char& c : msg) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  error_ = std::move(msg);
}

void Reader::FailType(std::string_view expected, const json& got) {
  std::string msg = "expected ";
  msg.append(expected);
  msg += ", got ";
  msg.append(TypeName(got));
  Fail(msg);
}

bool Reader::ExpectObject(const json& v) {
  if (v.is_object()) return true;
  FailType("a map", v);
  return false;
}

const json* Reader::Find(const json& obj, std::string_view key) {
  if (!obj.is_object()) {
    if (!obj.is_null()) FailType("a map", obj);
    return nullptr;
  }
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string Reader::Str(const json& v) {
  switch (v.type()) {
    case json::value_t::string:
      return v.get_ref<const std::string&>();
    case json::value_t::null:
      return {};
    case json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return v.dump();
    default:
      FailType("a string", v);
      return {};
  }
}

int64_t Reader::Int(const json& v, int64_t min, int64_t max) {
  int64_t out = 0;
  bool ok = false;
  if (v.is_number_integer()) {
    out = v.get<int64_t>();
    ok = true;
    if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      Fail("integer out of range");
      return 0;
    }
  } else if (v.is_number_float()) {
    double d = v.get<double>();
    if (d == static_cast<double>(static_cast<int64_t>(d)) && d > -9.2e18 && d < 9.2e18) {
      out = static_cast<int64_t>(d);
      ok = true;
    }
  } else if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    const char* first = s.data();
    if (!s.empty() && s[0] == '+') ++first;
    auto [p, ec] = std::from_chars(first, s.data() + s.size(), out);
    ok = ec == std::errc() && p == s.data() + s.size() && !s.empty();
  } else if (v.is_null()) {
    return 0;
  }
  if (!ok) {
    FailType("an integer", v);
    return 0;
  }
  if (out < min || out > max) {
    Fail("integer " + std::to_string(out) + " out of range");
    return 0;
  }
  return out;
}

bool Reader::Bool(const json& v) {
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_null()) return false;
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "true" || s == "True" || s == "TRUE") return true;
    if (s == "false" || s == "False" || s == "FALSE") return false;
  }
  FailType("a boolean", v);
  return false;
}

Quantity Reader::Qty(const json& v) {
  if (v.is_null()) return {};
  std::string text;
  if (v.is_string()) {
    auto q = Quantity::Parse(v.get_ref<const std::string&>());
    if (!q.ok()) {
      Fail(q.error().message);
      return {};
    }
    return q.value();
  }
  if (v.is_number_integer() && !v.is_number_unsigned()) return Quantity::FromInt(v.get<int64_t>());
  if (v.is_number()) {
    text = v.dump();
  } else {
    FailType("a quantity", v);
    return {};
  }
  auto q = Quantity::Parse(text);
  if (!q.ok()) {
    Fail(q.error().message);
    return {};
  }
  return q.value();
}

UnixTime Reader::Time(const json& v) {
  if (!v.is_string()) {
    FailType("an RFC 3339 timestamp string", v);
    return 0;
  }
  auto t = ParseTimestamp(v.get_ref<const std::string&>());
  if (!t.ok()) {
    Fail(t.error().message);
    return 0;
  }
  return t.value();
}

std::vector<std::string> Reader::StrList(const json& v) {
  std::vector<std::string> out;
  if (v.is_array()) out.reserve(v.size());
  Each(v, [&](const json& e) { out.push_back(Str(e)); });
  return out;
}

// Sized up front: a flat map grown one entry at a time keeps up to twice the room it needs,
// for the lifetime of the object.
Labels Reader::StrMap(const json& v) {
  Labels out;
  if (v.is_object()) out.reserve(v.size());
  Entries(v, [&](const std::string& k, const json& e) { out.emplace(k, Str(e)); });
  return out;
}

ResourceList Reader::Resources(const json& v) {
  ResourceList out;
  if (v.is_object()) out.reserve(v.size());
  Entries(v, [&](const std::string& k, const json& e) {
    Quantity q = Qty(e);
    // As kube-apiserver's validation: no resource list holds a negative amount.
    if (q.IsNegative()) {
      Fail("invalid value " + (e.is_string() ? "\"" + e.get<std::string>() + "\"" : e.dump()) +
           ": must be greater than or equal to 0");
      return;
    }
    out.emplace(k, q);
  });
  return out;
}

}  // namespace berth::codec
