#include "apiserver/query_params.h"

#include <gtest/gtest.h>

#include <limits>

namespace berth::apiserver {
namespace {

using Clock = std::chrono::steady_clock;

TEST(QueryParamsTest, ParsesInt64AsGoDoes) {
  EXPECT_EQ(ParseInt64Param("").value(), std::nullopt);
  EXPECT_EQ(ParseInt64Param("  ").value(), std::nullopt);
  EXPECT_EQ(ParseInt64Param(" 30 ").value(), 30);
  EXPECT_EQ(ParseInt64Param("+30").value(), 30);
  EXPECT_EQ(ParseInt64Param("-1").value(), -1);
  EXPECT_EQ(ParseInt64Param("9223372036854775807").value(), std::numeric_limits<int64_t>::max());
  auto bad = ParseInt64Param("abc");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kBadRequest);
  EXPECT_EQ(bad.error().message, R"(strconv.ParseInt: parsing "abc": invalid syntax)");
  EXPECT_EQ(ParseInt64Param("9223372036854775808").error().message,
            R"(strconv.ParseInt: parsing "9223372036854775808": value out of range)");
  for (const char* s : {"1.5", "+-1", "-", "+", "0x10", "5s", "1 2"}) {
    EXPECT_FALSE(ParseInt64Param(s).ok()) << s;
  }
}

// A value that is not UTF-8 (from the URL's percent-decoding) is quoted in the answer, not
// thrown on (found by the apiserver_input fuzz target).
TEST(QueryParamsTest, ValuesThatAreNotUtf8AreQuoted) {
  auto bad = ParseInt64Param("1\xc9x");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, ErrorCode::kBadRequest);
  EXPECT_NE(bad.error().message.find("invalid syntax"), std::string::npos);
}

TEST(QueryParamsTest, WatchDeadlineNeverOverflows) {
  const Clock::time_point now = Clock::now();
  EXPECT_EQ(WatchDeadline(now, 0), Clock::time_point::max());
  EXPECT_EQ(WatchDeadline(now, 30), now + std::chrono::seconds(30));
  EXPECT_EQ(WatchDeadline(now, -1), now);
  // From 9223372036 s on, now + timeout passes the end of the clock (int64 nanoseconds).
  for (int64_t big : {int64_t{9223372036}, int64_t{9223372037}, int64_t{1} << 40,
                      std::numeric_limits<int64_t>::max()}) {
    EXPECT_EQ(WatchDeadline(now, big), Clock::time_point::max()) << big;
  }
  EXPECT_GT(WatchDeadline(now, 100L * 365 * 24 * 3600), now + std::chrono::hours(24 * 365 * 99));
}

TEST(QueryParamsTest, BodyMediaTypes) {
  for (const char* ok :
       {"", "application/json", "application/json; charset=utf-8", "Application/JSON",
        "application/yaml", "application/vnd.kubernetes.protobuf"}) {
    EXPECT_TRUE(CheckBodyMediaType(ok).ok()) << ok;
  }
  for (const char* bad :
       {"text/plain", "application/x-www-form-urlencoded", "*/*", "application/merge-patch+json"}) {
    auto r = CheckBodyMediaType(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.error().code, ErrorCode::kUnsupportedMediaType);
    EXPECT_EQ(r.error().message,
              "the body of the request was in an unknown format - accepted media types include: "
              "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  }
}

TEST(QueryParamsTest, ResourceQueries) {
  auto request = [](const char* method, std::vector<std::pair<std::string, std::string>> query) {
    net::HttpRequest req;
    req.method = method;
    req.query = std::move(query);
    return req;
  };
  EXPECT_TRUE(ValidateResourceQuery(request("POST", {{"dryRun", "All"}})).ok());
  auto dry = ValidateResourceQuery(request("POST", {{"dryRun", "Bogus"}}));
  ASSERT_FALSE(dry.ok());
  EXPECT_EQ(dry.error().code, ErrorCode::kInvalid);
  EXPECT_EQ(dry.error().message,
            R"(CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: )"
            R"([]string{"Bogus"}: supported values: "All")");
  EXPECT_EQ(
      ValidateResourceQuery(request("PATCH", {{"dryRun", "All"}, {"dryRun", ""}})).error().message,
      R"(PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: )"
      R"([]string{"All", ""}: supported values: "All")");
  EXPECT_TRUE(
      ValidateResourceQuery(request("GET", {{"limit", "-1"}, {"resourceVersion", "0"}})).ok());
  EXPECT_EQ(ValidateResourceQuery(request("GET", {{"limit", "x"}})).error().code,
            ErrorCode::kBadRequest);
  EXPECT_EQ(ValidateResourceQuery(request("GET", {{"timeoutSeconds", "abc"}})).error().message,
            R"(strconv.ParseInt: parsing "abc": invalid syntax)");
  auto rv = ValidateResourceQuery(request("GET", {{"resourceVersion", "abc"}}));
  ASSERT_FALSE(rv.ok());
  EXPECT_EQ(rv.error().code, ErrorCode::kBadRequest);
  EXPECT_EQ(rv.error().message,
            R"(invalid resource version: resourceVersion: Invalid value: "abc": )"
            R"(strconv.ParseUint: parsing "abc": invalid syntax)");
  EXPECT_FALSE(ValidateResourceQuery(request("GET", {{"resourceVersion", "-5"}})).ok());
}

}  // namespace
}  // namespace berth::apiserver
