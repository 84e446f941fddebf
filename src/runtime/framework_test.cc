#include "runtime/framework.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/framework_test_util.h"
#include "runtime/scheduler_metrics.h"
#include "testing/builders.h"

namespace berth {
namespace {

using framework_test::AllPoints;
using framework_test::FakeFilter;
using framework_test::FakePreScoreScore;
using framework_test::FakeQueueSort;
using framework_test::FakeScore;
using framework_test::FrameworkTest;
using framework_test::Reg;
using framework_test::Set;
using framework_test::Spec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- construction

TEST_F(FrameworkTest, ValidProfileListsPluginsPerPoint) {
  Register(Reg<FakeFilter>("F", &log_, std::set<std::string>{}));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"F"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  EXPECT_EQ(fw->profile_name(), "test-profile");
  EXPECT_THAT(fw->ListPlugins("QueueSort"), ElementsAre("QS"));
  EXPECT_THAT(fw->ListPlugins("Filter"), ElementsAre("F"));
  EXPECT_THAT(fw->ListPlugins("Bind"), ElementsAre("Bind"));
  EXPECT_THAT(fw->ListPlugins("Score"), IsEmpty());
  EXPECT_TRUE(fw->HasFilterPlugins());
  EXPECT_FALSE(fw->HasScorePlugins());
  EXPECT_FALSE(fw->HasPostFilterPlugins());
  EXPECT_EQ(fw->queue_sort_name(), "QS");
}

TEST_F(FrameworkTest, UnknownPluginIsAnError) {
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"Missing"}});
  EXPECT_THAT(BuildError(p), HasSubstr("plugin \"Missing\" does not exist"));

  config::Profile mp = BaseProfile();
  mp.plugins.multi_point = Set({{"AlsoMissing"}});
  EXPECT_THAT(BuildError(mp), HasSubstr("plugin \"AlsoMissing\" does not exist"));
}

TEST_F(FrameworkTest, PluginAtAPointItDoesNotImplementIsAnError) {
  Register(Reg<FakeFilter>("F", &log_, std::set<std::string>{}));
  config::Profile p = BaseProfile();
  p.plugins.score = Set({{"F"}});
  EXPECT_THAT(BuildError(p), HasSubstr("plugin \"F\" does not extend Score plugin"));

  config::Profile q = BaseProfile();
  q.plugins.pre_filter = Set({{"F"}});
  EXPECT_THAT(BuildError(q), HasSubstr("plugin \"F\" does not extend PreFilter plugin"));
}

TEST_F(FrameworkTest, SamePluginTwiceAtAPointIsAnError) {
  Register(Reg<FakeFilter>("F", &log_, std::set<std::string>{}));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"F"}, {"F"}});
  EXPECT_THAT(BuildError(p), HasSubstr("plugin \"F\" already registered as \"Filter\""));

  Register(Reg<AllPoints>("TestPlugin", &log_));
  config::Profile mp = BaseProfile();
  mp.plugins.multi_point = Set({{"TestPlugin"}, {"TestPlugin"}});
  EXPECT_THAT(BuildError(mp), HasSubstr("plugin \"TestPlugin\" already registered"));
}

TEST_F(FrameworkTest, ProfileWithoutBindPluginIsAnError) {
  config::Profile p = BaseProfile();
  p.plugins.bind = {};
  EXPECT_THAT(BuildError(p),
              HasSubstr("at least one bind plugin is needed for profile with scheduler name "
                        "\"test-profile\""));
}

TEST_F(FrameworkTest, ExactlyOneQueueSortPluginIsRequired) {
  config::Profile none = BaseProfile();
  none.plugins.queue_sort = {};
  EXPECT_THAT(BuildError(none),
              HasSubstr("only one queue sort plugin required for profile with scheduler name "
                        "\"test-profile\", but got 0"));

  Register(Reg<FakeQueueSort>("QS2", &log_));
  config::Profile two = BaseProfile();
  two.plugins.queue_sort = Set({{"QS"}, {"QS2"}});
  EXPECT_THAT(BuildError(two), HasSubstr("but got 2"));
}

TEST_F(FrameworkTest, FactoryErrorIsReported) {
  PluginRegistration r;
  r.name = "Broken";
  r.factory = [](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    return Error{"bad args"};
  };
  Register(std::move(r));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"Broken"}});
  EXPECT_THAT(BuildError(p), HasSubstr("initializing plugin \"Broken\": bad args"));
}

// ---------------------------------------------------------------- multiPoint expansion

struct ExpansionCase {
  std::string name;
  config::Plugins plugins;  // queueSort/bind come from multiPoint or are added by the test
  std::map<std::string, std::vector<std::string>> want;  // point -> plugins (others empty)
  std::vector<std::pair<std::string, int64_t>> want_score_weights;
};

class MultiPointExpansionTest : public FrameworkTest {
 protected:
  MultiPointExpansionTest() {
    Register(Reg<AllPoints>("TestPlugin", &log_));
    Register(Reg<FakePreScoreScore>("ScorePlugin1", &log_, Spec(), Status::Success()));
    Register(Reg<FakePreScoreScore>("ScorePlugin2", &log_, Spec(), Status::Success()));
    Register(Reg<FakeScore>("ScoreWithNormalize1", &log_, Spec()));
  }
};

// Cases of kube-scheduler's TestNewFrameworkMultiPointExpansion.
// Long by design: kube-scheduler's multiPoint expansion cases, one row each.
TEST_F(MultiPointExpansionTest, ExpandsLikeKubeScheduler) {
  auto mp = [](std::vector<config::PluginRef> e) { return Set(std::move(e)); };
  const std::vector<std::string> all = {"TestPlugin"};
  std::vector<ExpansionCase> cases;
  {
    ExpansionCase c;
    c.name = "plugin expansion";
    c.plugins.multi_point = mp({{"TestPlugin", 5}});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "PreScore",
                    "Score", "Reserve", "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want_score_weights = {{"TestPlugin", 5}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "disable MultiPoint plugin at some extension points";
    c.plugins.multi_point = mp({{"TestPlugin"}});
    c.plugins.pre_score = Set({}, {"TestPlugin"});
    c.plugins.score = Set({}, {"TestPlugin"});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "multiple MultiPoint plugins";
    c.plugins.multi_point = mp({{"TestPlugin"}, {"ScorePlugin1"}});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want["PreScore"] = {"TestPlugin", "ScorePlugin1"};
    c.want["Score"] = {"TestPlugin", "ScorePlugin1"};
    c.want_score_weights = {{"TestPlugin", 1}, {"ScorePlugin1", 1}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "'*' disables the expansion at one point";
    c.plugins.multi_point = mp({{"TestPlugin"}, {"ScorePlugin1"}});
    c.plugins.pre_score = Set({}, {"*"});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want["Score"] = {"TestPlugin", "ScorePlugin1"};
    c.want_score_weights = {{"TestPlugin", 1}, {"ScorePlugin1", 1}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "specific extension point takes precedence and keeps its order";
    c.plugins.multi_point = mp({{"ScoreWithNormalize1"}, {"TestPlugin"}, {"ScorePlugin1"}});
    c.plugins.score = Set({{"ScorePlugin1"}, {"TestPlugin"}});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want["PreScore"] = {"TestPlugin", "ScorePlugin1"};
    c.want["Score"] = {"ScorePlugin1", "TestPlugin", "ScoreWithNormalize1"};
    c.want_score_weights = {{"ScorePlugin1", 1}, {"TestPlugin", 1}, {"ScoreWithNormalize1", 1}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "specific-only plugins come after the multiPoint ones";
    c.plugins.multi_point = mp({{"TestPlugin"}, {"ScorePlugin1"}});
    c.plugins.score = Set({{"ScoreWithNormalize1"}, {"ScorePlugin1"}, {"TestPlugin"}});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want["PreScore"] = {"TestPlugin", "ScorePlugin1"};
    c.want["Score"] = {"ScorePlugin1", "TestPlugin", "ScoreWithNormalize1"};
    c.want_score_weights = {{"ScorePlugin1", 1}, {"TestPlugin", 1}, {"ScoreWithNormalize1", 1}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "per-point weights override multiPoint weights";
    c.plugins.multi_point = mp({{"TestPlugin", 7}, {"ScorePlugin1", 9}});
    c.plugins.score = Set({{"ScorePlugin1", 5}, {"TestPlugin", 3}});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want["PreScore"] = {"TestPlugin", "ScorePlugin1"};
    c.want["Score"] = {"ScorePlugin1", "TestPlugin"};
    c.want_score_weights = {{"ScorePlugin1", 5}, {"TestPlugin", 3}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "override weights without loading a plugin twice";
    c.plugins.multi_point = mp({{"TestPlugin"}, {"ScorePlugin1"}});
    c.plugins.score = Set({{"ScorePlugin1", 5}, {"ScorePlugin2", 5}, {"TestPlugin", 3}});
    for (auto pt : {"PreEnqueue", "QueueSort", "PreFilter", "Filter", "PostFilter", "Reserve",
                    "Permit", "PreBind", "Bind", "PostBind"})
      c.want[pt] = all;
    c.want["PreScore"] = {"TestPlugin", "ScorePlugin1"};
    c.want["Score"] = {"ScorePlugin1", "TestPlugin", "ScorePlugin2"};
    c.want_score_weights = {{"ScorePlugin1", 5}, {"TestPlugin", 3}, {"ScorePlugin2", 5}};
    cases.push_back(c);
  }
  {
    // multiPoint.disabled is the loader's business (it drops defaults); the framework expands
    // multiPoint.enabled regardless.
    ExpansionCase c;
    c.name = "multiPoint disabled '*' does not stop the expansion";
    c.plugins.multi_point = Set({{"QS"}, {"Bind"}, {"ScorePlugin1"}}, {"*"});
    c.want["QueueSort"] = {"QS"};
    c.want["Bind"] = {"Bind"};
    c.want["PreScore"] = {"ScorePlugin1"};
    c.want["Score"] = {"ScorePlugin1"};
    c.want_score_weights = {{"ScorePlugin1", 1}};
    cases.push_back(c);
  }
  {
    ExpansionCase c;
    c.name = "disabled by name at a point";
    c.plugins.multi_point = mp({{"Bind"}, {"QS"}, {"ScorePlugin1"}});
    c.plugins.score = Set({}, {"ScorePlugin1"});
    c.want["QueueSort"] = {"QS"};
    c.want["Bind"] = {"Bind"};
    c.want["PreScore"] = {"ScorePlugin1"};
    cases.push_back(c);
  }

  const std::vector<std::string> points = {"PreEnqueue", "QueueSort", "PreFilter", "Filter",
                                           "PostFilter", "PreScore",  "Score",     "Reserve",
                                           "Permit",     "PreBind",   "Bind",      "PostBind"};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    config::Profile p;
    p.scheduler_name = "test-profile";
    p.plugins = c.plugins;
    auto fw = Build(p);
    ASSERT_NE(fw, nullptr);
    for (const auto& pt : points) {
      auto it = c.want.find(pt);
      std::vector<std::string> want = it == c.want.end() ? std::vector<std::string>{} : it->second;
      EXPECT_EQ(fw->ListPlugins(pt), want) << pt;
    }
    std::vector<std::pair<std::string, int64_t>> weights;
    for (const auto& e : fw->score_plugins()) weights.emplace_back(e.plugin->Name(), e.weight);
    EXPECT_EQ(weights, c.want_score_weights);
  }
}

TEST_F(MultiPointExpansionTest, ZeroWeightMeansOne) {
  config::Profile p = BaseProfile();
  p.plugins.score = Set({{"ScorePlugin1", 0}, {"ScorePlugin2", 4}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  ASSERT_EQ(fw->score_plugins().size(), 2u);
  EXPECT_EQ(fw->score_plugins()[0].weight, 1);
  EXPECT_EQ(fw->score_plugins()[1].weight, 4);
}

TEST_F(MultiPointExpansionTest, EnabledAtAPointWhileMultiPointHasItIsNotADuplicate) {
  config::Profile p;
  p.scheduler_name = "test-profile";
  p.plugins.multi_point = Set({{"QS"}, {"Bind"}, {"ScorePlugin1", 2}});
  p.plugins.score = Set({{"ScorePlugin1", 6}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  EXPECT_THAT(fw->ListPlugins("Score"), ElementsAre("ScorePlugin1"));
  EXPECT_EQ(fw->score_plugins()[0].weight, 6);
}

}  // namespace
}  // namespace berth
