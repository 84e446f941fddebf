#include "cel/eval.h"

#include <gtest/gtest.h>

#include <string>

#include "cel/program.h"

namespace berth::cel {
namespace {

Value Eval(std::string_view src, uint64_t cost_limit = 0, uint64_t* cost = nullptr) {
  CompileOptions opts;
  opts.cost_limit = cost_limit;
  auto p = Compile(src, {}, opts);
  if (!p.ok()) return Value::Error("compile: " + p.error().message);
  return p->Evaluate(nullptr, cost);
}

std::string ErrorOf(std::string_view src) {
  Value v = Eval(src);
  return v.IsError() ? v.error() : "no error: " + DebugString(v);
}

bool True(std::string_view src) {
  Value v = Eval(src);
  return v.kind() == Kind::kBool && v.bool_value();
}

TEST(CelEval, RuntimeErrorsAreValues) {
  EXPECT_EQ(ErrorOf("1 / 0"), "division by zero");
  EXPECT_EQ(ErrorOf("1 % 0"), "modulus by zero");
  EXPECT_EQ(ErrorOf("9223372036854775807 + 1"), "integer overflow");
  EXPECT_EQ(ErrorOf("-(-9223372036854775807 - 1)"), "integer overflow");
  EXPECT_EQ(ErrorOf("0u - 1u"), "integer overflow");
  EXPECT_EQ(ErrorOf("{'a': 1}.b"), "no such key: b");
  EXPECT_EQ(ErrorOf("{'a': 1}['b']"), "no such key: b");
  EXPECT_EQ(ErrorOf("[1][3]"), "index out of bounds: 3");
  EXPECT_EQ(ErrorOf("dyn(1) + 1u"), "no such overload: _+_");
  EXPECT_EQ(ErrorOf("dyn('a') < 1"), "no such overload: _<_");
  EXPECT_EQ(ErrorOf("{'a': 1, 'a': 2}"), "Failed with repeated key: \"a\"");
}

TEST(CelEval, LogicalOperatorsAreCommutativeOverErrors) {
  EXPECT_TRUE(True("1 / 0 == 1 || true"));
  EXPECT_TRUE(True("true || 1 / 0 == 1"));
  EXPECT_TRUE(True("!(1 / 0 == 1 && false)"));
  EXPECT_EQ(ErrorOf("1 / 0 == 1 || false"), "division by zero");
  EXPECT_EQ(ErrorOf("true && 1 / 0 == 1"), "division by zero");
  EXPECT_EQ(ErrorOf("dyn(1) && true"), "no such overload: _&&_");
  // The first error wins over later ones.
  EXPECT_EQ(ErrorOf("1 / 0 == 1 || {}.x"), "division by zero");
}

TEST(CelEval, HeterogeneousEquality) {
  EXPECT_TRUE(True("1 == 1u && 1 == 1.0 && 1u == 1.0"));
  EXPECT_TRUE(True("dyn(1) != 'a'"));
  EXPECT_TRUE(True("[1, 'a'] == [1.0, 'a']"));
  EXPECT_TRUE(True("{1: 'a'} == {1u: 'a'}"));
  EXPECT_TRUE(True("double('nan') != double('nan')"));
  EXPECT_TRUE(True("1u in [1, 2] && 2.0 in {2: 'x'}"));
}

TEST(CelEval, Macros) {
  EXPECT_TRUE(True("[1, 2, 3].all(x, x > 0)"));
  EXPECT_TRUE(True("[1, 2, 3].exists(x, x == 2)"));
  EXPECT_TRUE(True("[1, 2, 3].exists_one(x, x > 2)"));
  EXPECT_TRUE(True("[1, 2, 3].map(x, x * 2) == [2, 4, 6]"));
  EXPECT_TRUE(True("[1, 2, 3].map(x, x > 1, x) == [2, 3]"));
  EXPECT_TRUE(True("[1, 2, 3].filter(x, x % 2 == 1) == [1, 3]"));
  EXPECT_TRUE(True("{'a': 1, 'b': 2}.all(k, k.size() == 1)"));
  EXPECT_TRUE(True("[[1], [2, 3]].all(l, l.all(x, l.exists(y, y == x)))"));
  EXPECT_TRUE(True("cel.bind(x, 'abc', x.size() == 3)"));
  // An error in one element is absorbed when another element decides the result.
  EXPECT_TRUE(True("[0, 1].exists(x, 1 / x == 1)"));
  EXPECT_EQ(ErrorOf("[0, 1].all(x, 1 / x == 1)"), "division by zero");
  EXPECT_EQ(ErrorOf("1.all(x, true)"), "got 'types.Int', expected iterable type");
}

TEST(CelEval, StandardFunctions) {
  EXPECT_TRUE(True("size('héllo') == 5 && size(b'h\\xc3\\xa9') == 3 && [1, 2].size() == 2"));
  EXPECT_TRUE(True("'gpu-a100'.startsWith('gpu') && 'gpu-a100'.endsWith('100')"));
  EXPECT_TRUE(True("'gpu-a100'.contains('a1') && !'gpu'.contains('x')"));
  EXPECT_TRUE(True("'a100-80gb'.matches('^a[0-9]+-[0-9]+gb$') && matches('ab', 'b')"));
  EXPECT_TRUE(True("'ABC'.matches('(?i)abc')"));
  EXPECT_NE(ErrorOf("'a'.matches('(?=a)')").find("error parsing regexp"), std::string::npos);
  EXPECT_NE(ErrorOf("'aa'.matches('(a)\\\\1')").find("error parsing regexp"), std::string::npos);
  EXPECT_TRUE(True("int('42') == 42 && uint('7') == 7u && double('1.5') == 1.5"));
  EXPECT_TRUE(True("string(1.5) == '1.5' && string(7u) == '7' && string(b'ok') == 'ok'"));
  EXPECT_EQ(ErrorOf("int(1e19)"), "range error");
  EXPECT_EQ(ErrorOf("uint(-1)"), "range error");
  EXPECT_TRUE(True("type(1) == int && type('a') == string && type(int) == type"));
  EXPECT_TRUE(True("'a,b,c'.split(',') == ['a', 'b', 'c'] && ['a', 'b'].join('-') == 'a-b'"));
  EXPECT_TRUE(True("'  x '.trim() == 'x' && 'AbC'.lowerAscii() == 'abc'"));
  EXPECT_TRUE(True("'hello'.substring(1, 3) == 'el' && 'hello'.indexOf('l') == 2"));
  EXPECT_TRUE(True("'hello'.replace('l', 'L', 1) == 'heLlo' && 'héllo'.charAt(1) == 'é'"));
}

// Patterns are RE2's: matching is linear in the subject, so patterns that make a backtracking
// matcher run for ever are answered at once, and RE2's own syntax is understood.
TEST(CelEval, RegexesAreRe2) {
  std::string exponential =
      "!('" + std::string(5000, 'a') + "!'.matches('^(a+)+$')) && !'x'.matches('^(a|b)*c')";
  EXPECT_TRUE(True(exponential));
  std::string alternation = "'" + std::string(20000, 'b') + "'.matches('^(a|b|ab|ba)*$')";
  EXPECT_TRUE(True(alternation));
  EXPECT_TRUE(True("'aa'.matches('^(a|b){2}$') && 'ab'.matches('^(a+){1,2}b$')"));
  EXPECT_TRUE(
      True("'abab'.matches('^(ab)+$') && 'a+'.matches('[(a+)+]+') && 'ab'.matches('(a+)?b')"));
  EXPECT_TRUE(True("'a'.matches('(?P<x>a)') && 'é'.matches('^\\\\pL$') && 'ab'.matches('b\\\\z')"));
  EXPECT_TRUE(True("'A\\nb'.matches('(?is)a.B')"));
  EXPECT_NE(ErrorOf("'a'.matches('a{1001}')").find("error parsing regexp"), std::string::npos);
}

// find and findAll report successive non-overlapping matches; an empty match moves on one
// character and is not reported where the previous match ended.
TEST(CelEval, FindAllWalksMatchesAsRe2Does) {
  EXPECT_TRUE(True("'abc'.findAll('x*') == ['', '', '', '']"));
  EXPECT_TRUE(True("'aXbX'.findAll('X*') == ['', 'X', 'X']"));
  EXPECT_TRUE(True("'éé'.findAll('') == ['', '', '']"));
  EXPECT_TRUE(True("'a1b22c333'.findAll('[0-9]+', 2) == ['1', '22']"));
  EXPECT_TRUE(True("'a1'.findAll('[0-9]+', 0) == [] && 'ab'.find('[0-9]+') == ''"));
  EXPECT_TRUE(True("'x1'.find('^[0-9]') == '' && 'ab'.findAll('^.') == ['a']"));
}

TEST(CelEval, KubernetesLibraries) {
  EXPECT_TRUE(True("quantity('1Gi').isGreaterThan(quantity('1G'))"));
  EXPECT_TRUE(True("quantity('500m').compareTo(quantity('0.5')) == 0"));
  EXPECT_TRUE(True("quantity('1k').add(24).asInteger() == 1024"));
  EXPECT_TRUE(True("quantity('2').sub(quantity('500m')) == quantity('1500m')"));
  EXPECT_TRUE(True("quantity('1500m').asApproximateFloat() == 1.5"));
  EXPECT_TRUE(True("!quantity('1500m').isInteger() && quantity('-3').sign() == -1"));
  EXPECT_EQ(ErrorOf("quantity('1500m').asInteger()"), "cannot convert value to integer");
  EXPECT_TRUE(True("isQuantity('1Mi') && !isQuantity('1 Mi')"));
  EXPECT_NE(ErrorOf("quantity('x')").find("quantities must match"), std::string::npos);
  EXPECT_TRUE(True("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2"));
  EXPECT_TRUE(True("semver('1.2.3').patch() == 3"));
  EXPECT_TRUE(True("semver('1.10.0').isGreaterThan(semver('1.9.9'))"));
  EXPECT_TRUE(True("semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))"));
  EXPECT_TRUE(True("semver('v1.2', true).compareTo(semver('1.2.0')) == 0"));
  EXPECT_TRUE(True("isSemver('1.0.0') && !isSemver('1.0') && isSemver('1.0', true)"));
  EXPECT_NE(ErrorOf("semver('1.0')").find("could not parse semver"), std::string::npos);
  EXPECT_TRUE(True("[1, 2, 3].sum() == 6 && [3, 1].min() == 1 && [1, 2].isSorted()"));
  EXPECT_TRUE(True("'abc123'.find('[0-9]+') == '123' && 'a1b2'.findAll('[0-9]') == ['1', '2']"));
  EXPECT_TRUE(True("sets.contains([1, 2, 3], [2]) && sets.intersects([1], [1, 4])"));
  EXPECT_TRUE(True("sets.equivalent([1, 2], [2, 1, 1])"));
}

TEST(CelEval, OptionalValues) {
  EXPECT_TRUE(True("{'a': 1}.?a.value() == 1 && !{'a': 1}.?b.hasValue()"));
  EXPECT_TRUE(True("{'a': {'b': 2}}.?a.b.orValue(0) == 2 && {'a': {}}.?a.b.orValue(0) == 0"));
  EXPECT_TRUE(True("[1, 2][?5].orValue(7) == 7 && [?optional.none(), ?optional.of(3)] == [3]"));
  EXPECT_TRUE(True("{?'x': optional.none(), 'y': 1} == {'y': 1}"));
  EXPECT_TRUE(True("optional.of(2).optMap(v, v * 3).value() == 6"));
  EXPECT_TRUE(True("optional.ofNonZeroValue('').or(optional.of('z')).value() == 'z'"));
  EXPECT_EQ(ErrorOf("optional.none().value()"), "optional.none() dereference");
}

TEST(CelEval, CostLimitCancelsEvaluation) {
  const char* expensive =
      "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, "
      "[1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, d > 0))))";
  uint64_t cost = 0;
  Value unlimited = Eval(expensive, 0, &cost);
  ASSERT_EQ(unlimited.kind(), Kind::kBool);
  EXPECT_GT(cost, 10'000u);
  Value limited = Eval(expensive, 1000, &cost);
  ASSERT_TRUE(limited.IsError());
  EXPECT_EQ(limited.error(), kCostLimitExceeded);
  EXPECT_LE(cost, 1010u);  // stops promptly once over the limit
  // Cancellation is not absorbed by a logical operator that would otherwise decide.
  std::string absorbed = std::string(expensive) + " || true";
  EXPECT_EQ(Eval(absorbed, 1000).error(), kCostLimitExceeded);
}

TEST(CelEval, CostLimitBoundsMemory) {
  // Each bind doubles the string; 40 doublings would need a terabyte. The cost of building
  // strings stops the evaluation long before.
  std::string src = "'0123456789abcdef'";
  for (int i = 0; i < 40; ++i)
    src = "cel.bind(s" + std::to_string(i) + ", " + src + ", s" + std::to_string(i) + " + s" +
          std::to_string(i) + ")";
  Value v = Eval("(" + src + ").size() > 0", 1'000'000);
  ASSERT_TRUE(v.IsError());
  EXPECT_EQ(v.error(), kCostLimitExceeded);
  Value r = Eval(
      "'ab'.replace('', 'xxxxxxxxxxxxxxxx').replace('', 'xxxxxxxxxxxxxxxx')"
      ".replace('', 'xxxxxxxxxxxxxxxx').replace('', 'xxxxxxxxxxxxxxxx')"
      ".replace('', 'xxxxxxxxxxxxxxxx').size() > 0",
      100'000);
  ASSERT_TRUE(r.IsError());
  EXPECT_EQ(r.error(), kCostLimitExceeded);
}

TEST(CelCheck, StaticErrors) {
  auto undeclared = Compile("x > 1", {});
  ASSERT_FALSE(undeclared.ok());
  EXPECT_NE(undeclared.error().message.find("undeclared reference to 'x'"), std::string::npos);
  auto unknown_fn = Compile("foo(1)", {});
  ASSERT_FALSE(unknown_fn.ok());
  EXPECT_NE(unknown_fn.error().message.find("undeclared reference to 'foo'"), std::string::npos);
  auto arity = Compile("size(1, 2)", {});
  ASSERT_FALSE(arity.ok());
  EXPECT_NE(arity.error().message.find("found no matching overload for 'size'"), std::string::npos);
  auto mixed = Compile("1 + 1u", {});
  ASSERT_FALSE(mixed.ok());
  EXPECT_NE(mixed.error().message.find("'_+_' applied to '(int, uint)'"), std::string::npos);
  auto ok = Compile("[1].map(x, x + 1)", {});
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->result_type().type, Type::kList);
}

}  // namespace
}  // namespace berth::cel
