#include "cel/eval.h"

#include <cmath>
#include <limits>
#include <optional>

namespace berth::cel {
namespace {

Value Cancelled() { return Value::Error(std::string(kCostLimitExceeded)); }

std::string_view OpName(BinOp op) {
  switch (op) {
    case BinOp::kAdd:
      return "_+_";
    case BinOp::kSub:
      return "_-_";
    case BinOp::kMul:
      return "_*_";
    case BinOp::kDiv:
      return "_/_";
    case BinOp::kMod:
      return "_%_";
    case BinOp::kEq:
      return "_==_";
    case BinOp::kNe:
      return "_!=_";
    case BinOp::kLt:
      return "_<_";
    case BinOp::kLe:
      return "_<=_";
    case BinOp::kGt:
      return "_>_";
    case BinOp::kGe:
      return "_>=_";
    case BinOp::kIn:
      return "@in";
  }
  return "?";
}

Value Overflow() { return Value::Error("integer overflow"); }

Value IntArith(BinOp op, int64_t x, int64_t y) {
  int64_t r;
  switch (op) {
    case BinOp::kAdd:
      if (__builtin_add_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case BinOp::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case BinOp::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return Overflow();
      return Value::Int(r);
    case BinOp::kDiv:
      if (y == 0) return Value::Error("division by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return Overflow();
      return Value::Int(x / y);
    case BinOp::kMod:
      if (y == 0) return Value::Error("modulus by zero");
      if (x == std::numeric_limits<int64_t>::min() && y == -1) return Overflow();
      return Value::Int(x % y);
    default:
      return NoSuchOverload(OpName(op));
  }
}

Value UintArith(BinOp op, uint64_t x, uint64_t y) {
  uint64_t r;
  switch (op) {
    case BinOp::kAdd:
      if (__builtin_add_overflow(x, y, &r)) return Overflow();
      return Value::Uint(r);
    case BinOp::kSub:
      if (__builtin_sub_overflow(x, y, &r)) return Overflow();
      return Value::Uint(r);
    case BinOp::kMul:
      if (__builtin_mul_overflow(x, y, &r)) return Overflow();
      return Value::Uint(r);
    case BinOp::kDiv:
      if (y == 0) return Value::Error("division by zero");
      return Value::Uint(x / y);
    case BinOp::kMod:
      if (y == 0) return Value::Error("modulus by zero");
      return Value::Uint(x % y);
    default:
      return NoSuchOverload(OpName(op));
  }
}

}  // namespace

Value Arithmetic(BinOp op, const Value& a, const Value& b) {
  if (a.IsError()) return a;
  if (b.IsError()) return b;
  if (a.kind() != b.kind()) return NoSuchOverload(OpName(op));
  switch (a.kind()) {
    case Kind::kInt:
      return IntArith(op, a.int_value(), b.int_value());
    case Kind::kUint:
      return UintArith(op, a.uint_value(), b.uint_value());
    case Kind::kDouble: {
      double x = a.double_value(), y = b.double_value();
      switch (op) {
        case BinOp::kAdd:
          return Value::Double(x + y);
        case BinOp::kSub:
          return Value::Double(x - y);
        case BinOp::kMul:
          return Value::Double(x * y);
        case BinOp::kDiv:
          return Value::Double(x / y);
        default:
          return NoSuchOverload(OpName(op));
      }
    }
    case Kind::kString:
    case Kind::kBytes:
      if (op != BinOp::kAdd) return NoSuchOverload(OpName(op));
      return a.kind() == Kind::kString ? Value::String(a.str() + b.str())
                                       : Value::Bytes(a.str() + b.str());
    case Kind::kList: {
      if (op != BinOp::kAdd) return NoSuchOverload(OpName(op));
      if (b.list().empty()) return a;
      if (a.list().empty()) return b;
      List out = a.list();
      out.insert(out.end(), b.list().begin(), b.list().end());
      return Value::MakeList(std::move(out));
    }
    default:
      return NoSuchOverload(OpName(op));
  }
}

Value Relation(BinOp op, const Value& a, const Value& b) {
  if (a.IsError()) return a;
  if (b.IsError()) return b;
  if (op == BinOp::kEq) return Value::Bool(Equal(a, b));
  if (op == BinOp::kNe) return Value::Bool(!Equal(a, b));
  int c = Compare(a, b);
  if (c == 3) return NoSuchOverload(OpName(op));
  if (c == 2) return Value::Bool(false);  // NaN is unordered
  switch (op) {
    case BinOp::kLt:
      return Value::Bool(c < 0);
    case BinOp::kLe:
      return Value::Bool(c <= 0);
    case BinOp::kGt:
      return Value::Bool(c > 0);
    case BinOp::kGe:
      return Value::Bool(c >= 0);
    default:
      return NoSuchOverload(OpName(op));
  }
}

Value In(const Value& element, const Value& container) {
  if (element.IsError()) return element;
  if (container.IsError()) return container;
  if (container.kind() == Kind::kList) {
    for (const Value& v : container.list()) {
      if (Equal(element, v)) return Value::Bool(true);
    }
    return Value::Bool(false);
  }
  if (container.kind() == Kind::kMap) {
    return Value::Bool(container.map().Find(element) != nullptr);
  }
  return NoSuchOverload("@in");
}

namespace {

uint64_t SizeOf(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
    case Kind::kBytes:
      return v.str().size();
    case Kind::kList:
      return v.list().size();
    default:
      return 0;
  }
}

// Cost of producing a new string, bytes, list or map: the limit on cost is then also a limit on
// the memory an expression can build (cel.bind chains of concatenations double sizes).
uint64_t ResultCost(const Value& v) {
  switch (v.kind()) {
    case Kind::kString:
    case Kind::kBytes:
      return TraversalCost(v.str().size());
    case Kind::kList:
      return v.list().size();
    case Kind::kMap:
      return v.map().entries.size();
    default:
      return 0;
  }
}

Value SelectField(const Value& operand, const Value& field) {
  if (operand.kind() != Kind::kMap) {
    return Value::Error("type '" + std::string(KindName(operand.kind())) +
                        "' does not support field selection");
  }
  const Map& m = operand.map();
  if (const Value* v = m.Find(field)) return *v;
  if (m.missing) return *m.missing;
  return NoSuchKey(field);
}

Value IndexValue(const Value& operand, const Value& key) {
  if (operand.IsError()) return operand;
  if (key.IsError()) return key;
  if (operand.kind() == Kind::kMap) {
    if (key.kind() == Kind::kDouble || key.kind() == Kind::kInt || key.kind() == Kind::kUint ||
        key.kind() == Kind::kString || key.kind() == Kind::kBool) {
      return SelectField(operand, key);
    }
    return Value::Error("unsupported key type");
  }
  if (operand.kind() != Kind::kList) return NoSuchOverload("_[_]");
  int64_t i;
  switch (key.kind()) {
    case Kind::kInt:
      i = key.int_value();
      break;
    case Kind::kUint:
      i = key.uint_value() > uint64_t(INT64_MAX) ? -1 : int64_t(key.uint_value());
      break;
    case Kind::kDouble: {
      double d = key.double_value();
      if (d != std::trunc(d) || d < -9.2e18 || d > 9.2e18) {
        return Value::Error("unsupported index value");
      }
      i = static_cast<int64_t>(d);
      break;
    }
    default:
      return NoSuchOverload("_[_]");
  }
  const List& l = operand.list();
  if (i < 0 || static_cast<uint64_t>(i) >= l.size()) {
    return Value::Error("index out of bounds: " + std::to_string(i));
  }
  return l[i];
}

// && and ||: CEL's commutative semantics. The first operand that decides the result (false for
// &&, true for ||) wins even over errors in other operands; otherwise the first error, if any,
// is the result.
Value Logical(const Expr& e, EvalContext& ctx, bool is_and) {
  Value err;
  bool have_err = false;
  for (const auto& arg : e.args) {
    Value v = Evaluate(*arg, ctx);
    if (v.kind() == Kind::kBool) {
      if (v.bool_value() != is_and) return v;
    } else if (!have_err) {
      have_err = true;
      err = v.IsError() ? v : NoSuchOverload(is_and ? "_&&_" : "_||_");
    }
    if (ctx.cancelled) return Cancelled();
  }
  return have_err ? err : Value::Bool(is_and);
}

Value Call(const Expr& e, EvalContext& ctx) {
  Value argv[4];
  size_t n = e.args.size();
  for (size_t i = 0; i < n; ++i) {
    argv[i] = Evaluate(*e.args[i], ctx);
    if (argv[i].IsError()) return argv[i];
  }
  if (!ctx.Charge(1)) return Cancelled();
  Value result = e.fn->fn(argv, n, ctx);
  if (!ctx.Charge(ResultCost(result))) return Cancelled();
  return result;
}

// Field selection, has() and indexing, with optional chaining: on an optional operand, or with
// .? / [?], a missing entry is optional.none() instead of an error and a present one is wrapped.
Value Access(const Expr& e, EvalContext& ctx) {
  Value operand = Evaluate(*e.args[0], ctx);
  Value index;  // the evaluated key of an index; selections use the field name in place
  if (e.kind == ExprKind::kIndex) index = Evaluate(*e.args[1], ctx);
  const Value& key = e.kind == ExprKind::kIndex ? index : e.value;
  if (operand.IsError()) return operand;
  if (key.IsError()) return key;
  if (!ctx.Charge(1)) return Cancelled();
  bool optional = e.optional;
  if (operand.kind() == Kind::kOptional) {
    if (!operand.has_optional_value()) {
      return e.kind == ExprKind::kPresence ? Value::Bool(false) : operand;
    }
    optional = true;
    Value inner = operand.optional_value();
    operand = std::move(inner);
  }
  if (e.kind == ExprKind::kPresence) {
    if (operand.kind() != Kind::kMap) return NoSuchOverload("has");
    return Value::Bool(operand.map().Find(key) != nullptr);
  }
  if (!optional) {
    return e.kind == ExprKind::kSelect ? SelectField(operand, key) : IndexValue(operand, key);
  }
  if (operand.kind() == Kind::kMap) {
    const Value* v = operand.map().Find(key);
    if (v == nullptr && operand.map().missing) v = operand.map().missing.get();
    return Value::Optional(v);
  }
  if (operand.kind() == Kind::kList && e.kind == ExprKind::kIndex) {
    Value v = IndexValue(operand, key);
    if (v.IsError()) return Value::Optional(nullptr);
    return Value::Optional(&v);
  }
  return e.kind == ExprKind::kSelect ? SelectField(operand, key) : IndexValue(operand, key);
}

// A `?x` entry: its value when present; nullopt when none; an error when x is not optional.
std::optional<Value> Entry(const Expr& e, EvalContext& ctx, Value& err) {
  Value v = Evaluate(e.kind == ExprKind::kOptionalEntry ? *e.args[0] : e, ctx);
  if (e.kind != ExprKind::kOptionalEntry || v.IsError()) {
    if (v.IsError()) err = v;
    return v;
  }
  if (v.kind() != Kind::kOptional) {
    err = NoSuchOverload("optional entry");
    return err;
  }
  if (!v.has_optional_value()) return std::nullopt;
  return v.optional_value();
}

Value BuildList(const Expr& e, EvalContext& ctx) {
  List items;
  items.reserve(e.args.size());
  Value err;
  for (const auto& a : e.args) {
    std::optional<Value> v = Entry(*a, ctx, err);
    if (err.IsError()) return err;
    if (v) items.push_back(std::move(*v));
  }
  return Value::MakeList(std::move(items));
}

Value BuildMap(const Expr& e, EvalContext& ctx) {
  auto m = std::make_shared<Map>();
  m->entries.reserve(e.args.size() / 2);
  for (size_t i = 0; i + 1 < e.args.size(); i += 2) {
    Value k = Evaluate(*e.args[i], ctx);
    if (k.IsError()) return k;
    Kind kk = k.kind();
    if (kk != Kind::kString && kk != Kind::kInt && kk != Kind::kUint && kk != Kind::kBool) {
      return Value::Error("unsupported key type: " + std::string(KindName(kk)));
    }
    Value err;
    std::optional<Value> v = Entry(*e.args[i + 1], ctx, err);
    if (err.IsError()) return err;
    if (!v) continue;
    if (m->Find(k) != nullptr) return Value::Error("Failed with repeated key: " + DebugString(k));
    m->entries.emplace_back(std::move(k), std::move(*v));
  }
  return Value::MakeMap(std::move(m));
}

Value NotIterable(const Value& range) {
  std::string k(KindName(range.kind()));
  if (!k.empty()) k[0] = static_cast<char>(std::toupper(k[0]));
  return Value::Error("got 'types." + k + "', expected iterable type");
}

// Binds the loop variables for step i: the element (lists) or key (maps); with two variables,
// the index or key and then the value.
void BindStep(const Expr& e, const Value& range, size_t i, EvalContext& ctx) {
  bool list = range.kind() == Kind::kList;
  if (e.slot2 < 0) {
    ctx.slots[e.slot] = list ? range.list()[i] : range.map().entries[i].first;
    return;
  }
  ctx.slots[e.slot] = list ? Value::Int(static_cast<int64_t>(i)) : range.map().entries[i].first;
  ctx.slots[e.slot2] = list ? range.list()[i] : range.map().entries[i].second;
}

// Accumulates the results of a comprehension's steps.
struct Accumulator {
  Value err;
  bool have_err = false;
  int64_t count = 0;
  List list;
  std::shared_ptr<Map> map;
};

// Applies the outcome v of step i; returns a value when the comprehension is decided.
std::optional<Value> Step(const Expr& e, Value v, Accumulator& acc, EvalContext& ctx) {
  auto not_bool = [&](std::string_view fn) { return v.IsError() ? v : NoSuchOverload(fn); };
  switch (e.macro) {
    case MacroKind::kAll:
    case MacroKind::kExists: {
      bool decisive = e.macro == MacroKind::kExists;
      if (v.kind() == Kind::kBool) {
        if (v.bool_value() == decisive) return v;
      } else if (!acc.have_err) {
        acc.have_err = true;
        acc.err = not_bool(decisive ? "_||_" : "_&&_");
      }
      return std::nullopt;
    }
    case MacroKind::kExistsOne:
      if (v.kind() != Kind::kBool) return not_bool("exists_one");
      acc.count += v.bool_value();
      return std::nullopt;
    case MacroKind::kFilter:
      if (v.kind() != Kind::kBool) return not_bool("filter");
      if (v.bool_value()) acc.list.push_back(ctx.slots[e.slot]);
      return std::nullopt;
    default:
      break;
  }
  // map and the transforms: an optional filter, then the transform.
  if (e.args.size() == 3) {
    if (v.kind() != Kind::kBool) return not_bool("filter");
    if (!v.bool_value()) return std::nullopt;
    v = Evaluate(*e.args[2], ctx);
  }
  if (v.IsError()) return v;
  if (e.macro == MacroKind::kTransformMap) {
    if (!acc.map) acc.map = std::make_shared<Map>();
    acc.map->entries.emplace_back(ctx.slots[e.slot], std::move(v));
  } else if (e.macro == MacroKind::kTransformMapEntry) {
    if (v.kind() != Kind::kMap) return NoSuchOverload("transformMapEntry");
    if (!acc.map) acc.map = std::make_shared<Map>();
    for (const auto& [k, val] : v.map().entries) {
      if (acc.map->Find(k))
        return Value::Error("insert failed: key " + DebugString(k) + " already exists");
      acc.map->entries.emplace_back(k, val);
    }
  } else {
    acc.list.push_back(std::move(v));
  }
  return std::nullopt;
}

// opt.optMap(v, t) is optional.of(t) with v bound to the value, and none for none;
// optFlatMap's t is itself optional.
Value OptMap(const Expr& e, EvalContext& ctx) {
  Value opt = Evaluate(*e.args[0], ctx);
  if (opt.IsError()) return opt;
  if (opt.kind() != Kind::kOptional)
    return NoSuchOverload(e.macro == MacroKind::kOptMap ? "optMap" : "optFlatMap");
  if (!opt.has_optional_value()) return opt;
  ctx.slots[e.slot] = opt.optional_value();
  Value v = Evaluate(*e.args[1], ctx);
  if (v.IsError() || e.macro == MacroKind::kOptFlatMap) {
    if (!v.IsError() && v.kind() != Kind::kOptional) return NoSuchOverload("optFlatMap");
    return v;
  }
  return Value::Optional(&v);
}

Value Comprehension(const Expr& e, EvalContext& ctx) {
  if (e.macro == MacroKind::kBind) {
    ctx.slots[e.slot] = Evaluate(*e.args[0], ctx);
    return Evaluate(*e.args[1], ctx);
  }
  if (e.macro == MacroKind::kOptMap || e.macro == MacroKind::kOptFlatMap) return OptMap(e, ctx);
  Value range = Evaluate(*e.args[0], ctx);
  if (range.IsError()) return range;
  if (range.kind() != Kind::kList && range.kind() != Kind::kMap) return NotIterable(range);
  size_t n = range.kind() == Kind::kList ? range.list().size() : range.map().entries.size();
  Accumulator acc;
  for (size_t i = 0; i < n; ++i) {
    if (!ctx.Charge(1)) return Cancelled();
    BindStep(e, range, i, ctx);
    Value v = Evaluate(*e.args[1], ctx);
    if (ctx.cancelled) return Cancelled();
    if (auto decided = Step(e, std::move(v), acc, ctx)) return *decided;
    if (ctx.cancelled) return Cancelled();
  }
  switch (e.macro) {
    case MacroKind::kAll:
    case MacroKind::kExists:
      return acc.have_err ? acc.err : Value::Bool(e.macro == MacroKind::kAll);
    case MacroKind::kExistsOne:
      return Value::Bool(acc.count == 1);
    case MacroKind::kTransformMap:
    case MacroKind::kTransformMapEntry:
      return Value::MakeMap(acc.map ? acc.map : std::make_shared<Map>());
    default:
      return Value::MakeList(std::move(acc.list));
  }
}

Value Negate(const Value& v) {
  switch (v.kind()) {
    case Kind::kError:
      return v;
    case Kind::kInt:
      if (v.int_value() == std::numeric_limits<int64_t>::min()) return Overflow();
      return Value::Int(-v.int_value());
    case Kind::kDouble:
      return Value::Double(-v.double_value());
    default:
      return NoSuchOverload("-_");
  }
}

Value EvalBinary(const Expr& e, EvalContext& ctx) {
  Value a = Evaluate(*e.args[0], ctx);
  Value b = Evaluate(*e.args[1], ctx);
  uint64_t cost = 1;
  // String and bytes comparisons traverse their input.
  if ((a.kind() == Kind::kString || a.kind() == Kind::kBytes) && e.op != BinOp::kAdd) {
    cost += TraversalCost(std::min(SizeOf(a), SizeOf(b)));
  }
  if (e.op == BinOp::kIn && b.kind() == Kind::kList) cost += b.list().size();
  if (!ctx.Charge(cost)) return Cancelled();
  switch (e.op) {
    case BinOp::kAdd:
    case BinOp::kSub:
    case BinOp::kMul:
    case BinOp::kDiv:
    case BinOp::kMod: {
      Value r = Arithmetic(e.op, a, b);
      if (e.op == BinOp::kAdd && !ctx.Charge(ResultCost(r))) return Cancelled();
      return r;
    }
    case BinOp::kIn:
      return In(a, b);
    default:
      return Relation(e.op, a, b);
  }
}

}  // namespace

Value Evaluate(const Expr& e, EvalContext& ctx) {
  if (ctx.cancelled) return Cancelled();
  switch (e.kind) {
    case ExprKind::kConst:
      return e.value;
    case ExprKind::kSlot:
      if (!ctx.Charge(1)) return Cancelled();
      return ctx.slots[e.slot];
    case ExprKind::kVariable:
      if (!ctx.Charge(1)) return Cancelled();
      return ctx.vars[e.slot];
    case ExprKind::kIdent:
      return Value::Error("undeclared reference to '" + e.name + "'");
    case ExprKind::kSelect:
    case ExprKind::kPresence:
    case ExprKind::kIndex:
      return Access(e, ctx);
    case ExprKind::kOptionalEntry:
      return Evaluate(*e.args[0], ctx);
    case ExprKind::kCall:
      return Call(e, ctx);
    case ExprKind::kList:
      return BuildList(e, ctx);
    case ExprKind::kMap:
      return BuildMap(e, ctx);
    case ExprKind::kAnd:
      return Logical(e, ctx, true);
    case ExprKind::kOr:
      return Logical(e, ctx, false);
    case ExprKind::kNot: {
      Value v = Evaluate(*e.args[0], ctx);
      if (v.kind() == Kind::kBool) return Value::Bool(!v.bool_value());
      return v.IsError() ? v : NoSuchOverload("!_");
    }
    case ExprKind::kNeg:
      return Negate(Evaluate(*e.args[0], ctx));
    case ExprKind::kCond: {
      Value c = Evaluate(*e.args[0], ctx);
      if (c.kind() != Kind::kBool) return c.IsError() ? c : NoSuchOverload("_?_:_");
      return Evaluate(*e.args[c.bool_value() ? 1 : 2], ctx);
    }
    case ExprKind::kBinary:
      return EvalBinary(e, ctx);
    case ExprKind::kMacro:
      return Comprehension(e, ctx);
  }
  return Value::Error("unknown expression");
}

}  // namespace berth::cel
