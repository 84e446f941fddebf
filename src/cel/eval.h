// The tree-walking evaluator and the builtin function table it calls.
#pragma once

#include <cstdint>
#include <string_view>

#include "cel/ast.h"
#include "cel/value.h"

namespace berth::cel {

// State of one evaluation: the environment's variables, the macro variable slots and the cost
// spent so far. When the cost passes the limit the evaluation is cancelled: every later step
// answers the cancellation error and the program's result is that error, whatever logical
// operators would have made of it.
struct EvalContext {
  const Value* vars = nullptr;
  Value* slots = nullptr;
  uint64_t cost = 0;
  uint64_t limit = UINT64_MAX;
  bool cancelled = false;

  // Adds to the cost; false once over the limit.
  bool Charge(uint64_t units) {
    cost += units;
    if (cost > limit) cancelled = true;
    return !cancelled;
  }
};

// The error text of a cancelled evaluation (cel-go's, which Kubernetes users see).
inline constexpr std::string_view kCostLimitExceeded =
    "operation cancelled: actual cost limit exceeded";

Value Evaluate(const Expr& e, EvalContext& ctx);

// Operators, shared with constant folding and tests.
Value Arithmetic(BinOp op, const Value& a, const Value& b);
Value Relation(BinOp op, const Value& a, const Value& b);
Value In(const Value& element, const Value& container);

// A builtin function: args holds the receiver first for receiver-style calls. Errors among the
// arguments are handled before the call (every builtin is strict).
using BuiltinFn = Value (*)(const Value* args, size_t n, EvalContext& ctx);

struct Builtin {
  std::string_view name;
  bool receiver;
  uint8_t min_args;  // including the receiver
  uint8_t max_args;
  BuiltinFn fn;
  Type result;  // static result type; kDyn when it depends on the arguments
};

// The function called `name` with `nargs` arguments (receiver included), or nullptr.
const Builtin* FindBuiltin(std::string_view name, bool receiver, size_t nargs);
// Whether any function of that name exists (for "undeclared reference" vs. arity errors).
bool BuiltinNameExists(std::string_view name, bool receiver);

// Cost of reading a string or list argument of the given size: cel-go charges 0.1 per element
// (byte or item) of traversed input, rounded up.
inline uint64_t TraversalCost(size_t size) { return (size + 9) / 10; }

}  // namespace berth::cel
