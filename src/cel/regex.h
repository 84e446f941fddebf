// Regular expressions for matches(), find() and findAll().
//
// CEL specifies RE2 syntax. Berth evaluates patterns with std::regex (ECMAScript grammar), which
// agrees with RE2 on the constructs selectors use (literals, classes, anchors, repetition,
// alternation, groups, \d \w \s). Differences: a leading (?i) is honoured but other inline flags
// and RE2's \pL / [[:alpha:]] Unicode classes, \z, \Q..\E and (?P<name>...) are not supported
// (the pattern fails to compile, which is an evaluation error); ECMAScript back-references and
// look-arounds, which RE2 rejects, are rejected here too. Matching is by bytes, not code points.
#pragma once

#include <memory>
#include <regex>
#include <string_view>

#include "berth/api/result.h"

namespace berth::cel {

// Compiles (or returns the cached compilation of) an RE2-syntax pattern.
Result<std::shared_ptr<const std::regex>> CompileRegex(std::string_view pattern);

}  // namespace berth::cel
