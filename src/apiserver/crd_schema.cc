#include "apiserver/crd_schema.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>

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

void Prune(const Json& schema, Json& obj, bool root) {
  if (!schema.is_object()) return;
  if (obj.is_object()) {
    auto props = schema.find("properties");
    const Json* additional = AdditionalProperties(schema);
    const bool preserve = Flag(schema, "x-kubernetes-preserve-unknown-fields") ||
                          (schema.contains("additionalProperties") &&
                           schema["additionalProperties"].is_boolean() &&
                           schema["additionalProperties"].get<bool>());
    const bool embedded = Flag(schema, "x-kubernetes-embedded-resource");
    for (auto it = obj.begin(); it != obj.end();) {
      const std::string& key = it.key();
      if ((root || embedded) && (key == "apiVersion" || key == "kind" || key == "metadata")) {
        ++it;
        continue;
      }
      if (props != schema.end() && props->is_object() && props->contains(key)) {
        Prune((*props)[key], it.value(), false);
        ++it;
      } else if (additional) {
        Prune(*additional, it.value(), false);
        ++it;
      } else if (preserve) {
        ++it;
      } else {
        it = obj.erase(it);
      }
    }
  } else if (obj.is_array()) {
    auto items = schema.find("items");
    if (items == schema.end()) return;
    for (auto& e : obj) Prune(*items, e, false);
  }
}

void Defaults(const Json& schema, Json& obj) {
  if (!schema.is_object()) return;
  if (obj.is_object()) {
    if (auto props = schema.find("properties"); props != schema.end() && props->is_object()) {
      for (auto& [key, sub] : props->items()) {
        if (!obj.contains(key) && sub.is_object() && sub.contains("default")) {
          obj[key] = sub["default"];
        }
        if (obj.contains(key)) Defaults(sub, obj[key]);
      }
    }
    if (const Json* additional = AdditionalProperties(schema)) {
      for (auto& [key, value] : obj.items()) Defaults(*additional, value);
    }
  } else if (obj.is_array()) {
    if (auto items = schema.find("items"); items != schema.end()) {
      for (auto& e : obj) Defaults(*items, e);
    }
  }
}

// A value as kube-apiserver quotes it in an error.
std::string Shown(const Json& v) {
  if (v.is_null()) return "\"null\"";
  return v.dump();
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

class Validator {
 public:
  std::vector<std::string> errors;

  void Check(const Json& schema, const Json& v, const std::string& path, bool root) {
    if (!schema.is_object()) return;
    const std::string shown_path = path.empty() ? "<root>" : path;
    if (v.is_null()) {
      if (Flag(schema, "nullable") || !schema.contains("type")) return;
      Add(path, fmt::format("Invalid value: \"null\": {} in body must be of type {}: \"null\"",
                            shown_path, schema["type"].get<std::string>()));
      return;
    }
    const bool int_or_string = Flag(schema, "x-kubernetes-int-or-string");
    if (int_or_string) {
      if (!IsInteger(v) && !v.is_string()) {
        Add(path, fmt::format("Invalid value: {}: {} in body must be of type integer,string: {}",
                              Shown(v), shown_path, Shown(v)));
        return;
      }
    } else if (auto type = schema.find("type"); type != schema.end() && type->is_string()) {
      if (!HasType(v, *type)) {
        Add(path, fmt::format("Invalid value: \"{}\": {} in body must be of type {}: \"{}\"",
                              TypeOf(v), shown_path, type->get<std::string>(), TypeOf(v)));
        return;
      }
    }
    CheckEnum(schema, v, path);
    if (v.is_number()) CheckBounds(schema, v, path, shown_path);
    if (v.is_string()) CheckString(schema, v, path, shown_path);
    if (v.is_array()) CheckArray(schema, v, path, shown_path);
    if (v.is_object()) CheckObject(schema, v, path, root);
  }

 private:
  void Add(const std::string& path, const std::string& what) {
    errors.push_back(path.empty() ? what : path + ": " + what);
  }

  void CheckEnum(const Json& schema, const Json& v, const std::string& path) {
    auto e = schema.find("enum");
    if (e == schema.end() || !e->is_array()) return;
    for (const auto& allowed : *e) {
      if (allowed == v) return;
    }
    std::string list;
    for (const auto& allowed : *e) list += (list.empty() ? "" : ", ") + allowed.dump();
    Add(path, fmt::format("Unsupported value: {}: supported values: {}", v.dump(), list));
  }

  void CheckBounds(const Json& schema, const Json& v, const std::string& path,
                   const std::string& shown) {
    const double d = v.get<double>();
    if (auto m = schema.find("minimum"); m != schema.end() && m->is_number()) {
      const bool exclusive = Flag(schema, "exclusiveMinimum");
      if (exclusive ? d <= m->get<double>() : d < m->get<double>()) {
        Add(path, fmt::format("Invalid value: {}: {} in body should be greater than {}{}",
                              v.dump(), shown, exclusive ? "" : "or equal to ",
                              FormatNumber(*m)));
      }
    }
    if (auto m = schema.find("maximum"); m != schema.end() && m->is_number()) {
      const bool exclusive = Flag(schema, "exclusiveMaximum");
      if (exclusive ? d >= m->get<double>() : d > m->get<double>()) {
        Add(path, fmt::format("Invalid value: {}: {} in body should be less than {}{}", v.dump(),
                              shown, exclusive ? "" : "or equal to ", FormatNumber(*m)));
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
        Add(path, fmt::format("Too long: may not be longer than {}", m->get<int64_t>()));
      }
    }
    if (auto m = schema.find("minLength"); m != schema.end() && m->is_number_integer()) {
      if (chars < m->get<size_t>()) {
        Add(path, fmt::format("Invalid value: {}: {} in body should be at least {} chars long",
                              v.dump(), shown, m->get<int64_t>()));
      }
    }
    if (auto p = schema.find("pattern"); p != schema.end() && p->is_string()) {
      bool matches = true;
      try {
        matches = std::regex_search(s, std::regex(p->get<std::string>(), std::regex::ECMAScript));
      } catch (const std::regex_error&) {
        // The CRD's validation refuses patterns that do not compile; nothing to say here.
      }
      if (!matches) {
        Add(path, fmt::format("Invalid value: {}: {} in body should match '{}'", v.dump(), shown,
                              p->get<std::string>()));
      }
    }
  }

  void CheckArray(const Json& schema, const Json& v, const std::string& path,
                  const std::string& shown) {
    if (auto m = schema.find("maxItems"); m != schema.end() && m->is_number_integer()) {
      if (v.size() > m->get<size_t>()) {
        Add(path, fmt::format("Too many: {}: must have at most {} items", v.size(),
                              m->get<int64_t>()));
      }
    }
    if (auto m = schema.find("minItems"); m != schema.end() && m->is_number_integer()) {
      if (v.size() < m->get<size_t>()) {
        Add(path, fmt::format("Invalid value: {}: {} in body should have at least {} items",
                              v.size(), shown, m->get<int64_t>()));
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
          Add(Child(path, name.get<std::string>()), "Required value");
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

void Structural(const Json& schema, const std::string& path, std::vector<std::string>* out) {
  if (!schema.is_object()) return;
  const bool typed = schema.contains("type") && schema["type"].is_string() &&
                     !schema["type"].get<std::string>().empty();
  if (!typed && !Flag(schema, "x-kubernetes-preserve-unknown-fields") &&
      !Flag(schema, "x-kubernetes-int-or-string")) {
    out->push_back(fmt::format("{}.type: Required value: must not be empty for specified {}",
                               path, schema.contains("items") ? "array items" : "object fields"));
  }
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

void PruneUnknownFields(const Json& schema, Json& obj) { Prune(schema, obj, true); }

void ApplySchemaDefaults(const Json& schema, Json& obj) { Defaults(schema, obj); }

std::vector<std::string> ValidateAgainstSchema(const Json& schema, const Json& obj) {
  Validator v;
  v.Check(schema, obj, "", true);
  return std::move(v.errors);
}

std::vector<std::string> StructuralSchemaErrors(const Json& schema) {
  std::vector<std::string> out;
  const std::string root = "spec.validation.openAPIV3Schema";
  if (!schema.is_object()) {
    out.push_back(root + ": Required value: schemas are required");
    return out;
  }
  Structural(schema, root, &out);
  if (schema.value("type", "") != "object" && out.empty()) {
    out.push_back(root + ".type: Invalid value: \"" + schema.value("type", "") +
                  "\": must be object at the root");
  }
  return out;
}

}  // namespace berth::apiserver
