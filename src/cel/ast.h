// The abstract syntax tree of a CEL expression, as the parser builds it and the checker then
// annotates (resolved variables, functions and static types).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cel/value.h"

namespace berth::cel {

struct Builtin;

enum class ExprKind : uint8_t {
  kConst,          // value
  kIdent,          // name; after checking: a type constant, the device variable or a loop variable
  kSlot,           // a macro's loop or bound variable (slot)
  kVariable,       // the environment's variable number `slot`
  kSelect,         // args[0].name
  kPresence,       // has(args[0].name)
  kIndex,          // args[0][args[1]]
  kCall,           // name(args...) or, when receiver, args[0].name(args[1]...)
  kList,           // [args...]
  kMap,            // {args[0]: args[1], ...}
  kAnd,            // args[0] && args[1] && ... (flattened)
  kOr,             // args[0] || args[1] || ... (flattened)
  kNot,            // !args[0]
  kNeg,            // -args[0]
  kCond,           // args[0] ? args[1] : args[2]
  kBinary,         // args[0] op args[1]
  kMacro,          // macro over args (see MacroKind)
  kOptionalEntry,  // ?args[0] as a list element or map value: included when it has a value
};

enum class BinOp : uint8_t { kAdd, kSub, kMul, kDiv, kMod, kEq, kNe, kLt, kLe, kGt, kGe, kIn };

// Comprehension macros. args: all/exists/exists_one/filter: [range, predicate];
// map: [range, transform] or [range, filter, transform]; cel.bind: [init, body]. The
// two-variable forms (cel-go's ext.TwoVarComprehensions: all(i, v, p), transformList(i, v, t),
// transformMap(k, v, f, t), ...) bind the index or key to `slot` and the value to `slot2`.
enum class MacroKind : uint8_t {
  kAll,
  kExists,
  kExistsOne,
  kMap,
  kFilter,
  kBind,
  kTransformList,
  kTransformMap,
  kTransformMapEntry,
  kOptMap,      // opt.optMap(v, t): [optional, transform]
  kOptFlatMap,  // opt.optFlatMap(v, t)
};

// Static types the checker tracks. kDyn is the unknown type ("dyn"): anything goes at runtime.
enum class Type : uint8_t {
  kDyn,
  kNull,
  kBool,
  kInt,
  kUint,
  kDouble,
  kString,
  kBytes,
  kList,
  kMap,
  kType,
  kQuantity,
  kSemver,
};
std::string_view TypeName(Type t);

struct Expr {
  ExprKind kind = ExprKind::kConst;
  BinOp op = BinOp::kAdd;
  MacroKind macro = MacroKind::kAll;
  bool receiver = false;
  bool optional = false;  // .?field and [?key]
  Type type = Type::kDyn;
  uint32_t pos = 0;  // byte offset of the expression in the source
  int slot = -1;
  int slot2 = -1;  // second variable of a two-variable macro
  std::string name;
  std::string name2;
  Value value;  // constant; for kSelect and kPresence the field name as a string value
  const Builtin* fn = nullptr;
  std::vector<std::unique_ptr<Expr>> args;
};

}  // namespace berth::cel
