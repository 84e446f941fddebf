#include "cel/program.h"

#include <array>
#include <vector>

#include "cel/eval.h"

namespace berth::cel {

Result<Program> Compile(std::string_view source, std::span<const VariableDecl> vars,
                        const CompileOptions& options) {
  auto parsed = Parse(source, options.parse);
  if (!parsed.ok()) return parsed.error();
  std::unique_ptr<Expr> root = std::move(parsed).value();
  auto checked = Check(*root, source, vars, options);
  if (!checked.ok()) return checked.error();
  Program p;
  p.root_ = std::move(root);
  p.source_ = std::make_shared<const std::string>(source);
  p.result_type_ = checked->type;
  p.slots_ = checked->slots;
  p.max_cost_ = checked->max_cost;
  p.cost_limit_ = options.cost_limit;
  return p;
}

Value Program::Evaluate(const Value* vars, uint64_t* cost) const {
  // Macro variables live on the stack for the common case of a few nested macros.
  constexpr int kInlineSlots = 8;
  std::array<Value, kInlineSlots> inline_slots;
  std::vector<Value> heap_slots;
  EvalContext ctx;
  ctx.vars = vars;
  if (slots_ <= kInlineSlots) {
    ctx.slots = inline_slots.data();
  } else {
    heap_slots.resize(slots_);
    ctx.slots = heap_slots.data();
  }
  if (cost_limit_ > 0) ctx.limit = cost_limit_;
  Value result = cel::Evaluate(*root_, ctx);
  if (cost) *cost = ctx.cost;
  if (ctx.cancelled) return Value::Error(std::string(kCostLimitExceeded));
  return result;
}

}  // namespace berth::cel
