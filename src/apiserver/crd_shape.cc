#include "apiserver/crd_shape.h"

#include <fmt/format.h>

#include <initializer_list>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

enum class Shape { kString, kBool, kInteger, kNumber, kObject, kArray, kStrings, kAny };

const char* Named(Shape s) {
  switch (s) {
    case Shape::kString:
      return "a string";
    case Shape::kBool:
      return "a boolean";
    case Shape::kInteger:
      return "an integer";
    case Shape::kNumber:
      return "a number";
    case Shape::kObject:
      return "an object";
    case Shape::kArray:
      return "an array";
    case Shape::kStrings:
      return "an array of strings";
    case Shape::kAny:
      return "a value";
  }
  return "a value";
}

bool Fits(const Json& v, Shape s) {
  switch (s) {
    case Shape::kString:
      return v.is_string();
    case Shape::kBool:
      return v.is_boolean();
    case Shape::kInteger:
      return v.is_number_integer();
    case Shape::kNumber:
      return v.is_number();
    case Shape::kObject:
      return v.is_object();
    case Shape::kArray:
      return v.is_array();
    case Shape::kStrings:
      if (!v.is_array()) return false;
      for (const auto& e : v) {
        if (!e.is_string()) return false;
      }
      return true;
    case Shape::kAny:
      return true;
  }
  return true;
}

struct Field {
  const char* name;
  Shape shape;
};

class Checker {
 public:
  std::optional<std::string> error;

  // `obj` (at `path`) must be an object whose listed fields have their shapes.
  bool Object(const Json& obj, const std::string& path, std::initializer_list<Field> fields) {
    if (error) return false;
    if (!obj.is_object()) return Fail(path, Shape::kObject);
    for (const Field& f : fields) {
      auto it = obj.find(f.name);
      if (it == obj.end() || it->is_null()) continue;
      if (!Fits(*it, f.shape)) return Fail(Join(path, f.name), f.shape);
    }
    return true;
  }

  bool Fail(const std::string& path, Shape s) {
    if (!error) error = fmt::format("{}: must be {}", path, Named(s));
    return false;
  }

  static std::string Join(const std::string& path, const std::string& key) {
    return path.empty() ? key : path + "." + key;
  }

  // A JSONSchemaProps node and its children.
  void Schema(const Json& s, const std::string& path) {
    if (!Object(s, path,
                {{"type", Shape::kString},
                 {"format", Shape::kString},
                 {"description", Shape::kString},
                 {"pattern", Shape::kString},
                 {"required", Shape::kStrings},
                 {"enum", Shape::kArray},
                 {"minimum", Shape::kNumber},
                 {"maximum", Shape::kNumber},
                 {"exclusiveMinimum", Shape::kBool},
                 {"exclusiveMaximum", Shape::kBool},
                 {"minLength", Shape::kInteger},
                 {"maxLength", Shape::kInteger},
                 {"minItems", Shape::kInteger},
                 {"maxItems", Shape::kInteger},
                 {"minProperties", Shape::kInteger},
                 {"maxProperties", Shape::kInteger},
                 {"multipleOf", Shape::kNumber},
                 {"nullable", Shape::kBool},
                 {"uniqueItems", Shape::kBool},
                 {"properties", Shape::kObject},
                 {"items", Shape::kObject},
                 {"not", Shape::kObject},
                 {"allOf", Shape::kArray},
                 {"anyOf", Shape::kArray},
                 {"oneOf", Shape::kArray},
                 {"x-kubernetes-preserve-unknown-fields", Shape::kBool},
                 {"x-kubernetes-int-or-string", Shape::kBool},
                 {"x-kubernetes-embedded-resource", Shape::kBool},
                 {"x-kubernetes-list-type", Shape::kString},
                 {"x-kubernetes-map-type", Shape::kString},
                 {"x-kubernetes-list-map-keys", Shape::kStrings},
                 {"x-kubernetes-validations", Shape::kArray}})) {
      return;
    }
    for (const char* key : {"minLength", "maxLength", "minItems", "maxItems"}) {
      if (s.contains(key) && s[key].is_number_integer() && s[key].get<int64_t>() < 0) {
        error = fmt::format("{}.{}: must not be negative", path, key);
        return;
      }
    }
    if (auto props = s.find("properties"); props != s.end() && props->is_object()) {
      for (const auto& [key, sub] : props->items()) Schema(sub, path + ".properties[" + key + "]");
    }
    if (auto items = s.find("items"); items != s.end() && items->is_object()) {
      Schema(*items, path + ".items");
    }
    if (auto add = s.find("additionalProperties"); add != s.end() && !add->is_null()) {
      if (add->is_object()) {
        Schema(*add, path + ".additionalProperties");
      } else if (!add->is_boolean()) {
        Fail(path + ".additionalProperties", Shape::kObject);
      }
    }
    for (const char* key : {"allOf", "anyOf", "oneOf"}) {
      auto list = s.find(key);
      if (list == s.end() || !list->is_array()) continue;
      for (size_t i = 0; i < list->size(); ++i) {
        Schema((*list)[i], fmt::format("{}.{}[{}]", path, key, i));
      }
    }
    if (auto no = s.find("not"); no != s.end() && no->is_object()) Schema(*no, path + ".not");
  }

  void Version(const Json& v, const std::string& path) {
    if (!Object(v, path,
                {{"name", Shape::kString},
                 {"served", Shape::kBool},
                 {"storage", Shape::kBool},
                 {"deprecated", Shape::kBool},
                 {"deprecationWarning", Shape::kString},
                 {"schema", Shape::kObject},
                 {"subresources", Shape::kObject},
                 {"additionalPrinterColumns", Shape::kArray},
                 {"selectableFields", Shape::kArray}})) {
      return;
    }
    if (auto schema = v.find("schema"); schema != v.end() && schema->is_object()) {
      auto root = schema->find("openAPIV3Schema");
      if (root != schema->end() && !root->is_null()) {
        Schema(*root, path + ".schema.openAPIV3Schema");
      }
    }
    if (auto subs = v.find("subresources"); subs != v.end() && subs->is_object()) {
      Object(*subs, path + ".subresources",
             {{"status", Shape::kObject}, {"scale", Shape::kObject}});
      if (auto scale = subs->find("scale"); scale != subs->end() && scale->is_object()) {
        Object(*scale, path + ".subresources.scale",
               {{"specReplicasPath", Shape::kString},
                {"statusReplicasPath", Shape::kString},
                {"labelSelectorPath", Shape::kString}});
      }
    }
    if (auto cols = v.find("additionalPrinterColumns"); cols != v.end() && cols->is_array()) {
      for (size_t i = 0; i < cols->size(); ++i) {
        Object((*cols)[i], fmt::format("{}.additionalPrinterColumns[{}]", path, i),
               {{"name", Shape::kString},
                {"type", Shape::kString},
                {"format", Shape::kString},
                {"description", Shape::kString},
                {"priority", Shape::kInteger},
                {"jsonPath", Shape::kString}});
      }
    }
  }
};

}  // namespace

std::optional<std::string> CrdShapeError(const Json& crd) {
  Checker c;
  if (!c.Object(
          crd, "",
          {{"metadata", Shape::kObject}, {"spec", Shape::kObject}, {"status", Shape::kObject}})) {
    return c.error;
  }
  const Json spec = crd.value("spec", Json::object());
  if (spec.is_null()) return std::nullopt;
  if (!c.Object(spec, "spec",
                {{"group", Shape::kString},
                 {"scope", Shape::kString},
                 {"names", Shape::kObject},
                 {"versions", Shape::kArray},
                 {"conversion", Shape::kObject},
                 {"preserveUnknownFields", Shape::kBool}})) {
    return c.error;
  }
  if (auto names = spec.find("names"); names != spec.end() && names->is_object()) {
    c.Object(*names, "spec.names",
             {{"plural", Shape::kString},
              {"singular", Shape::kString},
              {"kind", Shape::kString},
              {"listKind", Shape::kString},
              {"shortNames", Shape::kStrings},
              {"categories", Shape::kStrings}});
  }
  if (auto conv = spec.find("conversion"); conv != spec.end() && conv->is_object()) {
    c.Object(*conv, "spec.conversion", {{"strategy", Shape::kString}});
  }
  if (auto versions = spec.find("versions"); versions != spec.end() && versions->is_array()) {
    for (size_t i = 0; i < versions->size() && !c.error; ++i) {
      c.Version((*versions)[i], fmt::format("spec.versions[{}]", i));
    }
  }
  return c.error;
}

}  // namespace berth::apiserver
