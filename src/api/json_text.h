// Writing small JSON documents straight into a string, for the bodies a client sends many times
// a second (bindings, events, patches): no document tree is built and freed for each.
#pragma once

#include <string>
#include <string_view>

namespace berth {

// Appends `s` as a JSON string literal (quotes, backslashes and control characters escaped;
// other bytes, UTF-8 included, as they are).
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace berth
