#include "apiserver/protobuf.h"

#include <fmt/format.h>
#include <google/protobuf/arena.h>
#include <google/protobuf/message.h>

#include <climits>
#include <vector>

#include "api/codec.h"
#include "apiserver/base64.h"
#include "apiserver/protobuf_schema.h"

namespace berth::apiserver {
namespace {

namespace pb = google::protobuf;
using nlohmann::json;

ApiError Malformed(std::string_view where) {
  return Error{fmt::format("the protobuf body could not be decoded: {}", where),
               ErrorCode::kBadRequest};
}

// What meta/v1 Time can hold in JSON: years 0001 to 9999 (RFC 3339).
constexpr int64_t kMinSeconds = -62135596800;
constexpr int64_t kMaxSeconds = 253402300799;

// The string with each byte of an invalid UTF-8 sequence replaced by U+FFFD, as Go's JSON
// encoder writes it (proto2 strings are not checked on the wire; JSON text must be UTF-8).
std::string ValidUtf8(std::string s) {
  auto len = [&](size_t i) -> size_t {  // the length of a valid sequence at i, or 0
    const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
    const auto cont = [&](size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
    const unsigned char c = b(0);
    if (c < 0x80) return 1;
    if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
      if (!cont(1) || !cont(2)) return 0;
      if ((c == 0xE0 && b(1) < 0xA0) || (c == 0xED && b(1) > 0x9F))
        return 0;  // overlong, surrogate
      return 3;
    }
    if (c >= 0xF0 && c <= 0xF4) {
      if (!cont(1) || !cont(2) || !cont(3)) return 0;
      if ((c == 0xF0 && b(1) < 0x90) || (c == 0xF4 && b(1) > 0x8F))
        return 0;  // overlong, > U+10FFFF
      return 4;
    }
    return 0;
  };
  size_t i = 0;
  while (i < s.size() && len(i) != 0) i += len(i);
  if (i == s.size()) return s;
  std::string out = s.substr(0, i);
  while (i < s.size()) {
    const size_t n = len(i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out.append(s, i, n);
      i += n;
    }
  }
  return out;
}

class Converter {
 public:
  explicit Converter(const ProtobufSchema& schema) : schema_(schema) {}

  // The message as a JSON value; null when it is a zero time (absent from JSON).
  Result<json> Message(const pb::Message& m, const std::string& where) const {
    const pb::Descriptor* d = m.GetDescriptor();
    if (d == schema_.quantity || d == schema_.int_or_string || d == schema_.time ||
        d == schema_.micro_time || d == schema_.duration || d == schema_.fields_v1 ||
        d == schema_.raw_extension)
      return Special(m, where);
    if (schema_.JsonList(d) && d->field_count() > 0) return Repeated(m, d->field(0), where);
    json out = json::object();
    const pb::Reflection* r = m.GetReflection();
    std::vector<const pb::FieldDescriptor*> fields;  // those set, and lists not empty
    r->ListFields(m, &fields);
    for (const pb::FieldDescriptor* f : fields) {
      // Only messages can fail; their paths name where in an error.
      const std::string path = f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE
                                   ? where + "." + f->json_name()
                                   : std::string();
      if (f->is_map()) {
        BERTH_TRY_ASSIGN(map, Map(m, f, path));
        out[f->json_name()] = std::move(map);
      } else if (f->is_repeated()) {
        BERTH_TRY_ASSIGN(list, Repeated(m, f, path));
        out[f->json_name()] = std::move(list);
      } else if (auto done = Singular(m, f, path, &out); !done.ok()) {
        return done.error();
      }
    }
    return out;
  }

 private:
  VoidResult Singular(const pb::Message& m, const pb::FieldDescriptor* f, const std::string& path,
                      json* out) const {
    const ProtobufFieldFlags flags = schema_.Flags(f);
    if (f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      BERTH_TRY_ASSIGN(sub, Message(m.GetReflection()->GetMessage(m, f), path));
      if (sub.is_null()) return {};
      if (flags.inline_fields && sub.is_object()) {
        for (auto it = sub.begin(); it != sub.end(); ++it) (*out)[it.key()] = std::move(it.value());
      } else {
        (*out)[f->json_name()] = std::move(sub);
      }
      return {};
    }
    json v = Scalar(m, f, -1);
    // Go writes a non-pointer scalar whatever its value; with omitempty its zero is no data.
    if (!flags.keep_zero && IsZero(v)) return {};
    (*out)[f->json_name()] = std::move(v);
    return {};
  }

  Result<json> Repeated(const pb::Message& m, const pb::FieldDescriptor* f,
                        const std::string& path) const {
    const pb::Reflection* r = m.GetReflection();
    json list = json::array();
    for (int i = 0; i < r->FieldSize(m, f); ++i) {
      if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        list.push_back(Scalar(m, f, i));
        continue;
      }
      BERTH_TRY_ASSIGN(item, Message(r->GetRepeatedMessage(m, f, i), path));
      list.push_back(std::move(item));
    }
    return list;
  }

  // map<string, V>: each entry a message of key (1) and value (2).
  Result<json> Map(const pb::Message& m, const pb::FieldDescriptor* f,
                   const std::string& path) const {
    const pb::Reflection* r = m.GetReflection();
    const pb::FieldDescriptor* key = f->message_type()->map_key();
    const pb::FieldDescriptor* value = f->message_type()->map_value();
    json map = json::object();
    for (int i = 0; i < r->FieldSize(m, f); ++i) {
      const pb::Message& entry = r->GetRepeatedMessage(m, f, i);
      const json k = Scalar(entry, key, -1);  // Kubernetes' maps have string keys
      const std::string name = k.is_string() ? k.get<std::string>() : k.dump();
      if (value->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
        map[name] = Scalar(entry, value, -1);
        continue;
      }
      BERTH_TRY_ASSIGN(v, Message(entry.GetReflection()->GetMessage(entry, value), path));
      map[name] = std::move(v);
    }
    return map;
  }

  // A scalar field (index -1) or one item of a repeated one.
  static json Scalar(const pb::Message& m, const pb::FieldDescriptor* f, int index) {
    const pb::Reflection* r = m.GetReflection();
    const bool rep = index >= 0;
    switch (f->cpp_type()) {
      case pb::FieldDescriptor::CPPTYPE_INT32:
        return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
      case pb::FieldDescriptor::CPPTYPE_INT64:
        return rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f);
      case pb::FieldDescriptor::CPPTYPE_UINT32:
        return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
      case pb::FieldDescriptor::CPPTYPE_UINT64:
        return rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f);
      case pb::FieldDescriptor::CPPTYPE_DOUBLE:
        return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
      case pb::FieldDescriptor::CPPTYPE_FLOAT:
        return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
      case pb::FieldDescriptor::CPPTYPE_BOOL:
        return rep ? r->GetRepeatedBool(m, f, index) : r->GetBool(m, f);
      case pb::FieldDescriptor::CPPTYPE_STRING: {
        std::string s = rep ? r->GetRepeatedString(m, f, index) : r->GetString(m, f);
        if (f->type() == pb::FieldDescriptor::TYPE_BYTES) return Base64(s);  // Go's []byte
        return ValidUtf8(std::move(s));
      }
      default:  // enums: the Kubernetes API has none
        return rep ? r->GetRepeatedEnumValue(m, f, index) : r->GetEnumValue(m, f);
    }
  }

  static bool IsZero(const json& v) {
    if (v.is_string()) return v.get_ref<const std::string&>().empty();
    if (v.is_boolean()) return !v.get<bool>();
    if (v.is_number()) return v == 0;
    return false;
  }

  Result<json> Special(const pb::Message& m, const std::string& where) const;

  const ProtobufSchema& schema_;
};

// The field of a special message by number, read from its descriptor.
int64_t IntField(const pb::Message& m, int number) {
  const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByNumber(number);
  if (!f) return 0;
  const pb::Reflection* r = m.GetReflection();
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_INT32:
      return r->GetInt32(m, f);
    case pb::FieldDescriptor::CPPTYPE_INT64:
      return r->GetInt64(m, f);
    default:
      return 0;
  }
}
std::string StringField(const pb::Message& m, int number) {
  const pb::FieldDescriptor* f = m.GetDescriptor()->FindFieldByNumber(number);
  if (!f || f->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) return "";
  return m.GetReflection()->GetString(m, f);
}

Result<json> Converter::Special(const pb::Message& m, const std::string& where) const {
  const pb::Descriptor* d = m.GetDescriptor();
  if (d == schema_.quantity) {  // string = 1; Go writes a zero Quantity as "0"
    std::string s = ValidUtf8(StringField(m, 1));
    return json(s.empty() ? "0" : s);
  }
  if (d == schema_.int_or_string) {  // type = 1 (0 int, 1 string), intVal = 2, strVal = 3
    if (IntField(m, 1) == 1) return json(ValidUtf8(StringField(m, 3)));
    return json(static_cast<int32_t>(IntField(m, 2)));
  }
  if (d == schema_.time || d == schema_.micro_time) {  // seconds = 1, nanos = 2
    const int64_t seconds = IntField(m, 1), nanos = IntField(m, 2);
    if (seconds == 0 && (nanos == 0 || d == schema_.time)) return json();  // zero: absent
    if (seconds < kMinSeconds || seconds > kMaxSeconds) return Malformed(where + " (a time)");
    if (d == schema_.time) return json(FormatTimestamp(seconds));
    if (nanos < 0 || nanos > 999999999) return Malformed(where + " (a time)");
    std::string t = FormatTimestamp(seconds);  // ...Z
    t.pop_back();
    return json(fmt::format("{}.{:06d}Z", t, nanos / 1000));
  }
  if (d == schema_.duration) return json(FormatGoDuration(IntField(m, 1)));
  // FieldsV1 (Raw = 1) and RawExtension (raw = 1): JSON text carried as bytes.
  const pb::FieldDescriptor* raw = d->FindFieldByNumber(1);
  const std::string text = raw ? m.GetReflection()->GetString(m, raw) : "";
  if (text.empty()) return json();
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Malformed(where + " (raw JSON that does not parse)");
  return parsed;
}

// Go's strconv of v / 10^prec with the fraction's trailing zeros dropped ("1.5", "2").
std::string Fraction(uint64_t v, int prec) {
  std::string digits;
  bool significant = false;
  for (int i = 0; i < prec; ++i) {
    const char c = static_cast<char>('0' + v % 10);
    significant = significant || c != '0';
    if (significant) digits.insert(digits.begin(), c);
    v /= 10;
  }
  return std::to_string(v) + (digits.empty() ? "" : "." + digits);
}

}  // namespace

std::string FormatGoDuration(int64_t nanos) {
  if (nanos == 0) return "0s";
  const std::string sign = nanos < 0 ? "-" : "";
  const uint64_t u = nanos < 0 ? 0 - static_cast<uint64_t>(nanos) : static_cast<uint64_t>(nanos);
  if (u < 1000) return sign + std::to_string(u) + "ns";
  if (u < 1000000) return sign + Fraction(u, 3) + "µs";
  if (u < 1000000000) return sign + Fraction(u, 6) + "ms";
  const uint64_t seconds = u / 1000000000;
  std::string out = Fraction(seconds % 60 * 1000000000 + u % 1000000000, 9) + "s";
  if (seconds >= 60) out = std::to_string(seconds / 60 % 60) + "m" + out;
  if (seconds >= 3600) out = std::to_string(seconds / 3600) + "h" + out;
  return sign + out;
}

Result<json> DecodeProtobufObject(std::string_view body) {
  static constexpr std::string_view kMagic("k8s\0", 4);
  if (body.substr(0, 4) != kMagic) return Malformed("missing the k8s protobuf envelope");
  if (body.size() > static_cast<size_t>(INT_MAX)) return Malformed("over 2 GiB");
  const ProtobufSchema& schema = ProtobufSchema::Get();
  body.remove_prefix(4);
  pb::Arena arena;  // one allocation for the messages of a body
  pb::Message* envelope = schema.New(schema.unknown, &arena);
  if (!envelope->ParsePartialFromArray(body.data(), static_cast<int>(body.size())))
    return Malformed("envelope");
  // runtime.Unknown: typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2.
  const pb::Reflection* r = envelope->GetReflection();
  const pb::Message& type_meta = r->GetMessage(*envelope, schema.unknown->FindFieldByNumber(1));
  const std::string api_version = ValidUtf8(StringField(type_meta, 1));
  const std::string kind = ValidUtf8(StringField(type_meta, 2));
  const std::string raw = StringField(*envelope, 2);
  const pb::Descriptor* message = schema.MessageOfKind(api_version, kind);
  if (!message) {
    return Error{fmt::format("the body of the request was in an unknown format - protobuf is "
                             "accepted for a limited set of kinds, not {} {}; send "
                             "application/json",
                             api_version, kind),
                 ErrorCode::kUnsupportedMediaType};
  }
  pb::Message* obj = schema.New(message, &arena);
  if (!obj->ParsePartialFromArray(raw.data(), static_cast<int>(raw.size()))) return Malformed(kind);
  BERTH_TRY_ASSIGN(out, Converter(schema).Message(*obj, kind));
  out["apiVersion"] = api_version;
  out["kind"] = kind;
  return out;
}

}  // namespace berth::apiserver
