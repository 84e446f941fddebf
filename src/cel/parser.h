// Lexer and recursive-descent parser for the CEL grammar (cel-spec doc/langdef.md), with the
// standard macros expanded into macro nodes. Limits keep hostile input from exhausting the stack
// or memory: expression length, nesting depth and node count.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "berth/api/result.h"
#include "cel/ast.h"

namespace berth::cel {

struct ParseLimits {
  size_t max_length = 100'000;  // code units of the source text
  int max_depth = 250;          // nesting of the syntax tree (cel-go's default recursion limit)
  size_t max_nodes = 100'000;
};

// Parses `source`. Errors read "ERROR: <input>:LINE:COL: Syntax error: ..." followed by the
// offending line and a caret, as cel-go prints them.
Result<std::unique_ptr<Expr>> Parse(std::string_view source, const ParseLimits& limits = {});

// "ERROR: <input>:L:C: <message>\n | <line>\n | ..^" for a byte offset into source.
std::string FormatError(std::string_view source, uint32_t pos, std::string_view message);

}  // namespace berth::cel
