// TypedArgs<T>: a plugin's args decoder written as one list of fields, so a plugin does not
// hand-write the JSON walk, the defaults, the strict unknown-field check, the error paths and
// Encode for every args struct.
//
//   struct MyArgs { int32_t weight = 1; std::string label = "zone"; };
//   reg.decode_args = berth::TypedArgs<MyArgs>("MyPluginArgs")
//                         .Field("weight", &MyArgs::weight)
//                         .Field("label", &MyArgs::label)
//                         .Validate([](const MyArgs& a) -> berth::VoidResult {
//                           if (a.weight < 1) return berth::Error{"weight: must be at least 1"};
//                           return {};
//                         })
//                         .Decoder();
//   // in the factory:
//   const MyArgs& a = berth::ArgsOf<MyArgs>(args);
//
// Header-only: out-of-tree plugins get it from Berth::sdk with nothing to link.
//
// Decoding matches the configuration loader's strict decoding of in-tree args:
//  * a field absent or null keeps the struct's default member value; null args are all defaults;
//  * a key that is not a declared field is "<path>.<key>: unknown field";
//  * a wrong type is "<path>.<field>: expected <type>, got <type>" (list items "<field>[i]",
//    map values "<field>.<key>"), an integer outside the field's range
//    "<path>.<field>: invalid value <v>: out of range";
//  * the first problem is reported (fields in key order, then validators in the order added).
//
// Supported field types: bool, any integer type (YAML's 10.0 is accepted as 10), double,
// std::string, std::vector<X> and std::map<std::string, X> of those, and nested structs (and
// lists of them) given their own TypedArgs<U> (without a kind) as the third argument of Field.
//
// Threads: a TypedArgs is built and its decoder called on the thread loading the configuration;
// the decoded args are immutable and may be read from any thread.
#pragma once

#include <concepts>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"

namespace berth {

template <class T>
class TypedArgs;

namespace typed_args_internal {

inline const char* TypeName(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "a list";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_float:
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
      return "a number";
    default:
      return "null";
  }
}

inline Error Expected(const std::string& path, std::string_view what, const nlohmann::json& got) {
  return Error{path + ": expected " + std::string(what) + ", got " + TypeName(got),
               ErrorCode::kInvalid};
}

inline VoidResult DecodeValue(const nlohmann::json& v, const std::string& path, bool& out) {
  if (!v.is_boolean()) return Expected(path, "a boolean", v);
  out = v.get<bool>();
  return {};
}

template <std::integral I>
requires(!std::same_as<I, bool>) VoidResult
    DecodeValue(const nlohmann::json& v, const std::string& path, I& out) {
  using L = std::numeric_limits<I>;
  auto out_of_range = [&] {
    return Error{path + ": invalid value " + v.dump() + ": out of range", ErrorCode::kInvalid};
  };
  if (v.is_number_unsigned()) {
    uint64_t n = v.get<uint64_t>();
    if (n > static_cast<uint64_t>(L::max())) return out_of_range();
    out = static_cast<I>(n);
    return {};
  }
  if (v.is_number_integer()) {
    int64_t n = v.get<int64_t>();
    if constexpr (std::is_unsigned_v<I>) {
      if (n < 0) return out_of_range();
    } else {
      if (n < static_cast<int64_t>(L::min()) || n > static_cast<int64_t>(L::max())) {
        return out_of_range();
      }
    }
    out = static_cast<I>(n);
    return {};
  }
  if (v.is_number_float()) {
    // YAML may spell a whole number as 10.0; anything fractional is not an integer.
    double d = v.get<double>();
    if (!(d > -9.2e18 && d < 9.2e18)) {
      return Error{path + ": invalid value " + v.dump() + ": out of range", ErrorCode::kInvalid};
    }
    if (static_cast<double>(static_cast<int64_t>(d)) != d) {
      return Error{path + ": invalid value " + v.dump() + ": expected an integer",
                   ErrorCode::kInvalid};
    }
    nlohmann::json whole = static_cast<int64_t>(d);
    return DecodeValue(whole, path, out);
  }
  return Expected(path, "an integer", v);
}

inline VoidResult DecodeValue(const nlohmann::json& v, const std::string& path, double& out) {
  if (!v.is_number()) return Expected(path, "a number", v);
  out = v.get<double>();
  return {};
}

inline VoidResult DecodeValue(const nlohmann::json& v, const std::string& path, std::string& out) {
  if (!v.is_string()) return Expected(path, "a string", v);
  out = v.get<std::string>();
  return {};
}

template <class X>
VoidResult DecodeValue(const nlohmann::json& v, const std::string& path, std::vector<X>& out) {
  if (!v.is_array()) return Expected(path, "a list", v);
  std::vector<X> items(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    VoidResult r = DecodeValue(v[i], path + "[" + std::to_string(i) + "]", items[i]);
    if (!r.ok()) return r;
  }
  out = std::move(items);
  return {};
}

template <class X>
VoidResult DecodeValue(const nlohmann::json& v, const std::string& path,
                       std::map<std::string, X>& out) {
  if (!v.is_object()) return Expected(path, "an object", v);
  std::map<std::string, X> items;
  for (auto it = v.begin(); it != v.end(); ++it) {
    VoidResult r = DecodeValue(*it, path + "." + it.key(), items[it.key()]);
    if (!r.ok()) return r;
  }
  out = std::move(items);
  return {};
}

// Scalars, lists and maps of them encode as nlohmann's own conversions do.
template <class X>
nlohmann::json EncodeValue(const X& v) {
  return nlohmann::json(v);
}

}  // namespace typed_args_internal

// The PluginArgs a TypedArgs<T> decoder returns: the decoded T and how to encode it. Plugins
// read it with ArgsOf<T>.
template <class T>
class TypedPluginArgs final : public PluginArgs {
 public:
  TypedPluginArgs(T value, std::shared_ptr<const TypedArgs<T>> schema)
      : value_(std::move(value)), schema_(std::move(schema)) {}
  const T& value() const { return value_; }
  std::string_view Kind() const override { return schema_->kind(); }
  void Encode(nlohmann::json& out) const override { out = schema_->Encode(value_); }

 private:
  T value_;
  std::shared_ptr<const TypedArgs<T>> schema_;
};

template <class T>
class TypedArgs {
 public:
  // `kind` is the args kind as written in configuration files ("MyPluginArgs"); empty for a
  // nested struct's schema.
  explicit TypedArgs(std::string kind = "") : kind_(std::move(kind)) {}

  // A field of a supported type (see the file comment), read from and written to `name`.
  template <class F>
  TypedArgs& Field(std::string name, F T::*member) {
    fields_.push_back(
        {std::move(name),
         [member](const nlohmann::json& v, const std::string& path, T& out) {
           return typed_args_internal::DecodeValue(v, path, out.*member);
         },
         [member](const T& in) { return typed_args_internal::EncodeValue(in.*member); }});
    return *this;
  }

  // A nested struct decoded by `nested` (its defaults, fields and validators).
  template <class U>
  TypedArgs& Field(std::string name, U T::*member, TypedArgs<U> nested) {
    auto schema = std::make_shared<const TypedArgs<U>>(std::move(nested));
    fields_.push_back({std::move(name),
                       [member, schema](const nlohmann::json& v, const std::string& path, T& out) {
                         return schema->DecodeInto(v, path, out.*member);
                       },
                       [member, schema](const T& in) { return schema->Encode(in.*member); }});
    return *this;
  }

  // A list of nested structs, each decoded by `nested`; errors name "<field>[i]".
  template <class U>
  TypedArgs& Field(std::string name, std::vector<U> T::*member, TypedArgs<U> nested) {
    auto schema = std::make_shared<const TypedArgs<U>>(std::move(nested));
    fields_.push_back(
        {std::move(name),
         [member, schema](const nlohmann::json& v, const std::string& path, T& out) -> VoidResult {
           if (!v.is_array()) return typed_args_internal::Expected(path, "a list", v);
           std::vector<U> items(v.size());
           for (size_t i = 0; i < v.size(); ++i) {
             VoidResult r =
                 schema->DecodeInto(v[i], path + "[" + std::to_string(i) + "]", items[i]);
             if (!r.ok()) return r;
           }
           out.*member = std::move(items);
           return {};
         },
         [member, schema](const T& in) {
           nlohmann::json list = nlohmann::json::array();
           for (const U& item : in.*member) list.push_back(schema->Encode(item));
           return list;
         }});
    return *this;
  }

  // A check run after every field is decoded. On failure it returns an Error whose message is
  // "<field path relative to the args>: <problem>" (e.g. "weight: must be at least 1" or
  // "rules[1].name: required value"); the decoder prefixes the args' YAML path.
  TypedArgs& Validate(std::function<VoidResult(const T&)> check) {
    validators_.push_back(std::move(check));
    return *this;
  }

  // Decodes `raw` (null: all defaults) at `path` into a T, defaults from T's member initializers.
  Result<T> Decode(const nlohmann::json* raw, const std::string& path) const {
    T out{};
    if (raw == nullptr) return out;
    VoidResult r = DecodeInto(*raw, path, out);
    if (!r.ok()) return r.error();
    return out;
  }

  // Decodes `v` over `out` (fields absent from `v` keep out's values), then validates.
  VoidResult DecodeInto(const nlohmann::json& v, const std::string& path, T& out) const {
    if (v.is_null()) return Check(out, path);
    if (!v.is_object()) return typed_args_internal::Expected(path, "an object", v);
    for (auto it = v.begin(); it != v.end(); ++it) {
      const std::string at = path + "." + it.key();
      const FieldCodec* field = nullptr;
      for (const FieldCodec& f : fields_) {
        if (f.name == it.key()) field = &f;
      }
      if (field == nullptr) return Error{at + ": unknown field", ErrorCode::kInvalid};
      if (it->is_null()) continue;  // absent and null both mean the default
      VoidResult r = field->decode(*it, at, out);
      if (!r.ok()) return r;
    }
    return Check(out, path);
  }

  // Every declared field of `value` as a JSON object (for `berth config print-defaults`).
  nlohmann::json Encode(const T& value) const {
    nlohmann::json out = nlohmann::json::object();
    for (const FieldCodec& f : fields_) out[f.name] = f.encode(value);
    return out;
  }

  const std::string& kind() const { return kind_; }

  // The registration's decode_args. The schema is copied: later changes to this builder do not
  // affect the decoder.
  ArgsDecoder Decoder() const {
    auto schema = std::make_shared<const TypedArgs<T>>(*this);
    return [schema](const nlohmann::json* raw,
                    const std::string& path) -> Result<std::shared_ptr<const PluginArgs>> {
      Result<T> decoded = schema->Decode(raw, path);
      if (!decoded.ok()) return decoded.error();
      return std::shared_ptr<const PluginArgs>(
          std::make_shared<TypedPluginArgs<T>>(std::move(decoded).value(), schema));
    };
  }

 private:
  struct FieldCodec {
    std::string name;
    std::function<VoidResult(const nlohmann::json&, const std::string&, T&)> decode;
    std::function<nlohmann::json(const T&)> encode;
  };

  VoidResult Check(const T& value, const std::string& path) const {
    for (const auto& check : validators_) {
      VoidResult r = check(value);
      if (!r.ok()) {
        Error e = r.error();
        e.message = path + "." + e.message;
        if (e.code == ErrorCode::kUnknown) e.code = ErrorCode::kInvalid;
        return e;
      }
    }
    return {};
  }

  std::string kind_;
  std::vector<FieldCodec> fields_;
  std::vector<std::function<VoidResult(const T&)>> validators_;
};

// The T a TypedArgs<T> decoder produced, for the plugin's factory. Called on the thread building
// the profile. Returns T's defaults when `args` is null or of another type (a registration
// without decode_args), so a factory need not handle that case.
template <class T>
const T& ArgsOf(const PluginArgs* args) {
  if (const auto* typed = dynamic_cast<const TypedPluginArgs<T>*>(args)) return typed->value();
  static const T kDefaults{};
  return kDefaults;
}

}  // namespace berth
