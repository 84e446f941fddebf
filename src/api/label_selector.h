// Label selector requirements: their matching (shared by CompiledSelector, node selector terms
// and the API server's `labelSelector=` filters) and the query-string form's parser, with
// kube-apiserver's labels.Parse grammar and error messages.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"

namespace berth::labels {

// `=` and `==` are kIn with one value, `!=` is kNotIn with one value.
enum class Op : uint8_t { kIn, kNotIn, kExists, kDoesNotExist, kGt, kLt };

struct Requirement {
  std::string key;
  Op op = Op::kExists;
  std::vector<std::string> values;  // sorted, without duplicates
};

// strconv.ParseInt(s, 10, 64): optional sign, decimal digits, no spaces.
bool ParseInt64(std::string_view s, int64_t& out);

// True if a label whose value is `value` (null: the label is absent) satisfies `op` over
// `values`, as labels.Requirement.Matches decides. With `sorted`, `values` is sorted and
// searched by bisection. Inline: selectors are matched in the scheduler's inner loops.
inline bool Matches(Op op, std::span<const std::string> values, const std::string* value,
                    bool sorted) {
  auto in = [&] {
    if (value == nullptr) return false;
    return sorted ? std::binary_search(values.begin(), values.end(), *value)
                  : std::find(values.begin(), values.end(), *value) != values.end();
  };
  switch (op) {
    case Op::kIn:
      return in();
    case Op::kNotIn:
      return !in();
    case Op::kExists:
      return value != nullptr;
    case Op::kDoesNotExist:
      return value == nullptr;
    case Op::kGt:
    case Op::kLt: {
      int64_t have = 0, bound = 0;
      if (value == nullptr || values.size() != 1 || !ParseInt64(*value, have) ||
          !ParseInt64(values[0], bound)) {
        return false;
      }
      return op == Op::kGt ? have > bound : have < bound;
    }
  }
  return false;
}

// Parses a selector in its query-string form (`app in (web,db),!canary,tier>2`) as
// labels.Parse does: requirements sorted by key; "" is no requirement. Errors are kBadRequest,
// worded as kube-apiserver words them ("unable to parse requirement: ...").
Result<std::vector<Requirement>> ParseSelectorText(std::string_view text);

}  // namespace berth::labels
