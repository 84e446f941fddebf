// The DRA selector environment. The table is translated from kube-scheduler's
// staging/src/k8s.io/dynamic-resource-allocation/cel/compile_test.go (TestCEL), for the cases
// of GA and default-on features (list-valued attributes, an alpha feature, are not covered).
// Upstream's exact cost estimates are not asserted; instead every case checks that the runtime
// cost stays within Berth's own estimate.
#include "cel/dra.h"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace berth::cel::dra {
namespace {

Quantity Q(const char* s) { return Quantity::Parse(s).value(); }

struct DraCase {
  const char* name;
  const char* expression;
  Device device;
  const char* compile_error = "";
  const char* match_error = "";
  bool match = false;
  Options options = {};
};

void PrintTo(const DraCase& c, std::ostream* os) { *os << c.name; }

// Long by design: the table of cases, one entry each.
std::vector<DraCase> Cases() {
  const std::string kDriver = "dra.example.com";
  Device bool_name{kDriver, {{"name", true}}, {}};
  Device all{kDriver,
             {{"bool", true},
              {"int", int64_t{1}},
              {"string", std::string("fish")},
              {"version", VersionString{"1.0.0"}}},
             {{"quantity", Q("1Mi")}}};
  return {
      {"true", "true", {}, "", "", true},
      {"false", "false", {}, "", "", false},
      {"syntax-error", "?!", {}, "Syntax error"},
      {"type-error", "1", {}, "must evaluate to bool or the unknown type, not int"},
      {"runtime-error-lookup-identifier",
       R"(device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0")))",
       {},
       "",
       "no such key: noSuchAttr"},
      {"runtime-error-lookup-map",
       R"(device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0")))",
       {},
       "",
       "no such key: noSuchAttr"},
      {"domain-check-negative", R"("no-such-domain" in device.attributes)", {}, "", "", false},
      {"domain-check-positive",
       R"("dra.example.com" in device.attributes)",
       {"", {{"dra.example.com/something", true}}, {}},
       "",
       "",
       true},
      {"empty-driver-name", R"(device.driver == "")", {}, "", "", true},
      {"real-driver-name",
       R"(device.driver == "dra.example.com")",
       {kDriver, {}, {}},
       "",
       "",
       true},
      {"driver-name-qualifier", R"(device.attributes["dra.example.com"].name)", bool_name, "", "",
       true},
      {"driver-name-qualifier-map-lookup", R"(device.attributes["dra.example.com"]["name"])",
       bool_name, "", "", true},
      {"bind", R"(cel.bind(dra, device.attributes["dra.example.com"], dra.name))", bool_name, "",
       "", true},
      {"qualified-attribute-name",
       R"(device.attributes["other.example.com"].name)",
       {kDriver, {{"other.example.com/name", true}}, {}},
       "",
       "",
       true},
      {"int",
       R"(device.attributes["dra.example.com"].name > 0)",
       {kDriver, {{"name", int64_t{1}}}, {}},
       "",
       "",
       true},
      {"string",
       R"(device.attributes["dra.example.com"].name == "fish")",
       {kDriver, {{"name", std::string("fish")}}, {}},
       "",
       "",
       true},
      {"version",
       R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("0.0.1")))",
       {kDriver, {{"name", VersionString{"1.0.0"}}}, {}},
       "",
       "",
       true},
      {"version_v",
       R"(device.attributes["dra.example.com"].name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true))",
       {kDriver, {{"name", VersionString{"1.0.0"}}}, {}},
       "",
       "",
       true},
      {"quantity",
       R"(device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       {kDriver, {}, {{"name", Q("1Mi")}}},
       "",
       "",
       true},
      {"check-positive",
       R"("name" in device.capacity["dra.example.com"] && device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       {kDriver, {}, {{"name", Q("1Mi")}}},
       "",
       "",
       true},
      {"check-negative",
       R"(!("name" in device.capacity["dra.example.com"]) || device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki")))",
       {},
       "",
       "",
       true},
      {"all",
       R"(
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
)",
       all, "", "", true},
      {"many",
       R"(device.attributes["dra.example.com"].a && device.attributes["dra.example.com"].b && device.attributes["dra.example.com"].c)",
       {kDriver, {{"a", true}, {"b", true}, {"c", true}}, {}},
       "",
       "",
       true},
      {"check_attribute_domains",
       R"(device.attributes.exists_one(x, x == "dra.example.com"))",
       {kDriver, {{"services", std::string("some_example_value")}}, {}},
       "",
       "",
       true},
      {"check_attribute_ids",
       R"(device.attributes["dra.example.com"].exists_one(x, x == "services"))",
       {kDriver, {{"services", std::string("some_example_value")}}, {}},
       "",
       "",
       true},
      {"split_attribute",
       R"(device.attributes["dra.example.com"].services.split("example").size() >= 2)",
       {kDriver, {{"services", std::string("some_example_value")}}, {}},
       "",
       "",
       true},
      {"regexp_attribute",
       R"(device.attributes["dra.example.com"].services.matches("[^a]?sym"))",
       {kDriver, {{"services", std::string("asymetric")}}, {}},
       "",
       "",
       true},
      {"check_capacity_domains",
       R"(device.capacity.exists_one(x, x == "dra.example.com"))",
       {kDriver, {}, {{"memory", Q("1Mi")}}},
       "",
       "",
       true},
      {"check_capacity_ids",
       R"(device.capacity["dra.example.com"].exists_one(x, x == "memory"))",
       {kDriver, {}, {{"memory", Q("1Mi")}}},
       "",
       "",
       true},
      {"expensive",
       "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, "
       "4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, "
       "7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, "
       "10].all(z5, int('1'.find('[0-9]*')) < 100)))))))",
       {kDriver, {}, {}},
       "",
       "actual cost limit exceeded"},
      {"allow_multiple_allocations", "device.allowMultipleAllocations == true",
       Device{kDriver, {}, {}, true}, "", "", true},
      {"allow_multiple_allocations_default", "device.allowMultipleAllocations == false",
       Device{kDriver, {}, {}}, "", "", true},
      {"allow_multiple_allocations_disabled", "device.allowMultipleAllocations == false",
       Device{kDriver, {}, {}}, "undefined field 'allowMultipleAllocations'", "", false,
       Options{kSelectorMaxCost, false}},
  };
}

class DraSelector : public ::testing::TestWithParam<DraCase> {};

TEST_P(DraSelector, CompilesAndMatchesAsUpstream) {
  const DraCase& c = GetParam();
  auto sel = Selector::Compile(c.expression, c.options);
  if (*c.compile_error) {
    ASSERT_FALSE(sel.ok());
    EXPECT_NE(sel.error().message.find(c.compile_error), std::string::npos) << sel.error().message;
    return;
  }
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  auto dev = PreparedDevice::Prepare(c.device);
  ASSERT_TRUE(dev.ok()) << dev.error().message;
  uint64_t cost = 0;
  auto m = sel->Matches(*dev, &cost);
  if (*c.match_error) {
    ASSERT_FALSE(m.ok());
    EXPECT_NE(m.error().message.find(c.match_error), std::string::npos) << m.error().message;
  } else {
    ASSERT_TRUE(m.ok()) << m.error().message;
    EXPECT_EQ(*m, c.match);
  }
  EXPECT_LE(cost, sel->max_cost()) << "runtime cost above the estimate";
}

INSTANTIATE_TEST_SUITE_P(CompileTest, DraSelector, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<DraCase>& info) {
                           std::string n = info.param.name;
                           for (char& ch : n) {
                             if (!isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

TEST(DraSelector, ExpensiveEstimateExceedsTheLimit) {
  auto sel = Selector::Compile(
      "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, "
      "4, 5, 6, 7, 8, 9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, z2 > 0))))");
  ASSERT_TRUE(sel.ok());
  EXPECT_GT(sel->max_cost(), 10'000u);
  auto cheap = Selector::Compile(R"(device.driver == "gpu.example.com")");
  ASSERT_TRUE(cheap.ok());
  EXPECT_LT(cheap->max_cost(), 20u);
}

TEST(DraSelector, ResultOfAnotherTypeIsAnEvaluationError) {
  auto sel = Selector::Compile(R"(device.attributes["dra.example.com"].model)");
  ASSERT_TRUE(sel.ok());
  auto dev = PreparedDevice::Prepare({"dra.example.com", {{"model", std::string("a100")}}, {}});
  ASSERT_TRUE(dev.ok());
  auto m = sel->Matches(*dev);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message, "CEL result of type string could not be converted to bool");
}

TEST(DraSelector, InvalidVersionAttributeFailsPreparation) {
  auto dev = PreparedDevice::Prepare({"dra.example.com", {{"fw", VersionString{"1.0"}}}, {}});
  ASSERT_FALSE(dev.ok());
  EXPECT_NE(dev.error().message.find("attribute fw: parse semantic version"), std::string::npos);
}

TEST(DraSelector, OptionalAttributeLookup) {
  auto sel = Selector::Compile(
      R"(device.attributes["gpu.example.com"].?model.orValue("") == "a100" ||
         device.attributes["other.example.com"].?model.hasValue())");
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  auto with = PreparedDevice::Prepare({"gpu.example.com", {{"model", std::string("a100")}}, {}});
  auto without = PreparedDevice::Prepare({"gpu.example.com", {}, {}});
  ASSERT_TRUE(with.ok() && without.ok());
  EXPECT_TRUE(sel->Matches(*with).value());
  EXPECT_FALSE(sel->Matches(*without).value());
}

TEST(DraSelector, UnknownDeviceFieldIsACompileError) {
  auto sel = Selector::Compile("device.driverName == \"\"");
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.error().message.find("undefined field 'driverName'"), std::string::npos);
}

TEST(DraSelector, CapacityIsTypedAsQuantity) {
  // A quantity compared with an int is rejected when compiling, as upstream's checker does.
  auto sel = Selector::Compile(R"(device.capacity["dra.example.com"].memory + 1 > 0)");
  ASSERT_FALSE(sel.ok());
  EXPECT_NE(sel.error().message.find("found no matching overload for '_+_'"), std::string::npos)
      << sel.error().message;
}

TEST(DraSelector, GpuSelectorOnCapacityAndModel) {
  auto sel = Selector::Compile(
      R"(device.driver == "gpu.example.com" &&
         device.attributes["gpu.example.com"].model.startsWith("a100") &&
         device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0)");
  ASSERT_TRUE(sel.ok()) << sel.error().message;
  auto big = PreparedDevice::Prepare(
      {"gpu.example.com", {{"model", std::string("a100-80")}}, {{"memory", Q("80Gi")}}});
  auto small = PreparedDevice::Prepare(
      {"gpu.example.com", {{"model", std::string("a100-40")}}, {{"memory", Q("20Gi")}}});
  ASSERT_TRUE(big.ok() && small.ok());
  EXPECT_TRUE(sel->Matches(*big).value());
  EXPECT_FALSE(sel->Matches(*small).value());
}

TEST(DraSelector, SharedBetweenThreads) {
  auto sel = Selector::Compile(
      R"(device.attributes["gpu.example.com"].model.matches("^a100") &&
         device.capacity["gpu.example.com"].memory.isGreaterThan(quantity("40Gi")))");
  ASSERT_TRUE(sel.ok());
  auto yes = PreparedDevice::Prepare(
      {"gpu.example.com", {{"model", std::string("a100")}}, {{"memory", Q("80Gi")}}});
  auto no = PreparedDevice::Prepare(
      {"gpu.example.com", {{"model", std::string("h100")}}, {{"memory", Q("80Gi")}}});
  ASSERT_TRUE(yes.ok() && no.ok());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        auto a = sel->Matches(*yes);
        auto b = sel->Matches(*no);
        if (!a.ok() || !*a || !b.ok() || *b) ++wrong;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(SelectorCache, ReusesCompiledSelectorsAndEvictsTheLeastRecentlyUsed) {
  SelectorCache cache(2);
  auto a = cache.GetOrCompile("device.driver == 'a'");
  auto b = cache.GetOrCompile("device.driver == 'b'");
  ASSERT_TRUE(a->ok() && b->ok());
  EXPECT_EQ(cache.GetOrCompile("device.driver == 'a'"), a);  // a is now the most recent
  auto c = cache.GetOrCompile("device.driver == 'c'");       // evicts b
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_EQ(cache.GetOrCompile("device.driver == 'a'"), a);
  EXPECT_NE(cache.GetOrCompile("device.driver == 'b'"), b);  // compiled anew
  auto bad = cache.GetOrCompile("device.nope");
  ASSERT_FALSE(bad->ok());
  EXPECT_EQ(cache.GetOrCompile("device.nope"), bad);
}

}  // namespace
}  // namespace berth::cel::dra
