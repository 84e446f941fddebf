// Regular expressions for matches(), find() and findAll().
//
// CEL specifies RE2 syntax and semantics, and Berth evaluates patterns with RE2 itself: matching
// takes time linear in the subject whatever the pattern, so a hostile selector cannot stall a
// scheduling cycle, and the constructs RE2 refuses (back-references, look-arounds) are refused
// here with RE2's message.
#pragma once

#include <re2/re2.h>

#include <memory>
#include <string_view>

#include "berth/api/result.h"

namespace berth::cel {

// Compiles (or returns the cached compilation of) an RE2 pattern. Thread-safe; the result may be
// shared by any number of threads.
Result<std::shared_ptr<const re2::RE2>> CompileRegex(std::string_view pattern);

}  // namespace berth::cel
