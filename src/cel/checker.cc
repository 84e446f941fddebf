// The checker: resolves names, infers static types and estimates the worst-case cost.
#include <algorithm>
#include <limits>

#include "cel/eval.h"
#include "cel/program.h"

namespace berth::cel {

std::string_view TypeName(Type t) {
  switch (t) {
    case Type::kDyn:
      return "dyn";
    case Type::kNull:
      return "null_type";
    case Type::kBool:
      return "bool";
    case Type::kInt:
      return "int";
    case Type::kUint:
      return "uint";
    case Type::kDouble:
      return "double";
    case Type::kString:
      return "string";
    case Type::kBytes:
      return "bytes";
    case Type::kList:
      return "list";
    case Type::kMap:
      return "map";
    case Type::kType:
      return "type";
    case Type::kQuantity:
      return "kubernetes.Quantity";
    case Type::kSemver:
      return "kubernetes.Semver";
  }
  return "dyn";
}

std::string StaticTypeName(const StaticType& t) {
  switch (t.shape) {
    case Shape::kDevice:
      return "kubernetes.DRADevice";
    case Shape::kAttributeMap:
      return "map(string, map(string, dyn))";
    case Shape::kAttributeIds:
      return "map(string, dyn)";
    case Shape::kCapacityMap:
      return "map(string, map(string, kubernetes.Quantity))";
    case Shape::kCapacityIds:
      return "map(string, kubernetes.Quantity)";
    case Shape::kNone:
      break;
  }
  if (t.type == Type::kList) return "list(dyn)";
  if (t.type == Type::kMap) return "map(dyn, dyn)";
  return std::string(TypeName(t.type));
}

namespace {

// Size bounds of the DRA API (resource.k8s.io/v1): attributes and capacities per device,
// attribute value and name lengths. They bound comprehensions over device maps.
constexpr uint64_t kMaxMapEntries = 32;
constexpr uint64_t kMaxStringSize = 64;
constexpr uint64_t kUnbounded = std::numeric_limits<uint64_t>::max();

uint64_t Add(uint64_t a, uint64_t b) { return a > kUnbounded - b ? kUnbounded : a + b; }
uint64_t Mul(uint64_t a, uint64_t b) {
  if (a == 0 || b == 0) return 0;
  return a > kUnbounded / b ? kUnbounded : a * b;
}

Type TypeOfKind(Kind k) {
  switch (k) {
    case Kind::kNull:
      return Type::kNull;
    case Kind::kBool:
      return Type::kBool;
    case Kind::kInt:
      return Type::kInt;
    case Kind::kUint:
      return Type::kUint;
    case Kind::kDouble:
      return Type::kDouble;
    case Kind::kString:
      return Type::kString;
    case Kind::kBytes:
      return Type::kBytes;
    case Kind::kList:
      return Type::kList;
    case Kind::kMap:
      return Type::kMap;
    case Kind::kType:
      return Type::kType;
    case Kind::kQuantity:
      return Type::kQuantity;
    case Kind::kSemver:
      return Type::kSemver;
    case Kind::kError:
    case Kind::kOptional:
      return Type::kDyn;
  }
  return Type::kDyn;
}

bool IsTypeName(std::string_view name, Kind& kind) {
  static const std::pair<std::string_view, Kind> kTypes[] = {{"int", Kind::kInt},
                                                             {"uint", Kind::kUint},
                                                             {"double", Kind::kDouble},
                                                             {"bool", Kind::kBool},
                                                             {"string", Kind::kString},
                                                             {"bytes", Kind::kBytes},
                                                             {"list", Kind::kList},
                                                             {"map", Kind::kMap},
                                                             {"null_type", Kind::kNull},
                                                             {"type", Kind::kType},
                                                             {"optional_type", Kind::kOptional}};
  for (const auto& [n, k] : kTypes) {
    if (n == name) {
      kind = k;
      return true;
    }
  }
  return false;
}

// Whether comparing values of this static type may cost in proportion to their size.
bool Traverses(Type t) { return t == Type::kString || t == Type::kBytes || t == Type::kDyn; }

struct Info {
  StaticType type;
  uint64_t cost = 0;  // worst-case cost
  uint64_t size = 1;  // worst-case size (string length, list or map entries)
};

struct CheckFailure {
  uint32_t pos;
  std::string message;
};

class Checker {
 public:
  Checker(std::span<const VariableDecl> vars, const CompileOptions& options)
      : vars_(vars), options_(options) {}

  Info Check(Expr& e) {
    switch (e.kind) {
      case ExprKind::kConst:
        return Const(e);
      case ExprKind::kIdent:
        return Ident(e);
      case ExprKind::kSelect:
      case ExprKind::kPresence:
        return Select(e);
      case ExprKind::kIndex:
        return Index(e);
      case ExprKind::kCall:
        return CallExpr(e);
      case ExprKind::kList:
      case ExprKind::kMap: {
        Info out{{e.kind == ExprKind::kList ? Type::kList : Type::kMap, Shape::kNone}, 0, 0};
        for (auto& a : e.args) out.cost = Add(out.cost, Check(*a).cost);
        out.size = e.kind == ExprKind::kList ? e.args.size() : e.args.size() / 2;
        return Set(e, out);
      }
      case ExprKind::kAnd:
      case ExprKind::kOr:
      case ExprKind::kNot: {
        Info out{{Type::kBool, Shape::kNone}, 0, 1};
        for (auto& a : e.args) out.cost = Add(out.cost, Check(*a).cost);
        return Set(e, out);
      }
      case ExprKind::kNeg: {
        Info in = Check(*e.args[0]);
        Type t =
            in.type.type == Type::kInt || in.type.type == Type::kDouble ? in.type.type : Type::kDyn;
        return Set(e, Info{{t, Shape::kNone}, Add(in.cost, 1), 1});
      }
      case ExprKind::kCond: {
        Info c = Check(*e.args[0]), a = Check(*e.args[1]), b = Check(*e.args[2]);
        StaticType t =
            a.type.type == b.type.type && a.type.shape == b.type.shape ? a.type : StaticType{};
        return Set(e, Info{t, Add(c.cost, std::max(a.cost, b.cost)), std::max(a.size, b.size)});
      }
      case ExprKind::kBinary:
        return Binary(e);
      case ExprKind::kMacro:
        return Macro(e);
      case ExprKind::kOptionalEntry: {
        Info inner = Check(*e.args[0]);
        return Set(e, Info{StaticType{}, inner.cost, inner.size});
      }
      case ExprKind::kSlot:
      case ExprKind::kVariable:
        break;
    }
    return Info{};
  }

  int slots() const { return next_slot_; }

 private:
  [[noreturn]] void Fail(uint32_t pos, std::string msg) { throw CheckFailure{pos, std::move(msg)}; }

  Info Set(Expr& e, Info info) {
    e.type = info.type.type;
    return info;
  }

  Info Const(Expr& e) {
    Info out{{TypeOfKind(e.value.kind()), Shape::kNone}, 0, 1};
    if (e.value.kind() == Kind::kString || e.value.kind() == Kind::kBytes)
      out.size = e.value.str().size();
    return Set(e, out);
  }

  Info Ident(Expr& e) {
    for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it) {
      if (it->name == e.name) {
        e.kind = ExprKind::kSlot;
        e.slot = it->slot;
        return Set(e, Info{it->type, 1, it->size});
      }
    }
    for (size_t i = 0; i < vars_.size(); ++i) {
      if (vars_[i].name == e.name) {
        e.kind = ExprKind::kVariable;
        e.slot = static_cast<int>(i);
        return Set(e, Info{vars_[i].type, 1, kMaxMapEntries});
      }
    }
    Kind k;
    if (IsTypeName(e.name, k)) {
      e.kind = ExprKind::kConst;
      e.value = Value::Type(k);
      return Set(e, Info{{Type::kType, Shape::kNone}, 0, 1});
    }
    Fail(e.pos, "undeclared reference to '" + e.name + "' (in container '')");
  }

  // The type of an entry of a map-shaped value.
  static Info Member(const Info& operand) {
    switch (operand.type.shape) {
      case Shape::kAttributeMap:
        return Info{{Type::kMap, Shape::kAttributeIds}, 0, kMaxMapEntries};
      case Shape::kCapacityMap:
        return Info{{Type::kMap, Shape::kCapacityIds}, 0, kMaxMapEntries};
      case Shape::kCapacityIds:
        return Info{{Type::kQuantity, Shape::kNone}, 0, 1};
      case Shape::kAttributeIds:
        return Info{{Type::kDyn, Shape::kNone}, 0, kMaxStringSize};
      default:
        return Info{{Type::kDyn, Shape::kNone}, 0, kMaxStringSize};
    }
  }

  Info DeviceField(const Expr& e) {
    if (e.name == "driver") return Info{{Type::kString, Shape::kNone}, 0, kMaxStringSize};
    if (e.name == "attributes") return Info{{Type::kMap, Shape::kAttributeMap}, 0, kMaxMapEntries};
    if (e.name == "capacity") return Info{{Type::kMap, Shape::kCapacityMap}, 0, kMaxMapEntries};
    if (e.name == "allowMultipleAllocations" && options_.allow_multiple_allocations_field) {
      return Info{{Type::kBool, Shape::kNone}, 0, 1};
    }
    Fail(e.pos, "undefined field '" + e.name + "'");
  }

  Info Select(Expr& e) {
    Info operand = Check(*e.args[0]);
    Info out;
    if (operand.type.shape == Shape::kDevice) {
      out = DeviceField(e);
    } else if (operand.type.type == Type::kMap || operand.type.type == Type::kDyn) {
      out = Member(operand);
    } else {
      Fail(e.pos, "type '" + StaticTypeName(operand.type) + "' does not support field selection");
    }
    out.cost = Add(operand.cost, 1);
    if (e.kind == ExprKind::kPresence) out = Info{{Type::kBool, Shape::kNone}, out.cost, 1};
    if (e.optional) out.type = StaticType{};  // an optional of the member
    return Set(e, out);
  }

  Info Index(Expr& e) {
    Info operand = Check(*e.args[0]);
    Info key = Check(*e.args[1]);
    Info out = operand.type.type == Type::kList ? Info{} : Member(operand);
    if (operand.type.shape == Shape::kDevice)
      Fail(e.pos, "type 'kubernetes.DRADevice' does not support indexing");
    out.cost = Add(Add(operand.cost, key.cost), 1);
    if (e.optional) out.type = StaticType{};
    return Set(e, out);
  }

  Info CallExpr(Expr& e) {
    // Namespaced functions (sets.contains) parse as receiver calls on an identifier.
    if (e.receiver && e.args[0]->kind == ExprKind::kIdent && !Declared(e.args[0]->name)) {
      std::string qualified = e.args[0]->name + "." + e.name;
      if (BuiltinNameExists(qualified, false)) {
        e.name = qualified;
        e.receiver = false;
        e.args.erase(e.args.begin());
      }
    }
    Info out{{Type::kDyn, Shape::kNone}, 1, kMaxStringSize};
    std::vector<Info> args;
    for (auto& a : e.args) {
      args.push_back(Check(*a));
      out.cost = Add(out.cost, args.back().cost);
    }
    if (e.args.size() > 4) Fail(e.pos, "too many arguments to '" + e.name + "'");
    e.fn = FindBuiltin(e.name, e.receiver, e.args.size());
    if (e.fn == nullptr) {
      if (!BuiltinNameExists(e.name, e.receiver)) {
        Fail(e.pos, "undeclared reference to '" + e.name + "' (in container '')");
      }
      std::string sig;
      for (size_t i = 0; i < args.size(); ++i)
        sig += (i ? ", " : "") + StaticTypeName(args[i].type);
      Fail(e.pos, "found no matching overload for '" + e.name + "' applied to '(" + sig + ")'");
    }
    out.type.type = e.fn->result;
    FoldConstructor(e);
    // Functions that traverse their string or list input cost in proportion to its size.
    uint64_t input = 0;
    for (const Info& a : args) input = std::max(input, a.size);
    out.cost = Add(out.cost, (input + 9) / 10);
    // Producing a string or list costs in proportion to its size (bounded by the input's here:
    // the DRA functions that build strings and lists do not grow them beyond that).
    if (e.fn->result == Type::kString || e.fn->result == Type::kList ||
        e.fn->result == Type::kDyn) {
      out.size = input;
      out.cost = Add(out.cost, input);
    }
    return Set(e, out);
  }

  // quantity("40Gi") and semver("1.2.3") with a literal argument are parsed once here rather
  // than at every evaluation (invalid literals keep failing at evaluation, as upstream).
  static void FoldConstructor(Expr& e) {
    if (e.name != "quantity" && e.name != "semver") return;
    for (const auto& a : e.args) {
      if (a->kind != ExprKind::kConst) return;
    }
    Value argv[2];
    for (size_t i = 0; i < e.args.size(); ++i) argv[i] = e.args[i]->value;
    EvalContext ctx;
    Value v = e.fn->fn(argv, e.args.size(), ctx);
    if (v.IsError()) return;
    e.kind = ExprKind::kConst;
    e.value = std::move(v);
    e.args.clear();
  }

  Info Binary(Expr& e) {
    Info a = Check(*e.args[0]), b = Check(*e.args[1]);
    Info out{{Type::kBool, Shape::kNone}, Add(Add(a.cost, b.cost), 1), 1};
    switch (e.op) {
      case BinOp::kAdd:
      case BinOp::kSub:
      case BinOp::kMul:
      case BinOp::kDiv:
      case BinOp::kMod: {
        Type x = a.type.type, y = b.type.type;
        if (x != Type::kDyn && y != Type::kDyn && x != y) {
          Fail(e.pos, "found no matching overload for '" + std::string(kOpNames[int(e.op)]) +
                          "' applied to '(" + StaticTypeName(a.type) + ", " +
                          StaticTypeName(b.type) + ")'");
        }
        out.type = StaticType{x == y ? x : Type::kDyn, Shape::kNone};
        out.size = Add(a.size, b.size);
        if (e.op == BinOp::kAdd) out.cost = Add(out.cost, out.size);
        break;
      }
      case BinOp::kIn:
        out.cost = Add(out.cost, b.size);
        break;
      default:
        if (Traverses(a.type.type) || Traverses(b.type.type)) {
          out.cost = Add(out.cost, (std::min(a.size, b.size) + 9) / 10);
        }
        break;
    }
    return Set(e, out);
  }

  Info Macro(Expr& e) {
    Info range = Check(*e.args[0]);
    int slot = next_slot_++;
    e.slot = slot;
    Info var{{Type::kDyn, Shape::kNone}, 0, kMaxStringSize};
    if (e.macro == MacroKind::kBind) {
      var = range;
    } else if (range.type.shape == Shape::kAttributeMap ||
               range.type.shape == Shape::kCapacityMap ||
               range.type.shape == Shape::kAttributeIds ||
               range.type.shape == Shape::kCapacityIds) {
      var = Info{{Type::kString, Shape::kNone}, 0, kMaxStringSize};  // map keys are names
    }
    scopes_.push_back(Scope{e.name, slot, var.type, var.size});
    if (!e.name2.empty()) {
      // Two variables: the index (lists) or key (maps), then the value.
      e.slot2 = next_slot_++;
      if (range.type.type == Type::kList)
        scopes_.back().type = StaticType{Type::kInt, Shape::kNone};
      Info value = Member(range);
      scopes_.push_back(Scope{e.name2, e.slot2, value.type, value.size});
    }
    uint64_t body = 0;
    for (size_t i = 1; i < e.args.size(); ++i) body = Add(body, Check(*e.args[i]).cost);
    scopes_.resize(scopes_.size() - (e.name2.empty() ? 1 : 2));
    if (e.macro == MacroKind::kBind) {
      Info out = Info{
          e.args[1]->type == Type::kDyn ? StaticType{} : StaticType{e.args[1]->type, Shape::kNone},
          Add(range.cost, body), 1};
      return Set(e, out);
    }
    if (e.macro == MacroKind::kOptMap || e.macro == MacroKind::kOptFlatMap) {
      return Set(e, Info{StaticType{}, Add(range.cost, body), kMaxStringSize});
    }
    uint64_t iterations = range.size;
    Info out{{Type::kBool, Shape::kNone}, Add(range.cost, Mul(iterations, Add(body, 1))), 1};
    if (e.macro == MacroKind::kMap || e.macro == MacroKind::kFilter ||
        e.macro == MacroKind::kTransformList) {
      out.type = StaticType{Type::kList, Shape::kNone};
      out.size = iterations;
    } else if (e.macro == MacroKind::kTransformMap || e.macro == MacroKind::kTransformMapEntry) {
      out.type = StaticType{Type::kMap, Shape::kNone};
      out.size = iterations;
    }
    return Set(e, out);
  }

  bool Declared(const std::string& name) const {
    for (const auto& s : scopes_) {
      if (s.name == name) return true;
    }
    for (const auto& v : vars_) {
      if (v.name == name) return true;
    }
    return false;
  }

  static constexpr std::string_view kOpNames[] = {"_+_",  "_-_", "_*_",  "_/_", "_%_",  "_==_",
                                                  "_!=_", "_<_", "_<=_", "_>_", "_>=_", "@in"};
  struct Scope {
    std::string name;
    int slot;
    StaticType type;
    uint64_t size;
  };
  std::span<const VariableDecl> vars_;
  const CompileOptions& options_;
  std::vector<Scope> scopes_;
  int next_slot_ = 0;
};

}  // namespace

Result<CheckResult> Check(Expr& root, std::string_view source, std::span<const VariableDecl> vars,
                          const CompileOptions& options) {
  Checker checker(vars, options);
  try {
    Info info = checker.Check(root);
    return CheckResult{info.type, checker.slots(), info.cost};
  } catch (const CheckFailure& f) {
    return Error{FormatError(source, f.pos, f.message), ErrorCode::kInvalid};
  }
}

}  // namespace berth::cel
