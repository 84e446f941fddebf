#include "api/label_selector.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace berth::labels {
namespace {

std::string ErrorOf(std::string_view text) {
  auto parsed = ParseSelectorText(text);
  if (parsed.ok()) return "ok";
  EXPECT_EQ(parsed.error().code, ErrorCode::kBadRequest) << text;
  return parsed.error().message;
}

TEST(LabelSelectorTextTest, ParsesEveryFormSortedByKey) {
  auto reqs = ParseSelectorText("z in (b,a,a), !canary,tier>2, x notin (), app==web,y!=1,k,w<3");
  ASSERT_TRUE(reqs.ok()) << reqs.error().message;
  std::vector<std::string> keys;
  for (const auto& r : *reqs) keys.push_back(r.key);
  EXPECT_EQ(keys, (std::vector<std::string>{"app", "canary", "k", "tier", "w", "x", "y", "z"}));
  EXPECT_EQ((*reqs)[0].op, Op::kIn);
  EXPECT_EQ((*reqs)[0].values, std::vector<std::string>{"web"});
  EXPECT_EQ((*reqs)[1].op, Op::kDoesNotExist);
  EXPECT_EQ((*reqs)[2].op, Op::kExists);
  EXPECT_EQ((*reqs)[3].op, Op::kGt);
  EXPECT_EQ((*reqs)[4].op, Op::kLt);
  EXPECT_EQ((*reqs)[5].op, Op::kNotIn);
  EXPECT_EQ((*reqs)[5].values, std::vector<std::string>{""});  // `()` is the empty value
  EXPECT_EQ((*reqs)[6].op, Op::kNotIn);
  EXPECT_EQ((*reqs)[7].values, (std::vector<std::string>{"a", "b"}));
  // `in` and `notin` are values inside parentheses.
  auto keyword_values = ParseSelectorText("x in (in,notin)");
  ASSERT_TRUE(keyword_values.ok());
  EXPECT_EQ((*keyword_values)[0].values, (std::vector<std::string>{"in", "notin"}));
  auto empty_members = ParseSelectorText("x in (a,,b)");
  ASSERT_TRUE(empty_members.ok());
  EXPECT_EQ((*empty_members)[0].values, (std::vector<std::string>{"", "a", "b"}));
  EXPECT_TRUE(ParseSelectorText("").value().empty());
  EXPECT_TRUE(ParseSelectorText("  ").value().empty());
}

TEST(LabelSelectorTextTest, SyntaxErrorsAreKubeApiserversWords) {
  EXPECT_EQ(ErrorOf("app in web"), "unable to parse requirement: found 'web' expected: '('");
  EXPECT_EQ(ErrorOf("a=b=c"), "found '=', expected: ',' or 'end of string'");
  EXPECT_EQ(ErrorOf("a,"), "found '', expected: identifier after ','");
  EXPECT_EQ(ErrorOf("=a"), "found '=', expected: !, identifier, or 'end of string'");
  EXPECT_EQ(ErrorOf("a (b)"),
            "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt");
  EXPECT_EQ(ErrorOf("a in (b c)"), "unable to parse requirement: found 'c', expected: ',' or ')'");
  EXPECT_EQ(ErrorOf("a in (b,"),
            "unable to parse requirement: found '', expected: ',', or identifier");
  EXPECT_EQ(ErrorOf("a in ="), "unable to parse requirement: found '=' expected: '('");
  EXPECT_EQ(ErrorOf("a in (="),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier");
  EXPECT_EQ(ErrorOf("!"), "unable to parse requirement: found '', expected: identifier");
  EXPECT_EQ(ErrorOf("a=("), "unable to parse requirement: found '(', expected: identifier");
}

TEST(LabelSelectorTextTest, KeysAndValuesFollowTheLabelsRules) {
  // The parser checks the key without a field path, which kube-apiserver prints as <nil>.
  const std::string bad_key = ErrorOf("Bad_Prefix.com/x=1");
  EXPECT_EQ(
      bad_key.rfind("unable to parse requirement: <nil>: Invalid value: \"Bad_Prefix.com/x\": "
                    "prefix part a lowercase RFC 1123 subdomain must consist of",
                    0),
      0u)
      << bad_key;
  EXPECT_EQ(ErrorOf("tier>two"),
            "unable to parse requirement: values[0]: Invalid value: \"two\": for 'Gt', 'Lt' "
            "operators, the value must be an integer");
  const std::string bad_value = ErrorOf("app in (web,-db)");
  EXPECT_EQ(bad_value.rfind("unable to parse requirement: values[0][app]: Invalid value: \"-db\": "
                            "a valid label must be",
                            0),
            0u)
      << bad_value;
  // Both of NewRequirement's complaints, aggregated.
  const std::string both = ErrorOf("n<-x");
  EXPECT_EQ(both.rfind("unable to parse requirement: [values[0]: Invalid value: \"-x\": for 'Gt', "
                       "'Lt' operators, the value must be an integer, values[0][n]: Invalid value",
                       0),
            0u)
      << both;
  EXPECT_EQ(ErrorOf("example.com/tier in (a, b),x="), "ok");
}

TEST(LabelSelectorTextTest, MatchesAsRequirementMatches) {
  const std::string web = "web", three = "3", word = "three";
  const std::vector<std::string> web_db = {"db", "web"};
  EXPECT_TRUE(Matches(Op::kIn, web_db, &web, true));
  EXPECT_FALSE(Matches(Op::kIn, web_db, nullptr, true));
  EXPECT_TRUE(Matches(Op::kNotIn, web_db, nullptr, false));
  EXPECT_FALSE(Matches(Op::kNotIn, web_db, &web, false));
  EXPECT_TRUE(Matches(Op::kExists, {}, &web, true));
  EXPECT_TRUE(Matches(Op::kDoesNotExist, {}, nullptr, true));
  const std::vector<std::string> two = {"2"}, plus_four = {"+4"};
  EXPECT_TRUE(Matches(Op::kGt, two, &three, false));
  EXPECT_TRUE(Matches(Op::kLt, plus_four, &three, false));
  EXPECT_FALSE(Matches(Op::kGt, two, &word, false));  // not an integer: no match
  EXPECT_FALSE(Matches(Op::kGt, two, nullptr, false));
}

}  // namespace
}  // namespace berth::labels
