// Regular expressions for matches(), find() and findAll().
//
// CEL specifies RE2 syntax. Berth evaluates patterns with std::regex (ECMAScript grammar), which
// agrees with RE2 on the constructs selectors use (literals, classes, anchors, repetition,
// alternation, groups, \d \w \s). Differences: a leading (?i) is honoured but other inline flags
// and RE2's \pL / [[:alpha:]] Unicode classes, \z, \Q..\E and (?P<name>...) are not supported
// (the pattern fails to compile, which is an evaluation error); ECMAScript back-references and
// look-arounds, which RE2 rejects, are rejected here too. Matching is by bytes, not code points.
// Because std::regex backtracks (and recurses per character), patterns that repeat a group
// which itself repeats or alternates ((a+)+, (a|b)*) are refused, and subjects are limited to
// kMaxRegexSubject bytes; device attribute values are at most 64.
#pragma once

#include <memory>
#include <regex>
#include <string_view>

#include "berth/api/result.h"

namespace berth::cel {

inline constexpr size_t kMaxRegexSubject = 4096;

// Compiles (or returns the cached compilation of) an RE2-syntax pattern.
Result<std::shared_ptr<const std::regex>> CompileRegex(std::string_view pattern);

}  // namespace berth::cel
