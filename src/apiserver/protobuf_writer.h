// A minimal writer of Kubernetes' protobuf encoding, for the bodies the decoder's tests,
// benchmark and fuzzer send: fields by number (varint, length-delimited, nested message, map
// entry) and the "k8s\0" envelope with its type meta. Header-only; not used by the server.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace berth::apiserver::protobuf_writer {

inline std::string Varint(uint64_t v) {
  std::string out;
  do {
    const auto b = static_cast<uint8_t>(v & 0x7f);
    v >>= 7;
    out.push_back(static_cast<char>(b | (v ? 0x80 : 0)));
  } while (v);
  return out;
}
// A field's key: its number and wire type (0 varint, 2 length-delimited).
inline std::string Tag(int num, int wire_type) {
  return Varint((static_cast<uint64_t>(num) << 3) | static_cast<uint64_t>(wire_type));
}
inline std::string Str(int num, std::string_view s) {
  return Tag(num, 2) + Varint(s.size()) + std::string(s);
}
inline std::string Int(int num, int64_t v) {
  return Tag(num, 0) + Varint(static_cast<uint64_t>(v));
}
inline std::string Msg(int num, std::string_view body) { return Str(num, body); }
// An entry of a map<string, string> field.
inline std::string Entry(int num, std::string_view k, std::string_view v) {
  return Msg(num, Str(1, k) + Str(2, v));
}
// runtime.Unknown after the magic: typeMeta{apiVersion, kind} and the raw object.
inline std::string Envelope(std::string_view api_version, std::string_view kind,
                            std::string_view raw) {
  return std::string("k8s\0", 4) + Msg(1, Str(1, api_version) + Str(2, kind)) + Str(2, raw);
}

}  // namespace berth::apiserver::protobuf_writer
