#include "apiserver/crd_schema.h"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cmath>
#include <list>
#include <map>
#include <memory>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

bool Flag(const Json& schema, const char* name) {
  auto it = schema.find(name);
  return it != schema.end() && it->is_boolean() && it->get<bool>();
}

std::string Child(const std::string& path, const std::string& key) {
  return path.empty() ? key : path + "." + key;
}

// What the schema says about a map's values: a schema, "any" (true or preserve), or none.
const Json* AdditionalProperties(const Json& schema) {
  auto it = schema.find("additionalProperties");
  if (it == schema.end() || !it->is_object()) return nullptr;
  return &*it;
}

void Prune(const Json& schema, Json& obj, bool root, const std::string& path,
           std::vector<std::string>* pruned) {
  if (!schema.is_object()) return;
  if (obj.is_object()) {
    auto props = schema.find("properties");
    const Json* additional = AdditionalProperties(schema);
    const bool preserve =
        Flag(schema, "x-kubernetes-preserve-unknown-fields") ||
        (schema.contains("additionalProperties") && schema["additionalProperties"].is_boolean() &&
         schema["additionalProperties"].get<bool>());
    const bool embedded = Flag(schema, "x-kubernetes-embedded-resource");
    for (auto it = obj.begin(); it != obj.end();) {
      const std::string& key = it.key();
      if ((root || embedded) && (key == "apiVersion" || key == "kind" || key == "metadata")) {
        ++it;
        continue;
      }
      if (props != schema.end() && props->is_object() && props->contains(key)) {
        Prune((*props)[key], it.value(), false, Child(path, key), pruned);
        ++it;
      } else if (additional) {
        Prune(*additional, it.value(), false, Child(path, key), pruned);
        ++it;
      } else if (preserve) {
        ++it;
      } else {
        if (pruned) pruned->push_back(Child(path, key));
        it = obj.erase(it);
      }
    }
  } else if (obj.is_array()) {
    auto items = schema.find("items");
    if (items == schema.end()) return;
    for (size_t i = 0; i < obj.size(); ++i) {
      Prune(*items, obj[i], false, fmt::format("{}[{}]", path, i), pruned);
    }
  }
}

// A null where `schema` does not allow one: replaced by the default, or dropped when there is
// none (kube-apiserver's defaulting does both before validation).
bool NullReplaced(const Json& schema, Json& obj, const std::string& key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_null() || !schema.is_object() || Flag(schema, "nullable")) {
    return false;
  }
  if (schema.contains("default")) {
    *it = schema["default"];
  } else {
    obj.erase(it);
  }
  return true;
}

void Defaults(const Json& schema, Json& obj) {
  if (!schema.is_object()) return;
  if (obj.is_object()) {
    if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
      for (auto& [key, sub] : props->items()) {
        NullReplaced(sub, obj, key);
        if (!obj.contains(key) && sub.is_object() && sub.contains("default")) {
          obj[key] = sub["default"];
        }
        if (obj.contains(key)) Defaults(sub, obj[key]);
      }
    }
    if (const Json* additional = AdditionalProperties(schema)) {
      std::vector<std::string> keys;
      for (auto& [key, value] : obj.items()) keys.push_back(key);
      for (const auto& key : keys) {
        NullReplaced(*additional, obj, key);
        if (obj.contains(key)) Defaults(*additional, obj[key]);
      }
    }
  } else if (obj.is_array()) {
    if (auto items = schema.find("items"); items != schema.end()) {
      for (auto& e : obj) Defaults(*items, e);
    }
  }
}

const char* TypeOf(const Json& v) {
  if (v.is_string()) return "string";
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_array()) return "array";
  if (v.is_object()) return "object";
  return "null";
}

bool IsInteger(const Json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) return true;
  if (!v.is_number_float()) return false;
  const double d = v.get<double>();
  return std::isfinite(d) && std::floor(d) == d;
}

bool HasType(const Json& v, const std::string& type) {
  if (type == "object") return v.is_object();
  if (type == "array") return v.is_array();
  if (type == "string") return v.is_string();
  if (type == "boolean") return v.is_boolean();
  if (type == "integer") return IsInteger(v);
  if (type == "number") return v.is_number();
  return true;
}

std::string FormatNumber(const Json& n) {
  if (n.is_number_float() && IsInteger(n)) return fmt::format("{}", n.get<int64_t>());
  return n.dump();
}

re2::RE2::Options PatternOptions() {
  re2::RE2::Options options;
  options.set_log_errors(false);
  return options;
}

// A compiled `pattern`, from a small per-thread cache (a CRD's patterns are matched on every
// write of its objects). Null when the pattern does not compile.
std::shared_ptr<const re2::RE2> CompiledPattern(const std::string& pattern) {
  constexpr size_t kCached = 64;
  thread_local std::list<std::pair<std::string, std::shared_ptr<const re2::RE2>>> lru;
  for (auto it = lru.begin(); it != lru.end(); ++it) {
    if (it->first == pattern) {
      lru.splice(lru.begin(), lru, it);
      return it->second;
    }
  }
  auto re = std::make_shared<const re2::RE2>(pattern, PatternOptions());
  if (!re->ok()) re.reset();
  lru.emplace_front(pattern, re);
  if (lru.size() > kCached) lru.pop_back();
  return re;
}

// RE2 (the syntax of kube-apiserver's patterns) matches in time linear in the value, so a hostile
// value costs no more than reading it.
bool MatchesPattern(const std::string& pattern, const std::string& s) {
  auto re = CompiledPattern(pattern);
  if (!re) return true;  // refused when the CRD was written
  return re2::RE2::PartialMatch(s, *re);
}

class Validator {
 public:
  FieldErrorList errors;

  void Check(const Json& schema, const Json& v, const std::string& path, bool root) {
    if (!schema.is_object()) return;
    const std::string shown_path = path.empty() ? "<root>" : path;
    if (v.is_null()) {
      if (Flag(schema, "nullable") || !schema.contains("type")) return;
      Add(path, FieldErrorType::kInvalid,
          fmt::format("\"null\": {} in body must be of type {}: \"null\"", shown_path,
                      schema["type"].get<std::string>()));
      return;
    }
    const bool int_or_string = Flag(schema, "x-kubernetes-int-or-string");
    if (int_or_string) {
      if (!IsInteger(v) && !v.is_string()) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("\"{}\": {} in body must be of type "
                        "integer,string: \"{}\"",
                        TypeOf(v), shown_path, TypeOf(v)));
        return;
      }
    } else if (auto type = schema.find("type"); type != schema.end() && type->is_string()) {
      if (!HasType(v, *type)) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("\"{}\": {} in body must be of type {}: \"{}\"", TypeOf(v), shown_path,
                        type->get<std::string>(), TypeOf(v)));
        return;
      }
    }
    CheckEnum(schema, v, path);
    CheckComposition(schema, v, path, shown_path);
    if (v.is_number()) CheckBounds(schema, v, path, shown_path);
    if (v.is_string()) CheckString(schema, v, path, shown_path);
    if (v.is_array()) CheckArray(schema, v, path, shown_path);
    if (v.is_object()) CheckObject(schema, v, path, root);
  }

 private:
  // Whether `v` passes `sub` on its own (its errors are not reported).
  static bool Passes(const Json& sub, const Json& v, const std::string& path) {
    Validator inner;
    inner.Check(sub, v, path, false);
    return inner.errors.empty();
  }

  // allOf, anyOf, oneOf and not, in the words of kube-openapi's validator.
  void CheckComposition(const Json& schema, const Json& v, const std::string& path,
                        const std::string& shown) {
    if (auto all = schema.find("allOf"); all != schema.end() && all->is_array()) {
      for (const auto& sub : *all) Check(sub, v, path, false);
    }
    if (auto any = schema.find("anyOf"); any != schema.end() && any->is_array() && !any->empty()) {
      bool ok = false;
      for (const auto& sub : *any) ok = ok || Passes(sub, v, path);
      if (!ok) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("\"\": {} in body must validate at least one "
                        "schema (anyOf)",
                        shown));
      }
    }
    if (auto one = schema.find("oneOf"); one != schema.end() && one->is_array() && !one->empty()) {
      int passed = 0;
      for (const auto& sub : *one) passed += Passes(sub, v, path) ? 1 : 0;
      if (passed != 1) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("\"\": {} in body must validate one and only one "
                        "schema (oneOf)",
                        shown));
      }
    }
    if (auto no = schema.find("not"); no != schema.end() && no->is_object()) {
      if (Passes(*no, v, path)) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("\"\": {} in body must not validate the schema "
                        "(not)",
                        shown));
      }
    }
  }

  // An error at the object's root has no field before it.
  void Add(const std::string& path, FieldErrorType type, std::string detail) {
    errors.push_back({type, path, std::move(detail), /*bare=*/path.empty()});
  }

  void CheckEnum(const Json& schema, const Json& v, const std::string& path) {
    auto e = schema.find("enum");
    if (e == schema.end() || !e->is_array()) return;
    for (const auto& allowed : *e) {
      if (allowed == v) return;
    }
    // As field.NotSupported: every allowed value quoted, non-strings as their JSON.
    std::string list;
    for (const auto& allowed : *e) {
      const std::string text = allowed.is_string() ? allowed.get<std::string>() : allowed.dump();
      list += (list.empty() ? "" : ", ") + Json(text).dump();
    }
    Add(path, FieldErrorType::kNotSupported,
        fmt::format("{}: supported values: {}", v.dump(), list));
  }

  void CheckBounds(const Json& schema, const Json& v, const std::string& path,
                   const std::string& shown) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && m->is_number()) {
      const bool exclusive = Flag(schema, "exclusiveMinimum");
      if (exclusive ? d <= m->get<double>() : d < m->get<double>()) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("{}: {} in body should be greater than {}{}", v.dump(), shown,
                        exclusive ? "" : "or equal to ", FormatNumber(*m)));
      }
    }
    if (auto m = schema.find("maximum"); m != schema.end() && m->is_number()) {
      const bool exclusive = Flag(schema, "exclusiveMaximum");
      if (exclusive ? d >= m->get<double>() : d > m->get<double>()) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("{}: {} in body should be less than {}{}", v.dump(), shown,
                        exclusive ? "" : "or equal to ", FormatNumber(*m)));
      }
    }
  }

  void CheckString(const Json& schema, const Json& v, const std::string& path,
                   const std::string& shown) {
    const std::string& s = v.get_ref<const std::string&>();
    // Lengths count characters (code points), not bytes.
    size_t chars = 0;
    for (unsigned char c : s) chars += (c & 0xC0) != 0x80;
    if (auto m = schema.find("maxLength"); m != schema.end() && m->is_number_integer()) {
      if (chars > m->get<size_t>()) {
        Add(path, FieldErrorType::kTooLong,
            fmt::format("may not be longer than {}", m->get<int64_t>()));
      }
    }
    if (auto m = schema.find("minLength"); m != schema.end() && m->is_number_integer()) {
      if (chars < m->get<size_t>()) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("{}: {} in body should be at least {} chars long", v.dump(), shown,
                        m->get<int64_t>()));
      }
    }
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string()) {
      const std::string& pattern = p->get_ref<const std::string&>();
      if (!MatchesPattern(pattern, s)) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("{}: {} in body should match '{}'", v.dump(), shown, pattern));
      }
    }
  }

  void CheckArray(const Json& schema, const Json& v, const std::string& path,
                  const std::string& shown) {
    if (auto m = schema.find("maxItems"); m != schema.end() && m->is_number_integer()) {
      if (v.size() > m->get<size_t>()) {
        Add(path, FieldErrorType::kTooMany,
            fmt::format("{}: must have at most {} items", v.size(), m->get<int64_t>()));
      }
    }
    if (auto m = schema.find("minItems"); m != schema.end() && m->is_number_integer()) {
      if (v.size() < m->get<size_t>()) {
        Add(path, FieldErrorType::kInvalid,
            fmt::format("{}: {} in body should have at least {} items", v.size(), shown,
                        m->get<int64_t>()));
      }
    }
    if (auto items = schema.find("items"); items != schema.end()) {
      for (size_t i = 0; i < v.size(); ++i) {
        Check(*items, v[i], fmt::format("{}[{}]", path, i), false);
      }
    }
  }

  void CheckObject(const Json& schema, const Json& v, const std::string& path, bool root) {
    if (auto req = schema.find("required"); req != schema.end() && req->is_array()) {
      for (const auto& name : *req) {
        if (name.is_string() && !v.contains(name.get<std::string>())) {
          Add(Child(path, name.get<std::string>()), FieldErrorType::kRequired, "");
        }
      }
    }
    auto props = schema.find("properties");
    const Json* additional = AdditionalProperties(schema);
    for (const auto& [key, value] : v.items()) {
      if (root && (key == "apiVersion" || key == "kind" || key == "metadata")) continue;
      if (props != schema.end() && props->is_object() && props->contains(key)) {
        Check((*props)[key], value, Child(path, key), false);
      } else if (additional) {
        Check(*additional, value, Child(path, key), false);
      }
    }
  }
};

// The checks of a node that apply inside allOf/anyOf/oneOf/not too (value validations).
void ValueChecks(const Json& schema, const std::string& path, FieldErrorList* out) {
  if (auto p = schema.find("pattern"); p != schema.end() && p->is_string()) {
    if (std::string why = PatternError(*p); !why.empty()) {
      out->push_back(
          {FieldErrorType::kInvalid, path + ".pattern",
           fmt::format("{}: must be a valid regular expression, but isn't: {}", p->dump(), why)});
    }
  }
  for (const char* key : {"allOf", "anyOf", "oneOf"}) {
    auto list = schema.find(key);
    if (list == schema.end() || !list->is_array()) continue;
    for (size_t i = 0; i < list->size(); ++i) {
      if ((*list)[i].is_object()) {
        ValueChecks((*list)[i], fmt::format("{}.{}[{}]", path, key, i), out);
      }
    }
  }
  if (auto no = schema.find("not"); no != schema.end() && no->is_object()) {
    ValueChecks(*no, path + ".not", out);
  }
}

void Structural(const Json& schema, const std::string& path, FieldErrorList* out) {
  if (!schema.is_object()) return;
  const bool typed = schema.contains("type") && schema["type"].is_string() &&
                     !schema["type"].get<std::string>().empty();
  if (!typed && !Flag(schema, "x-kubernetes-preserve-unknown-fields") &&
      !Flag(schema, "x-kubernetes-int-or-string")) {
    out->push_back({FieldErrorType::kRequired, path + ".type",
                    fmt::format("must not be empty for specified {}",
                                schema.contains("items") ? "array items" : "object fields")});
  }
  ValueChecks(schema, path, out);
  if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
    for (const auto& [key, sub] : props->items()) {
      Structural(sub, path + ".properties[" + key + "]", out);
    }
  }
  if (auto items = schema.find("items"); items != schema.end()) {
    Structural(*items, path + ".items", out);
  }
  if (const Json* additional = AdditionalProperties(schema)) {
    Structural(*additional, path + ".additionalProperties", out);
  }
}

}  // namespace

void PruneUnknownFields(const Json& schema, Json& obj, std::vector<std::string>* pruned) {
  Prune(schema, obj, true, "", pruned);
}

void ApplySchemaDefaults(const Json& schema, Json& obj) { Defaults(schema, obj); }

FieldErrorList ValidateAgainstSchema(const Json& schema, const Json& obj) {
  Validator v;
  v.Check(schema, obj, "", true);
  return std::move(v.errors);
}

FieldErrorList StructuralSchemaErrors(const Json& schema, const std::string& root) {
  FieldErrorList out;
  if (!schema.is_object()) {
    out.push_back({FieldErrorType::kRequired, root, "schemas are required"});
    return out;
  }
  Structural(schema, root, &out);
  if (schema.value("type", "") != "object" && out.empty()) {
    out.push_back({FieldErrorType::kInvalid, root + ".type",
                   fmt::format("\"{}\": must be object at the root", schema.value("type", ""))});
  }
  return out;
}

std::string PatternError(const std::string& pattern) {
  re2::RE2 re(pattern, PatternOptions());
  return re.ok() ? "" : "error parsing regexp: " + re.error();
}

}  // namespace berth::apiserver
