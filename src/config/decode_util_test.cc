#include "config/decode_util.h"

#include <gtest/gtest.h>

namespace berth::config::internal {
namespace {

TEST(GoDurationTest, Parses) {
  struct Case {
    const char* text;
    std::optional<int64_t> ns;
  };
  const Case cases[] = {
      {"15s", 15'000'000'000},
      {"1m30s", 90'000'000'000},
      {"1.5h", 5'400'000'000'000},
      {"300ms", 300'000'000},
      {"-1s", -1'000'000'000},
      {"+2s", 2'000'000'000},
      {"0", 0},
      {"0s", 0},
      {"1us", 1'000},
      {"1\xC2\xB5s", 1'000},
      {"7ns", 7},
      {".5s", 500'000'000},
      {"1.s", 1'000'000'000},
      {"2h45m", 9'900'000'000'000},
      {"", std::nullopt},
      {"1", std::nullopt},
      {"1x", std::nullopt},
      {"s", std::nullopt},
      {".s", std::nullopt},
      {"1s ", std::nullopt},
      {"-", std::nullopt},
      {"3000000h", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(ParseGoDurationNs(c.text), c.ns) << c.text;
  }
}

TEST(GoDurationTest, FormatsLikeGo) {
  EXPECT_EQ(FormatGoDurationMs(0), "0s");
  EXPECT_EQ(FormatGoDurationMs(15'000), "15s");
  EXPECT_EQ(FormatGoDurationMs(2'000), "2s");
  EXPECT_EQ(FormatGoDurationMs(90'000), "1m30s");
  EXPECT_EQ(FormatGoDurationMs(600'000), "10m0s");
  EXPECT_EQ(FormatGoDurationMs(3'600'000), "1h0m0s");
  EXPECT_EQ(FormatGoDurationMs(1'500), "1.5s");
  EXPECT_EQ(FormatGoDurationMs(61'250), "1m1.25s");
  EXPECT_EQ(FormatGoDurationMs(500), "500ms");
  EXPECT_EQ(FormatGoDurationMs(-2'000), "-2s");
  EXPECT_EQ(FormatGoDurationMs(-5), "-5ms");
}

TEST(GoDurationTest, FormatThenParseRoundTrips) {
  for (int64_t ms : {1LL, 999LL, 1'000LL, 1'001LL, 59'999LL, 3'723'004LL, 86'400'000LL}) {
    auto ns = ParseGoDurationNs(FormatGoDurationMs(ms));
    ASSERT_TRUE(ns.has_value()) << ms;
    EXPECT_EQ(*ns / 1'000'000, ms);
  }
}

TEST(NamesTest, QualifiedNames) {
  EXPECT_EQ(QualifiedNameProblem("cpu"), "");
  EXPECT_EQ(QualifiedNameProblem("example.com/foo"), "");
  EXPECT_EQ(QualifiedNameProblem("topology.kubernetes.io/zone"), "");
  EXPECT_EQ(QualifiedNameProblem("a_b.C-9"), "");
  EXPECT_NE(QualifiedNameProblem("invalid/label/key"), "");
  EXPECT_EQ(QualifiedNameProblem("/foo"), "prefix part must be non-empty");
  EXPECT_EQ(QualifiedNameProblem("example.com/"), "name part must be non-empty");
  EXPECT_NE(QualifiedNameProblem("Example.com/foo"), "");  // prefix must be lowercase
  EXPECT_NE(QualifiedNameProblem("-foo"), "");
  EXPECT_NE(QualifiedNameProblem("foo_"), "");
  EXPECT_NE(QualifiedNameProblem(""), "");
  EXPECT_EQ(QualifiedNameProblem(std::string(63, 'a')), "");
  EXPECT_EQ(QualifiedNameProblem(std::string(64, 'a')),
            "name part must be no more than 63 characters");
}

TEST(NamesTest, LabelValues) {
  EXPECT_EQ(LabelValueProblem(""), "");
  EXPECT_EQ(LabelValueProblem("zone-a"), "");
  EXPECT_NE(LabelValueProblem("a/b"), "");
  EXPECT_NE(LabelValueProblem("-a"), "");
  EXPECT_NE(LabelValueProblem(std::string(64, 'a')), "");
}

TEST(NamesTest, ExtendedResourceNames) {
  EXPECT_TRUE(IsExtendedResourceName("example.com/gpu"));
  EXPECT_TRUE(IsExtendedResourceName("foo.bar/baz"));
  EXPECT_FALSE(IsExtendedResourceName("cpu"));
  EXPECT_FALSE(IsExtendedResourceName("kubernetes.io/foo"));
  EXPECT_FALSE(IsExtendedResourceName("requests.example.com/foo"));
  EXPECT_FALSE(IsExtendedResourceName("example.com/-bad"));
}

TEST(Base64Test, Validates) {
  EXPECT_TRUE(IsValidBase64(""));
  EXPECT_TRUE(IsValidBase64("YWJj"));
  EXPECT_TRUE(IsValidBase64("YWI="));
  EXPECT_TRUE(IsValidBase64("YQ=="));
  EXPECT_TRUE(IsValidBase64("YWJj\nZGVm"));
  EXPECT_FALSE(IsValidBase64("YWJ"));
  EXPECT_FALSE(IsValidBase64("Y==="));
  EXPECT_FALSE(IsValidBase64("YW=j"));
  EXPECT_FALSE(IsValidBase64("YW!j"));
}

TEST(FieldsTest, ReportsUnknownFieldsAndTypeErrors) {
  Problems p;
  nlohmann::json doc = {{"a", 1}, {"zz", 2}};
  Fields f(&doc, "root", p, {"a"});
  EXPECT_FALSE(p.ok());
  EXPECT_EQ(p.error().message, "root.zz: unknown field");

  Problems q;
  nlohmann::json doc2 = {{"n", "x"}, {"s", 3}, {"big", 5'000'000'000LL}, {"f", 1.5}};
  Fields g(&doc2, "", q, {"n", "s", "big", "f"});
  EXPECT_EQ(g.Int32("n"), std::nullopt);
  EXPECT_EQ(q.error().message, "n: expected an integer, got a string");
  Problems r;
  Fields h(&doc2, "", r, {"n", "s", "big", "f"});
  EXPECT_EQ(h.Int32("big"), std::nullopt);
  EXPECT_EQ(r.error().message, "big: invalid value 5000000000: out of range");
  Problems t;
  Fields k(&doc2, "x", t, {"n", "s", "big", "f"});
  EXPECT_EQ(k.Int64("f"), std::nullopt);
  EXPECT_EQ(t.error().message, "x.f: invalid value 1.5: expected an integer");
}

TEST(FieldsTest, NullAndAbsentReadAsUnset) {
  Problems p;
  nlohmann::json doc = {{"a", nullptr}};
  Fields f(&doc, "", p, {"a", "b"});
  EXPECT_FALSE(f.Has("a"));
  EXPECT_EQ(f.String("a"), std::nullopt);
  EXPECT_EQ(f.Bool("b"), std::nullopt);
  EXPECT_TRUE(p.ok());
  Fields g(nullptr, "", p, {});
  EXPECT_TRUE(p.ok());
  nlohmann::json list = nlohmann::json::array();
  Fields h(&list, "root", p, {});
  EXPECT_EQ(p.error().message, "root: expected an object, got a list");
}

TEST(FieldsTest, WholeFloatsAreIntegers) {
  Problems p;
  nlohmann::json doc = {{"n", 10.0}};
  Fields f(&doc, "", p, {"n"});
  EXPECT_EQ(f.Int32("n"), 10);
  EXPECT_TRUE(p.ok());
}

TEST(ProblemsTest, KeepsFirst) {
  Problems p;
  p.Add("a", "first");
  p.Add("b", "second");
  p.AddMessage("third");
  EXPECT_EQ(p.error().message, "a: first");
}

}  // namespace
}  // namespace berth::config::internal
