#include "cel/parser.h"

#include <gtest/gtest.h>

#include <iterator>
#include <random>
#include <string>

#include "cel/dra.h"

namespace berth::cel {
namespace {

std::string ParseError(std::string_view src, const ParseLimits& limits = {}) {
  auto r = Parse(src, limits);
  return r.ok() ? "" : r.error().message;
}

TEST(CelParser, SyntaxErrorsCarryLineColumnAndCaret) {
  EXPECT_EQ(ParseError("?!"),
            "ERROR: <input>:1:1: Syntax error: mismatched input token expecting an expression\n"
            " | ?!\n"
            " | ^");
  std::string err = ParseError("a &&\n  b +");
  EXPECT_NE(err.find("<input>:2:6:"), std::string::npos) << err;
  EXPECT_NE(err.find(" |   b +\n | .....^"), std::string::npos) << err;
}

TEST(CelParser, PrecedenceBindsMemberTighterThanUnary) {
  auto e = Parse("!a.b || c && d == 1 + 2 * 3");
  ASSERT_TRUE(e.ok());
  const Expr& root = **e;
  ASSERT_EQ(root.kind, ExprKind::kOr);
  EXPECT_EQ(root.args[0]->kind, ExprKind::kNot);
  EXPECT_EQ(root.args[0]->args[0]->kind, ExprKind::kSelect);
  const Expr& conj = *root.args[1];
  ASSERT_EQ(conj.kind, ExprKind::kAnd);
  const Expr& eq = *conj.args[1];
  ASSERT_EQ(eq.op, BinOp::kEq);
  const Expr& sum = *eq.args[1];
  ASSERT_EQ(sum.op, BinOp::kAdd);
  EXPECT_EQ(sum.args[1]->op, BinOp::kMul);
}

TEST(CelParser, LogicalChainsAreFlat) {
  std::string src = "a";
  for (int i = 0; i < 2000; ++i) src += " || a";
  auto e = Parse(src);
  ASSERT_TRUE(e.ok()) << e.error().message;
  EXPECT_EQ((*e)->args.size(), 2001u);
}

TEST(CelParser, NestingBeyondTheLimitIsRejected) {
  std::string deep(300, '(');
  deep += "1";
  deep += std::string(300, ')');
  EXPECT_NE(ParseError(deep).find("recursion limit exceeded"), std::string::npos);
  std::string chain = "1";
  for (int i = 0; i < 300; ++i) chain += " + 1";
  EXPECT_NE(ParseError(chain).find("recursion limit exceeded"), std::string::npos);
  std::string unary(400, '!');
  EXPECT_NE(ParseError(unary + "true").find("recursion limit exceeded"), std::string::npos);
}

TEST(CelParser, LengthAndNodeLimits) {
  ParseLimits limits;
  limits.max_length = 10;
  EXPECT_NE(ParseError("1 + 2 + 3 + 4", limits).find("exceeds the limit of 10"), std::string::npos);
  limits = ParseLimits{};
  limits.max_nodes = 5;
  EXPECT_NE(ParseError("[1, 2, 3, 4, 5, 6]", limits).find("too many nodes"), std::string::npos);
}

TEST(CelParser, MacrosBecomeMacroNodes) {
  auto e = Parse("l.map(x, x > 1, x * 2)");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->kind, ExprKind::kMacro);
  EXPECT_EQ((*e)->macro, MacroKind::kMap);
  EXPECT_EQ((*e)->name, "x");
  EXPECT_EQ((*e)->args.size(), 3u);
  auto has = Parse("has(a.b)");
  ASSERT_TRUE(has.ok());
  EXPECT_EQ((*has)->kind, ExprKind::kPresence);
  EXPECT_NE(ParseError("has(a)").find("invalid argument to has() macro"), std::string::npos);
  EXPECT_NE(ParseError("l.all(1, true)").find("argument is not an identifier"), std::string::npos);
}

TEST(CelParser, Literals) {
  auto e = Parse("-9223372036854775808");
  ASSERT_TRUE(e.ok());
  EXPECT_EQ((*e)->value.int_value(), INT64_MIN);
  EXPECT_NE(ParseError("9223372036854775808").find("invalid int literal"), std::string::npos);
  auto s = Parse(R"('''a
b\x41\u00e9''')");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ((*s)->value.str(), "a\nbA\xc3\xa9");
  auto raw = Parse(R"(r'\n')");
  ASSERT_TRUE(raw.ok());
  EXPECT_EQ((*raw)->value.str(), "\\n");
  auto bytes = Parse(R"(b'\xff\377')");
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ((*bytes)->value.str(), "\xff\xff");
  EXPECT_NE(ParseError(R"("\q")").find("invalid escape"), std::string::npos);
  EXPECT_NE(ParseError("'abc").find("unterminated string"), std::string::npos);
  EXPECT_NE(ParseError("'a\nb'").find("newline in string"), std::string::npos);
}

TEST(CelParser, ReservedWordsAreNotIdentifiers) {
  EXPECT_NE(ParseError("while").find("reserved identifier: while"), std::string::npos);
  EXPECT_TRUE(Parse("a.while()").ok());
}

// Random token soup, deterministic: every input either compiles or fails with a positioned
// error, and every compiled one evaluates to a bool or an error.
TEST(CelParser, RandomInputsCompileOrFailCleanly) {
  static const char* kPieces[] = {"device",
                                  ".",
                                  "attributes",
                                  "capacity",
                                  "driver",
                                  "[",
                                  "]",
                                  "(",
                                  ")",
                                  "{",
                                  "}",
                                  ",",
                                  ":",
                                  "'a'",
                                  "\"dra.example.com\"",
                                  "1",
                                  "2u",
                                  "3.5",
                                  "-",
                                  "!",
                                  "+",
                                  "*",
                                  "/",
                                  "%",
                                  "==",
                                  "<",
                                  ">=",
                                  "&&",
                                  "||",
                                  "?",
                                  "in",
                                  "size",
                                  "all",
                                  "exists",
                                  "map",
                                  "x",
                                  "has",
                                  "quantity",
                                  "semver",
                                  "'1.2.3'",
                                  "isGreaterThan",
                                  "matches",
                                  "'a*'",
                                  "true",
                                  "null",
                                  " ",
                                  "b'\\x00'",
                                  "r'\\'",
                                  "'''",
                                  "`",
                                  "cel",
                                  "bind",
                                  "\\",
                                  "\n"};
  std::mt19937 rng(12345);
  auto dev = dra::PreparedDevice::Prepare(
      {"dra.example.com", {{"a", std::string("x")}}, {{"c", Quantity::Parse("1").value()}}});
  ASSERT_TRUE(dev.ok());
  int compiled = 0;
  for (int i = 0; i < 5000; ++i) {
    std::string src;
    int n = 1 + static_cast<int>(rng() % (i % 2 ? 6 : 24));
    for (int k = 0; k < n; ++k) src += kPieces[rng() % std::size(kPieces)];
    auto sel = dra::Selector::Compile(src);
    if (!sel.ok()) {
      const std::string& m = sel.error().message;
      EXPECT_TRUE(m.starts_with("compilation failed: ERROR: <input>:") ||
                  m.starts_with("must evaluate to"))
          << src << " -> " << m;
      continue;
    }
    ++compiled;
    auto r = sel->Matches(*dev);
    EXPECT_TRUE(r.ok() || !r.error().message.empty()) << src;
  }
  EXPECT_GT(compiled, 10);  // the soup is not all syntax errors
}

}  // namespace
}  // namespace berth::cel
