// Writing small JSON documents straight into a string, for the bodies a client sends many times
// a second (bindings, events, patches): no document tree is built and freed for each.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>

namespace berth {

// Appends `s` as a JSON string literal, escaped as nlohmann::json::dump() escapes it (quotes,
// backslashes and control characters; other bytes, UTF-8 included, as they are).
void AppendJsonString(std::string_view s, std::string* out);

// Appends `value` as nlohmann::json::dump() writes it (compact, keys in order), in about half
// the time: strings are copied in runs rather than checked byte by byte as UTF-8. Where the
// text is not UTF-8 dump() throws and this copies the bytes as they are; the documents the API
// server stores were parsed from valid JSON, so it does not meet such text.
void AppendJson(const nlohmann::json& value, std::string* out);

}  // namespace berth
