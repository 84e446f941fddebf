// The builtin function tables (internal): CEL's standard functions with cel-go's string
// extensions, and the Kubernetes libraries (lists, regex, sets, quantity, semver).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cel/eval.h"

namespace berth::cel {

std::span<const Builtin> StandardBuiltins();
std::span<const Builtin> StringBuiltins();
std::span<const Builtin> KubernetesBuiltins();
std::span<const Builtin> OptionalBuiltins();

// Helpers shared by the tables.
inline Value CostExceeded() { return Value::Error(std::string(kCostLimitExceeded)); }
Value TypeError(std::string_view function, const Value* args, size_t n);
// Decodes UTF-8 into code points; false on invalid input.
bool DecodeUtf8(std::string_view s, std::vector<char32_t>& out);
std::string EncodeUtf8(const char32_t* cps, size_t n);

}  // namespace berth::cel
