// Tolerations with Lt and Gt through the API server: refused with the
// TaintTolerationComparisonOperators gate off, unless the stored pod already has them; with it
// on, their value must be an integer in canonical form.
#include <gtest/gtest.h>

#include <string>

#include "apiserver/server_test_fixture.h"

namespace berth::apiserver {
namespace {

namespace http = boost::beast::http;
using Json = nlohmann::json;
using TolerationOperatorsTest = testing::ServerHttpTest;
using testing::Reply;

std::string PodWithToleration(const std::string& op, const std::string& value) {
  return Json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "p"}}},
      {"spec",
       {{"containers", {{{"name", "c"}, {"image", "busybox"}}}},
        {"tolerations",
         {{{"key", "sla"}, {"operator", op}, {"value", value}, {"effect", "NoSchedule"}}}}}}}
      .dump();
}

TEST_F(TolerationOperatorsTest, RefusedWithTheGateOff) {
  Reply r = Do(http::verb::post, kPods, PodWithToleration("Gt", "950"));
  EXPECT_EQ(r.status, 422) << r.body.dump();
  EXPECT_EQ(r.body["message"],
            R"(Pod "p" is invalid: spec.tolerations[0].operator: Unsupported value: "Gt": )"
            R"(supported values: "Equal", "Exists")");
}

TEST_F(TolerationOperatorsTest, AcceptedWithTheGateOnAndValuesChecked) {
  validation_.toleration_comparison_operators = true;
  Restart();
  for (const char* bad : {"high", "007", "+5", "-0", "1.5", "", "9223372036854775808"}) {
    Reply r = Do(http::verb::post, kPods, PodWithToleration("Lt", bad));
    EXPECT_EQ(r.status, 422) << bad;
    EXPECT_EQ(r.body["message"],
              std::string(R"(Pod "p" is invalid: spec.tolerations[0].value: Invalid value: ")") +
                  bad + R"(": must be a valid decimal integer in canonical form)")
        << bad;
  }
  Reply r = Do(http::verb::post, kPods, PodWithToleration("Gt", "-950"));
  ASSERT_EQ(r.status, 201) << r.body.dump();
  EXPECT_EQ(r.body["spec"]["tolerations"][0]["operator"], "Gt");
  // An operator that is none of them names all four.
  r = Do(http::verb::post, kPods, PodWithToleration("Ge", "1"));
  EXPECT_EQ(r.body["message"],
            R"(Pod "p" is invalid: spec.tolerations[0].operator: Unsupported value: "Ge": )"
            R"(supported values: "Equal", "Exists", "Gt", "Lt")");
}

TEST_F(TolerationOperatorsTest, AStoredPodKeepsThemWhenTheGateIsTurnedOff) {
  validation_.toleration_comparison_operators = true;
  Restart();
  ASSERT_EQ(Do(http::verb::post, kPods, PodWithToleration("Gt", "950")).status, 201);
  validation_.toleration_comparison_operators = false;
  Restart();
  Reply r = Do(http::verb::patch, std::string(kPods) + "/p", R"({"metadata":{"labels":{"a":"b"}}})",
               "application/merge-patch+json");
  EXPECT_EQ(r.status, 200) << r.body.dump();
}

}  // namespace
}  // namespace berth::apiserver
