#include "cel/parser.h"

#include <cerrno>
#include <cstdlib>
#include <set>

#include "cel/lexer.h"

namespace berth::cel {
namespace {

struct SyntaxError {
  uint32_t pos;
  std::string message;
};

const std::set<std::string_view>& ReservedWords() {
  static const std::set<std::string_view> words = {
      "as",  "break", "const",   "continue",  "else",   "for", "function", "if",   "import",
      "let", "loop",  "package", "namespace", "return", "var", "void",     "while"};
  return words;
}

std::string Describe(const Token& t) {
  switch (t.kind) {
    case Tok::kEnd:
      return "<EOF>";
    case Tok::kIdent:
    case Tok::kInt:
    case Tok::kUint:
    case Tok::kDouble:
      return "'" + t.text + "'";
    case Tok::kString:
      return "string literal";
    case Tok::kBytes:
      return "bytes literal";
    default:
      return "token";
  }
}

class Parser {
 public:
  Parser(std::string_view src, const ParseLimits& limits) : src_(src), lex_(src), limits_(limits) {
    Advance();
  }

  std::unique_ptr<Expr> ParseAll() {
    auto e = ParseExpr();
    if (tok_.kind != Tok::kEnd)
      Fail(tok_.pos, "mismatched input " + Describe(tok_) + " expecting <EOF>");
    return e;
  }

 private:
  [[noreturn]] void Fail(uint32_t pos, std::string msg) { throw SyntaxError{pos, std::move(msg)}; }

  void Advance() {
    tok_ = lex_.Next();
    if (tok_.kind == Tok::kError) Fail(tok_.pos, tok_.text);
  }
  bool Accept(Tok k) {
    if (tok_.kind != k) return false;
    Advance();
    return true;
  }
  void Expect(Tok k, std::string_view what) {
    if (!Accept(k))
      Fail(tok_.pos, "mismatched input " + Describe(tok_) + " expecting " + std::string(what));
  }

  std::unique_ptr<Expr> Node(ExprKind kind, uint32_t pos) {
    if (++nodes_ > limits_.max_nodes) Fail(pos, "expression has too many nodes");
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->pos = pos;
    return e;
  }

  // Depth of nested sub-expressions (parentheses, arguments, elements, unary chains).
  struct DepthGuard {
    Parser* p;
    DepthGuard(Parser* parser, uint32_t pos) : p(parser) {
      if (++p->depth_ > p->limits_.max_depth) {
        p->Fail(pos,
                "expression recursion limit exceeded: " + std::to_string(p->limits_.max_depth));
      }
    }
    ~DepthGuard() { --p->depth_; }
  };

  std::unique_ptr<Expr> ParseExpr() {
    DepthGuard guard(this, tok_.pos);
    auto cond = ParseLogical(Tok::kOr, ExprKind::kOr);
    if (tok_.kind != Tok::kQuestion) return cond;
    uint32_t pos = tok_.pos;
    Advance();
    auto yes = ParseLogical(Tok::kOr, ExprKind::kOr);
    Expect(Tok::kColon, "':'");
    auto no = ParseExpr();
    auto e = Node(ExprKind::kCond, pos);
    e->args.push_back(std::move(cond));
    e->args.push_back(std::move(yes));
    e->args.push_back(std::move(no));
    return e;
  }

  // || over && over relations; chains are flattened into one node so that long chains do not
  // nest (and later recurse) deeply.
  std::unique_ptr<Expr> ParseLogical(Tok op, ExprKind kind) {
    auto first = op == Tok::kOr ? ParseLogical(Tok::kAnd, ExprKind::kAnd) : ParseRelation();
    if (tok_.kind != op) return first;
    auto e = Node(kind, tok_.pos);
    e->args.push_back(std::move(first));
    while (tok_.kind == op) {
      Advance();
      e->args.push_back(op == Tok::kOr ? ParseLogical(Tok::kAnd, ExprKind::kAnd) : ParseRelation());
    }
    return e;
  }

  std::unique_ptr<Expr> Binary(BinOp op, uint32_t pos, std::unique_ptr<Expr> l,
                               std::unique_ptr<Expr> r) {
    auto e = Node(ExprKind::kBinary, pos);
    e->op = op;
    e->args.push_back(std::move(l));
    e->args.push_back(std::move(r));
    return e;
  }

  std::unique_ptr<Expr> ParseRelation() {
    auto left = ParseAddition();
    while (true) {
      BinOp op;
      switch (tok_.kind) {
        case Tok::kEq:
          op = BinOp::kEq;
          break;
        case Tok::kNe:
          op = BinOp::kNe;
          break;
        case Tok::kLt:
          op = BinOp::kLt;
          break;
        case Tok::kLe:
          op = BinOp::kLe;
          break;
        case Tok::kGt:
          op = BinOp::kGt;
          break;
        case Tok::kGe:
          op = BinOp::kGe;
          break;
        case Tok::kIdent:
          if (tok_.text != "in") return left;
          op = BinOp::kIn;
          break;
        default:
          return left;
      }
      uint32_t pos = tok_.pos;
      Advance();
      left = Binary(op, pos, std::move(left), ParseAddition());
    }
  }

  std::unique_ptr<Expr> ParseAddition() {
    auto left = ParseMultiplication();
    while (tok_.kind == Tok::kPlus || tok_.kind == Tok::kMinus) {
      BinOp op = tok_.kind == Tok::kPlus ? BinOp::kAdd : BinOp::kSub;
      uint32_t pos = tok_.pos;
      Advance();
      left = Binary(op, pos, std::move(left), ParseMultiplication());
    }
    return left;
  }

  std::unique_ptr<Expr> ParseMultiplication() {
    auto left = ParseUnary();
    while (tok_.kind == Tok::kStar || tok_.kind == Tok::kSlash || tok_.kind == Tok::kPercent) {
      BinOp op = tok_.kind == Tok::kStar    ? BinOp::kMul
                 : tok_.kind == Tok::kSlash ? BinOp::kDiv
                                            : BinOp::kMod;
      uint32_t pos = tok_.pos;
      Advance();
      left = Binary(op, pos, std::move(left), ParseUnary());
    }
    return left;
  }

  std::unique_ptr<Expr> ParseUnary() {
    DepthGuard guard(this, tok_.pos);
    if (tok_.kind == Tok::kNot) {
      auto e = Node(ExprKind::kNot, tok_.pos);
      Advance();
      e->args.push_back(ParseUnary());
      return e;
    }
    if (tok_.kind == Tok::kMinus) {
      uint32_t pos = tok_.pos;
      Advance();
      // -9223372036854775808 is a literal: fold the sign into an integer literal that follows
      // directly (and is not the operand of a member access, which binds tighter).
      if (tok_.kind == Tok::kInt || tok_.kind == Tok::kDouble) {
        Token lit = tok_;
        Advance();
        if (tok_.kind != Tok::kDot && tok_.kind != Tok::kLBracket) {
          auto e = Literal(lit, true);
          e->pos = pos;
          return ParseMemberSuffix(std::move(e));
        }
        auto operand = ParseMemberSuffix(Literal(lit, false));
        auto e = Node(ExprKind::kNeg, pos);
        e->args.push_back(std::move(operand));
        return e;
      }
      auto e = Node(ExprKind::kNeg, pos);
      e->args.push_back(ParseUnary());
      return e;
    }
    return ParseMemberSuffix(ParsePrimary());
  }

  std::unique_ptr<Expr> Literal(const Token& t, bool negate) {
    auto e = Node(ExprKind::kConst, t.pos);
    std::string text = (negate ? "-" : "") + t.text;
    errno = 0;
    char* end = nullptr;
    switch (t.kind) {
      case Tok::kInt: {
        bool hex = t.text.size() > 1 && (t.text[1] == 'x' || t.text[1] == 'X');
        long long v = std::strtoll(text.c_str(), &end, hex ? 16 : 10);
        if (errno == ERANGE || *end) Fail(t.pos, "invalid int literal");
        e->value = Value::Int(v);
        break;
      }
      case Tok::kUint: {
        bool hex = t.text.size() > 1 && (t.text[1] == 'x' || t.text[1] == 'X');
        unsigned long long v = std::strtoull(t.text.c_str(), &end, hex ? 16 : 10);
        if (errno == ERANGE || *end) Fail(t.pos, "invalid uint literal");
        e->value = Value::Uint(v);
        break;
      }
      case Tok::kDouble:
        e->value = Value::Double(std::strtod(text.c_str(), &end));
        break;
      case Tok::kString:
        e->value = Value::String(t.text);
        break;
      case Tok::kBytes:
        e->value = Value::Bytes(t.text);
        break;
      default:
        Fail(t.pos, "unexpected literal");
    }
    return e;
  }

  std::vector<std::unique_ptr<Expr>> ParseArgs(Tok close, std::string_view what) {
    std::vector<std::unique_ptr<Expr>> args;
    if (Accept(close)) return args;
    while (true) {
      args.push_back(ParseExpr());
      if (Accept(close)) return args;
      Expect(Tok::kComma, "',' or " + std::string(what));
      // A trailing comma is allowed in list and map literals only.
      if (close != Tok::kRParen && Accept(close)) return args;
    }
  }

  std::unique_ptr<Expr> ParsePrimary() {
    Token t = tok_;
    switch (t.kind) {
      case Tok::kInt:
      case Tok::kUint:
      case Tok::kDouble:
      case Tok::kString:
      case Tok::kBytes:
        Advance();
        return Literal(t, false);
      case Tok::kLParen: {
        Advance();
        auto e = ParseExpr();
        Expect(Tok::kRParen, "')'");
        return e;
      }
      case Tok::kLBracket: {
        Advance();
        auto e = Node(ExprKind::kList, t.pos);
        if (Accept(Tok::kRBracket)) return e;
        while (true) {
          e->args.push_back(OptionalEntry());
          if (Accept(Tok::kRBracket)) return e;
          Expect(Tok::kComma, "',' or ']'");
          if (Accept(Tok::kRBracket)) return e;
        }
      }
      case Tok::kLBrace:
        return ParseMapLiteral();
      case Tok::kDot:
        Advance();
        if (tok_.kind != Tok::kIdent)
          Fail(tok_.pos, "mismatched input " + Describe(tok_) + " expecting IDENTIFIER");
        return ParseIdentOrCall();
      case Tok::kIdent:
        return ParseIdentOrCall();
      default:
        Fail(t.pos, "mismatched input " + Describe(t) + " expecting an expression");
    }
  }

  // A list element, `?elem` marking one that is included only when it has a value.
  std::unique_ptr<Expr> OptionalEntry() {
    if (tok_.kind != Tok::kQuestion) return ParseExpr();
    Advance();
    return WrapOptional(ParseExpr());
  }

  std::unique_ptr<Expr> WrapOptional(std::unique_ptr<Expr> inner) {
    auto w = Node(ExprKind::kOptionalEntry, inner->pos);
    w->args.push_back(std::move(inner));
    return w;
  }

  std::unique_ptr<Expr> ParseMapLiteral() {
    auto e = Node(ExprKind::kMap, tok_.pos);
    Advance();
    if (Accept(Tok::kRBrace)) return e;
    while (true) {
      bool optional = tok_.kind == Tok::kQuestion;
      if (optional) Advance();
      e->args.push_back(ParseExpr());
      Expect(Tok::kColon, "':'");
      e->args.push_back(ParseExpr());
      if (optional) e->args.back() = WrapOptional(std::move(e->args.back()));
      if (Accept(Tok::kRBrace)) return e;
      Expect(Tok::kComma, "',' or '}'");
      if (Accept(Tok::kRBrace)) return e;
    }
  }

  std::unique_ptr<Expr> ParseIdentOrCall() {
    Token t = tok_;
    Advance();
    if (t.text == "true" || t.text == "false") {
      auto e = Node(ExprKind::kConst, t.pos);
      e->value = Value::Bool(t.text == "true");
      return e;
    }
    if (t.text == "null") return Node(ExprKind::kConst, t.pos);
    if (t.text == "in" || ReservedWords().count(t.text))
      Fail(t.pos, "reserved identifier: " + t.text);
    if (tok_.kind == Tok::kLParen) {
      Advance();
      auto e = Node(ExprKind::kCall, t.pos);
      e->name = t.text;
      e->args = ParseArgs(Tok::kRParen, "')'");
      if (e->name == "has") return HasMacro(std::move(e));
      return e;
    }
    if (tok_.kind == Tok::kLBrace) Fail(tok_.pos, "message construction is not supported");
    auto e = Node(ExprKind::kIdent, t.pos);
    e->name = t.text;
    return e;
  }

  std::unique_ptr<Expr> HasMacro(std::unique_ptr<Expr> call) {
    if (call->args.size() != 1 || call->args[0]->kind != ExprKind::kSelect) {
      Fail(call->pos, "invalid argument to has() macro");
    }
    auto sel = std::move(call->args[0]);
    sel->kind = ExprKind::kPresence;
    return sel;
  }

  std::unique_ptr<Expr> ParseMemberSuffix(std::unique_ptr<Expr> e) {
    while (true) {
      if (tok_.kind == Tok::kDot) {
        Advance();
        bool optional = Accept(Tok::kQuestion);
        if (tok_.kind != Tok::kIdent && tok_.kind != Tok::kQuotedIdent)
          Fail(tok_.pos, "mismatched input " + Describe(tok_) + " expecting IDENTIFIER");
        Token name = tok_;
        Advance();
        if (tok_.kind == Tok::kLParen && name.kind == Tok::kIdent && !optional) {
          Advance();
          auto call = Node(ExprKind::kCall, name.pos);
          call->name = name.text;
          call->receiver = true;
          call->args.push_back(std::move(e));
          for (auto& a : ParseArgs(Tok::kRParen, "')'")) call->args.push_back(std::move(a));
          e = ReceiverMacro(std::move(call));
        } else {
          auto sel = Node(ExprKind::kSelect, name.pos);
          sel->name = name.text;
          sel->optional = optional;
          sel->value = Value::String(name.text);
          sel->args.push_back(std::move(e));
          e = std::move(sel);
        }
      } else if (tok_.kind == Tok::kLBracket) {
        auto idx = Node(ExprKind::kIndex, tok_.pos);
        Advance();
        idx->optional = Accept(Tok::kQuestion);
        idx->args.push_back(std::move(e));
        idx->args.push_back(ParseExpr());
        Expect(Tok::kRBracket, "']'");
        e = std::move(idx);
      } else {
        return e;
      }
    }
  }

  // x.all(v, p), x.exists(v, p), x.exists_one(v, p), x.map(v, t), x.map(v, f, t),
  // x.filter(v, p), their two-variable forms (x.all(i, v, p), x.transformList(i, v, t), ...)
  // and cel.bind(v, init, body) become macro nodes; other calls stay calls.
  struct MacroForm {
    std::string_view name;
    MacroKind kind;
    uint8_t vars;
    uint8_t min_args, max_args;  // after the receiver, variables included
  };
  static const MacroForm* FindMacro(std::string_view name, size_t nargs) {
    static const MacroForm kForms[] = {
        {"all", MacroKind::kAll, 1, 2, 2},
        {"exists", MacroKind::kExists, 1, 2, 2},
        {"exists_one", MacroKind::kExistsOne, 1, 2, 2},
        {"existsOne", MacroKind::kExistsOne, 1, 2, 2},
        {"map", MacroKind::kMap, 1, 2, 3},
        {"filter", MacroKind::kFilter, 1, 2, 2},
        {"optMap", MacroKind::kOptMap, 1, 2, 2},
        {"optFlatMap", MacroKind::kOptFlatMap, 1, 2, 2},
        {"all", MacroKind::kAll, 2, 3, 3},
        {"exists", MacroKind::kExists, 2, 3, 3},
        {"exists_one", MacroKind::kExistsOne, 2, 3, 3},
        {"existsOne", MacroKind::kExistsOne, 2, 3, 3},
        {"transformList", MacroKind::kTransformList, 2, 3, 4},
        {"transformMap", MacroKind::kTransformMap, 2, 3, 4},
        {"transformMapEntry", MacroKind::kTransformMapEntry, 2, 3, 4},
    };
    for (const MacroForm& f : kForms) {
      if (f.name == name && nargs >= f.min_args && nargs <= f.max_args) return &f;
    }
    return nullptr;
  }

  std::unique_ptr<Expr> ReceiverMacro(std::unique_ptr<Expr> call) {
    size_t nargs = call->args.size() - 1;
    bool bind = call->name == "bind" && nargs == 3 && call->args[0]->kind == ExprKind::kIdent &&
                call->args[0]->name == "cel";
    MacroForm bind_form{"bind", MacroKind::kBind, 1, 3, 3};
    const MacroForm* form = bind ? &bind_form : FindMacro(call->name, nargs);
    if (form == nullptr) return call;
    for (size_t v = 1; v <= form->vars; ++v) {
      if (call->args[v]->kind != ExprKind::kIdent) {
        Fail(call->args[v]->pos, "argument is not an identifier");
      }
    }
    auto m = Node(ExprKind::kMacro, call->pos);
    m->macro = form->kind;
    m->name = call->args[1]->name;
    if (form->vars == 2) m->name2 = call->args[2]->name;
    if (bind) {
      m->args.push_back(std::move(call->args[2]));
      m->args.push_back(std::move(call->args[3]));
    } else {
      m->args.push_back(std::move(call->args[0]));
      for (size_t i = 1 + form->vars; i < call->args.size(); ++i) {
        m->args.push_back(std::move(call->args[i]));
      }
    }
    return m;
  }

  std::string_view src_;
  Lexer lex_;
  const ParseLimits& limits_;
  Token tok_;
  int depth_ = 0;
  size_t nodes_ = 0;
};

// Long left-associative chains (1 + 1 + ... + 1) do not nest in the parser but do in the tree;
// the evaluator and checker recurse over the tree, so its depth is bounded too.
bool WithinDepth(const Expr& e, int remaining) {
  if (remaining <= 0) return false;
  for (const auto& a : e.args) {
    if (!WithinDepth(*a, remaining - 1)) return false;
  }
  return true;
}

}  // namespace

std::string FormatError(std::string_view source, uint32_t pos, std::string_view message) {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < pos && i < source.size(); ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  size_t line_end = source.find('\n', line_start);
  if (line_end == std::string_view::npos) line_end = source.size();
  size_t col = pos - line_start;
  std::string out = "ERROR: <input>:" + std::to_string(line) + ":" + std::to_string(col + 1) +
                    ": " + std::string(message) + "\n | " +
                    std::string(source.substr(line_start, line_end - line_start)) + "\n | " +
                    std::string(col, '.') + "^";
  return out;
}

Result<std::unique_ptr<Expr>> Parse(std::string_view source, const ParseLimits& limits) {
  if (source.size() > limits.max_length) {
    return Error{"expression of " + std::to_string(source.size()) +
                     " characters exceeds the limit of " + std::to_string(limits.max_length),
                 ErrorCode::kInvalid};
  }
  try {
    Parser p(source, limits);
    auto e = p.ParseAll();
    if (!WithinDepth(*e, limits.max_depth)) {
      return Error{FormatError(source, 0,
                               "Syntax error: expression recursion limit exceeded: " +
                                   std::to_string(limits.max_depth)),
                   ErrorCode::kInvalid};
    }
    return e;
  } catch (const SyntaxError& err) {
    return Error{FormatError(source, err.pos, "Syntax error: " + err.message), ErrorCode::kInvalid};
  }
}

}  // namespace berth::cel
