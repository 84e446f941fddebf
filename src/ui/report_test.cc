// The self-contained page of `berth simulate --output html`.
#include "ui/report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "config/load.h"
#include "plugins/registry.h"
#include "testing/builders.h"

namespace berth::ui {
namespace {

using nlohmann::json;
using testing::MakeNode;
using testing::MakePod;

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(SimulationReportTest, OnePageWithTheDataAndNothingFromElsewhere) {
  std::vector<Object> objects = {
      Object(MakeNode().Name("big").Capacity({{"cpu", "8"}, {"memory", "16Gi"}}).Obj()),
      Object(MakeNode().Name("small").Capacity({{"cpu", "2"}, {"memory", "4Gi"}}).Obj()),
      // A label value that would end a <script> early if it were embedded as is.
      Object(MakePod()
                 .Name("p")
                 .Label("note", "</script><script>alert(1)</script>")
                 .Req({{"cpu", "4"}})
                 .Obj()),
      Object(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj())};
  Registry registry = InTreeRegistry();
  auto result = sim::Simulate(config::DefaultConfiguration(registry), registry, objects,
                              sim::SimulationOptions{});
  ASSERT_TRUE(result.ok());
  auto page = SimulationReportHtml(objects, *result);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->find("/ui/app.js"), std::string::npos);
  EXPECT_EQ(page->find("/ui/app.css"), std::string::npos);
  EXPECT_EQ(Count(*page, "</script"), 4u);  // the data, timeline.js, compare.js, app.js
  EXPECT_NE(page->find("<style>"), std::string::npos);

  const std::string open = "<script id=\"berth-report\" type=\"application/json\">";
  const size_t from = page->find(open) + open.size();
  json data = json::parse(page->substr(from, page->find("</script>", from) - from));
  EXPECT_EQ(data["nodes"].size(), 2u);
  ASSERT_EQ(data["pods"].size(), 2u);
  EXPECT_EQ(data["pods"][0]["spec"]["nodeName"], "big");
  EXPECT_EQ(data["pods"][0]["metadata"]["labels"]["note"], "</script><script>alert(1)</script>");
  EXPECT_EQ(data["pods"][1]["status"]["conditions"][0]["reason"], "Unschedulable");
  EXPECT_EQ(data["decisions"]["default/p"]["outcome"], "Scheduled");
  EXPECT_EQ(data["decisions"]["default/huge"]["filter"]["small"]["NodeResourcesFit"],
            "Insufficient cpu");
  EXPECT_EQ(data["simulation"]["results"].size(), 2u);
  EXPECT_FALSE(data.contains("explanations"));  // nothing to explain with
}

json ReportData(const std::string& page) {
  const std::string open = "<script id=\"berth-report\" type=\"application/json\">";
  const size_t from = page.find(open) + open.size();
  return json::parse(page.substr(from, page.find("</script>", from) - from));
}

TEST(SimulationReportTest, PendingPodsCarryTheirExplanation) {
  // "fill" takes 6 of big's 8 CPUs first, so "web" (4 CPUs) fits nowhere; freeing 2 CPUs on
  // big is the smallest change (3 on small), over the cluster as the simulation left it.
  std::vector<Object> objects = {
      Object(MakeNode().Name("big").Capacity({{"cpu", "8"}, {"memory", "16Gi"}}).Obj()),
      Object(MakeNode().Name("small").Capacity({{"cpu", "1"}, {"memory", "4Gi"}}).Obj()),
      Object(MakePod().Name("fill").Req({{"cpu", "6"}}).Obj()),
      Object(MakePod().Name("web").Req({{"cpu", "4"}}).Obj()),
      Object(MakePod().Name("huge").Req({{"cpu", "64"}}).Obj())};
  Registry registry = InTreeRegistry();
  const auto config = config::DefaultConfiguration(registry);
  auto result = sim::Simulate(config, registry, objects, sim::SimulationOptions{});
  ASSERT_TRUE(result.ok());
  ReportOptions options;
  options.config = &config;
  options.registry = &registry;
  auto page = SimulationReportHtml(objects, *result, options);
  ASSERT_TRUE(page.ok()) << page.error().message;
  json data = ReportData(*page);
  ASSERT_TRUE(data.contains("explanations"));
  const json& ex = data["explanations"];
  EXPECT_FALSE(ex.contains("default/fill"));  // placed: nothing to explain
  ASSERT_TRUE(ex.contains("default/web"));
  EXPECT_EQ(ex["default/web"]["result"], "Unschedulable");
  EXPECT_EQ(ex["default/web"]["nodes"]["big"]["rejectedBy"], "NodeResourcesFit");
  ASSERT_FALSE(ex["default/web"]["suggestions"].empty());
  const json& first = ex["default/web"]["suggestions"][0];
  EXPECT_EQ(first["kind"], "resources");
  EXPECT_EQ(first["node"], "big");
  EXPECT_NE(first["description"].get<std::string>().find("free 2 cpu on node big"),
            std::string::npos)
      << first.dump();
  EXPECT_TRUE(ex.contains("default/huge"));
  EXPECT_EQ(data["explanationsOmitted"], 0);

  // Past the cap, pending pods are counted, not explained.
  options.max_explanations = 1;
  page = SimulationReportHtml(objects, *result, options);
  ASSERT_TRUE(page.ok());
  data = ReportData(*page);
  EXPECT_EQ(data["explanations"].size(), 1u);
  EXPECT_EQ(data["explanationsOmitted"], 1);
}

TEST(TimelineReportTest, OnePageWithTheReportAndBothScriptsInline) {
  const json report = {{"scenario", "</script><b>x"},
                       {"seed", 1},
                       {"timeline", json::array()},
                       {"series", {{"points", json::array()}}}};
  auto page = TimelineReportHtml(report);
  ASSERT_TRUE(page.ok()) << page.error().message;
  EXPECT_EQ(page->find("src=\"/ui/"), std::string::npos);  // nothing loaded from a server
  EXPECT_EQ(page->find("href=\"/ui/"), std::string::npos);
  EXPECT_EQ(Count(*page, "</script"), 4u);  // the data, timeline.js, compare.js, app.js
  EXPECT_NE(page->find("window.BerthTimeline"), std::string::npos);
  // The data comes before the scripts that read it.
  const std::string open = "<script id=\"berth-timeline\" type=\"application/json\">";
  const size_t from = page->find(open);
  ASSERT_NE(from, std::string::npos);
  EXPECT_LT(from, page->find("window.BerthTimeline"));
  const size_t body = from + open.size();
  EXPECT_EQ(json::parse(page->substr(body, page->find("</script>", body) - body)), report);
}

// The embedded report between its <script> tags, parsed.
json EmbeddedTimeline(const std::string& page) {
  const std::string open = "<script id=\"berth-timeline\" type=\"application/json\">";
  const size_t from = page.find(open);
  if (from == std::string::npos) return nullptr;
  const size_t body = from + open.size();
  return json::parse(page.substr(body, page.find("</script>", body) - body));
}

TEST(CompareReportTest, TheComparisonsJsonDrawnByTheWebViewsScripts) {
  // A configuration's name and a pod's come from the user: markup in them stays data.
  const json report = {
      {"pods", 2},
      {"differing", 1},
      {"configurations",
       json::array({{{"name", "default"}, {"perNode", {{"n1", 1}, {"n2", 1}}}},
                    {{"name", "<img src=x onerror=alert(1)>"}, {"perNode", {{"n1", 2}}}}})},
      {"differences", json::array({{{"pod", "default/</script><script>alert(1)</script>"},
                                    {"candidates", {"n1", "n2"}},
                                    {"configurations",
                                     json::array({{{"result", "Scheduled"}, {"node", "n2"}},
                                                  {{"result", "Scheduled"}, {"node", "n1"}}})}}})}};
  auto page = CompareReportHtml(report);
  ASSERT_TRUE(page.ok()) << page.error().message;
  // Self-contained: every script inline, nothing fetched.
  EXPECT_EQ(page->find("src=\"/ui/"), std::string::npos);
  EXPECT_EQ(page->find("href=\"/ui/"), std::string::npos);
  EXPECT_EQ(Count(*page, "</script"), 4u);  // the names above closed nothing
  EXPECT_NE(page->find("window.BerthCompare"), std::string::npos);
  EXPECT_EQ(page->find("<img"), std::string::npos);
  // The page carries exactly the JSON document, before the scripts that draw it.
  EXPECT_EQ(EmbeddedTimeline(*page), report);
  EXPECT_LT(page->find("id=\"berth-timeline\""), page->find("window.BerthTimeline"));
  EXPECT_LT(page->find("window.BerthTimeline"), page->find("window.BerthCompare"));
}

TEST(CompareReportTest, RefusesADocumentThatIsNotAComparison) {
  for (const json& bad : {json::array(), json{{"pods", 1}}, json{{"configurations", "two"}}}) {
    auto page = CompareReportHtml(bad);
    ASSERT_FALSE(page.ok()) << bad.dump();
    EXPECT_NE(page.error().message.find("configurations"), std::string::npos);
  }
}

}  // namespace
}  // namespace berth::ui
