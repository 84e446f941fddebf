#include "apiserver/field_types.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "apiserver/field_schema.h"
#include "berth/api/quantity.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
namespace fs = field_schema;

constexpr const char* kQuantityPattern =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

// Go's name of a JSON value's type in a decode error.
const char* ValueKind(const Json& v) {
  switch (v.type()) {
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "number";
  }
}

bool Digits(std::string_view s, size_t at, size_t n) {
  if (at + n > s.size()) return false;
  return std::all_of(s.begin() + at, s.begin() + at + n,
                     [](char c) { return c >= '0' && c <= '9'; });
}

int Number(std::string_view s, size_t at, size_t n) {
  int v = 0;
  for (size_t i = at; i < at + n; ++i) v = v * 10 + (s[i] - '0');
  return v;
}

// What Go's time.Parse(time.RFC3339, s) accepts: 2006-01-02T15:04:05[.fraction](Z|±07:00).
bool IsRfc3339(std::string_view s) {
  if (!Digits(s, 0, 4) || s.size() < 20 || s[4] != '-' || !Digits(s, 5, 2) || s[7] != '-' ||
      !Digits(s, 8, 2) || s[10] != 'T' || !Digits(s, 11, 2) || s[13] != ':' || !Digits(s, 14, 2) ||
      s[16] != ':' || !Digits(s, 17, 2)) {
    return false;
  }
  const int month = Number(s, 5, 2), day = Number(s, 8, 2);
  if (month < 1 || month > 12 || day < 1 || day > 31 || Number(s, 11, 2) > 23 ||
      Number(s, 14, 2) > 59 || Number(s, 17, 2) > 59) {
    return false;
  }
  size_t i = 19;
  if (i < s.size() && s[i] == '.') {
    size_t start = ++i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    if (i == start) return false;
  }
  std::string_view zone = s.substr(i);
  if (zone == "Z") return true;
  return zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && Digits(zone, 1, 2) &&
         zone[3] == ':' && Digits(zone, 4, 2) && Number(zone, 1, 2) <= 23 &&
         Number(zone, 4, 2) <= 59;
}

// Whether the number `v` fits an integer field of [min, max].
bool FitsInteger(const Json& v, int64_t min, int64_t max) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() <= static_cast<uint64_t>(max);
  if (v.is_number_integer()) {
    int64_t i = v.get<int64_t>();
    return i >= min && i <= max;
  }
  return false;  // a fraction or an exponent: Go's integer parse refuses the literal
}

const fs::Field* FindField(const fs::Tables& t, const fs::ObjectType& o, std::string_view name) {
  auto fields = t.fields.subspan(o.first, o.count);
  auto it = std::lower_bound(fields.begin(), fields.end(), name,
                             [](const fs::Field& f, std::string_view n) { return f.name < n; });
  if (it == fields.end() || it->name != name) return nullptr;
  return &*it;
}

// Walks a value as its schema node describes it, keeping what Go's decoder keeps for its
// errors: the JSON names of the struct fields entered and the struct of the innermost one.
class TypeWalker {
 public:
  TypeWalker() : t_(fs::Schema()) { fields_.reserve(16); }

  std::optional<std::string> Check(uint16_t node, const Json& v) {
    if (v.is_null()) return std::nullopt;
    const fs::Node& n = t_.nodes[node];
    switch (n.kind) {
      case fs::NodeKind::kLeaf:
      case fs::NodeKind::kFree:
        return std::nullopt;
      case fs::NodeKind::kObject:
        return v.is_object() ? CheckFields(n.ref, v) : Mismatch(ValueKind(v), GoType(node));
      case fs::NodeKind::kArray:
        if (!v.is_array()) return Mismatch(ValueKind(v), GoType(node));
        for (const Json& item : v) {
          if (auto e = Check(n.ref, item)) return e;
        }
        return std::nullopt;
      case fs::NodeKind::kMap:
        if (!v.is_object()) return Mismatch(ValueKind(v), GoType(node));
        for (const auto& [key, value] : v.items()) {
          if (auto e = Check(n.ref, value)) return e;
        }
        return std::nullopt;
      default:
        return CheckScalar(n.kind, v);
    }
  }

 private:
  std::optional<std::string> CheckFields(uint16_t object, const Json& v) {
    const fs::ObjectType& o = t_.objects[object];
    for (const auto& [key, value] : v.items()) {
      const fs::Field* f = FindField(t_, o, key);
      if (!f) continue;  // unknown fields are field_validation's
      fields_.push_back(f->name);
      structs_.push_back(o.go_type);
      auto e = Check(f->node, value);
      fields_.pop_back();
      structs_.pop_back();
      if (e) return e;
    }
    return std::nullopt;
  }

  std::optional<std::string> CheckScalar(fs::NodeKind kind, const Json& v) {
    switch (kind) {
      case fs::NodeKind::kString:
        if (!v.is_string()) return Mismatch(ValueKind(v), "string");
        return std::nullopt;
      case fs::NodeKind::kBool:
        if (!v.is_boolean()) return Mismatch(ValueKind(v), "bool");
        return std::nullopt;
      case fs::NodeKind::kNumber:
        if (!v.is_number()) return Mismatch(ValueKind(v), "float64");
        return std::nullopt;
      case fs::NodeKind::kInt32:
      case fs::NodeKind::kIntOrString: {
        if (kind == fs::NodeKind::kIntOrString && v.is_string()) return std::nullopt;
        if (!v.is_number()) return Mismatch(ValueKind(v), "int32");
        if (!FitsInteger(v, std::numeric_limits<int32_t>::min(),
                         std::numeric_limits<int32_t>::max())) {
          return Mismatch("number " + v.dump(), "int32");
        }
        return std::nullopt;
      }
      case fs::NodeKind::kInt64:
        if (!v.is_number()) return Mismatch(ValueKind(v), "int64");
        if (!FitsInteger(v, std::numeric_limits<int64_t>::min(),
                         std::numeric_limits<int64_t>::max())) {
          return Mismatch("number " + v.dump(), "int64");
        }
        return std::nullopt;
      case fs::NodeKind::kQuantity: {
        // Quantity's own decoder: a string or a bare number, parsed; its error names no field.
        if (!v.is_string() && !v.is_number()) return std::string(kQuantityPattern);
        if (!Quantity::Parse(v.is_string() ? v.get_ref<const std::string&>() : v.dump()).ok()) {
          return std::string(kQuantityPattern);
        }
        return std::nullopt;
      }
      case fs::NodeKind::kTime: {
        // metav1.Time decodes a string, then parses it as RFC 3339.
        if (!v.is_string()) return Mismatch(ValueKind(v), "string");
        const std::string& s = v.get_ref<const std::string&>();
        if (IsRfc3339(s)) return std::nullopt;
        return fmt::format(
            "parsing time {} as \"2006-01-02T15:04:05Z07:00\": cannot parse {} as "
            "RFC 3339",
            Json(s).dump(), Json(s).dump());
      }
      default:
        return std::nullopt;
    }
  }

  // As Go's reflect names the type of a field: "[]v1.NodeCondition", "map[string]string".
  std::string GoType(uint16_t node) const {
    const fs::Node& n = t_.nodes[node];
    switch (n.kind) {
      case fs::NodeKind::kObject:
        return t_.objects[n.ref].go_type;
      case fs::NodeKind::kArray:
        return "[]" + GoType(n.ref);
      case fs::NodeKind::kMap:
        return "map[string]" + GoType(n.ref);
      case fs::NodeKind::kString:
        return "string";
      case fs::NodeKind::kBool:
        return "bool";
      case fs::NodeKind::kInt32:
        return "int32";
      case fs::NodeKind::kInt64:
        return "int64";
      case fs::NodeKind::kNumber:
        return "float64";
      case fs::NodeKind::kIntOrString:
        return "intstr.IntOrString";
      case fs::NodeKind::kQuantity:
        return "resource.Quantity";
      case fs::NodeKind::kTime:
        return "v1.Time";
      default:
        return "interface {}";
    }
  }

  std::string Mismatch(std::string_view value, std::string_view type) const {
    if (fields_.empty()) {
      return fmt::format("json: cannot unmarshal {} into Go value of type {}", value, type);
    }
    std::string_view go_struct = structs_.back();
    go_struct.remove_prefix(
        go_struct.rfind('.') == std::string_view::npos ? 0 : go_struct.rfind('.') + 1);
    return fmt::format("json: cannot unmarshal {} into Go struct field {}.{} of type {}", value,
                       go_struct, fmt::join(fields_, "."), type);
  }

  const fs::Tables& t_;
  std::vector<std::string_view> fields_;
  std::vector<std::string_view> structs_;
};

}  // namespace

std::optional<std::string> FindFieldTypeError(const FieldSchema& schema, const Json& object) {
  return TypeWalker().Check(schema.node, object);
}

}  // namespace berth::apiserver
