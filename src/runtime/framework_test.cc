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

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "framework/parallelizer.h"
#include "runtime/scheduler_metrics.h"
#include "testing/builders.h"

namespace berth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testing::MakeNode;
using testing::MakePod;
using ::testing::UnorderedElementsAre;

// ---------------------------------------------------------------- fake plugins

// Records plugin calls in order; Filter/Score calls may come from several threads.
class CallLog {
 public:
  void Add(std::string entry) {
    std::lock_guard lock(mu_);
    calls_.push_back(std::move(entry));
  }
  std::vector<std::string> calls() const {
    std::lock_guard lock(mu_);
    return calls_;
  }
  bool Contains(const std::string& entry) const {
    std::lock_guard lock(mu_);
    return std::find(calls_.begin(), calls_.end(), entry) != calls_.end();
  }
  void Clear() {
    std::lock_guard lock(mu_);
    calls_.clear();
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> calls_;
};

class Named : public virtual Plugin {
 public:
  Named(std::string name, CallLog* log) : name_(std::move(name)), log_(log) {}
  std::string_view Name() const override { return name_; }

 protected:
  void Log(std::string_view point, std::string_view detail = "") const {
    if (!log_) return;
    std::string entry = std::string(point) + ":" + name_;
    if (!detail.empty()) entry += ":" + std::string(detail);
    log_->Add(std::move(entry));
  }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  CallLog* log_;
};

class FakeQueueSort final : public Named, public QueueSortPlugin {
 public:
  using Named::Named;
  bool Less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
};

class FakePreEnqueue final : public Named, public PreEnqueuePlugin {
 public:
  FakePreEnqueue(std::string name, CallLog* log, Status status)
      : Named(std::move(name), log), status_(std::move(status)) {}
  Status PreEnqueue(const Pod&) const override { return status_; }

 private:
  Status status_;
};

// Rejects the nodes in `reject` with `code` (kError gives an internal error).
class FakeFilter final : public Named, public FilterPlugin {
 public:
  FakeFilter(std::string name, CallLog* log, std::set<std::string> reject,
             Code code = Code::kUnschedulable)
      : Named(std::move(name), log), reject_(std::move(reject)), code_(code) {}
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    Log("Filter", node.name());
    if (!reject_.count(node.name())) return Status::Success();
    return Status(code_, name() + " rejects " + node.name());
  }

 private:
  std::set<std::string> reject_;
  Code code_;
};

// A PreFilter with its paired Filter. The Filter rejects every node, so a test sees whether it
// ran.
class FakePreFilter final : public Named, public PreFilterPlugin, public FilterPlugin {
 public:
  FakePreFilter(std::string name, CallLog* log, Status status,
                std::optional<std::set<std::string>> nodes = std::nullopt)
      : Named(std::move(name), log), status_(std::move(status)), nodes_(std::move(nodes)) {}
  Status PreFilter(CycleState&, const PodInfo&, std::span<const NodeInfo* const>,
                   PreFilterResult* result) override {
    Log("PreFilter");
    if (nodes_) result->node_names = *nodes_;
    return status_;
  }
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    Log("Filter", node.name());
    return Status::Unschedulable(name() + " filter");
  }

 private:
  Status status_;
  std::optional<std::set<std::string>> nodes_;
};

// Rejects a node that already has pods.
class AloneFilter final : public Named, public FilterPlugin {
 public:
  using Named::Named;
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo& node) const override {
    return node.pods().empty() ? Status::Success() : Status::Unschedulable("node has pods");
  }
};

struct NeighbourCount final : StateData {
  int added = 0;
  std::shared_ptr<StateData> Clone() const override {
    return std::make_shared<NeighbourCount>(*this);
  }
};
inline constexpr StateKey<NeighbourCount> kNeighbourKey{"test/neighbours"};

// Keeps a count of hypothetically added pods in the CycleState; Filter passes only when some
// pod was added (like required pod affinity that only a nominated pod satisfies).
class NeighbourPlugin final : public Named,
                              public PreFilterPlugin,
                              public FilterPlugin,
                              public PreFilterExtensions {
 public:
  using Named::Named;
  Status PreFilter(CycleState& state, const PodInfo&, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    state.Write(kNeighbourKey, std::make_shared<NeighbourCount>());
    return Status::Success();
  }
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState& state, const PodInfo&, const PodInfoPtr& added,
                const NodeInfo& node) const override {
    Log("AddPod", added->pod->metadata.name + "@" + node.name());
    state.ReadMutable(kNeighbourKey)->added++;
    return Status::Success();
  }
  Status RemovePod(CycleState& state, const PodInfo&, const PodInfoPtr&,
                   const NodeInfo&) const override {
    state.ReadMutable(kNeighbourKey)->added--;
    return Status::Success();
  }
  Status Filter(const CycleState& state, const PodInfo&, const NodeInfo&) const override {
    const NeighbourCount* c = state.Read(kNeighbourKey);
    return c && c->added > 0 ? Status::Success() : Status::Unschedulable("no neighbour");
  }
};

struct ScoreSpec {
  std::map<std::string, int64_t> scores;  // node -> raw score (missing: 0)
  Status status;                          // Score result
  // Normalization, when set.
  std::function<void(std::span<NodeScore>)> normalize;
  Status normalize_status;
};

ScoreSpec Spec(std::map<std::string, int64_t> scores = {}, Status status = Status::Success(),
               std::function<void(std::span<NodeScore>)> normalize = nullptr,
               Status normalize_status = Status::Success()) {
  ScoreSpec spec;
  spec.scores = std::move(scores);
  spec.status = std::move(status);
  spec.normalize = std::move(normalize);
  spec.normalize_status = std::move(normalize_status);
  return spec;
}

class FakeScore : public Named, public ScorePlugin {
 public:
  FakeScore(std::string name, CallLog* log, ScoreSpec spec)
      : Named(std::move(name), log), spec_(std::move(spec)) {}
  Status Score(const CycleState&, const PodInfo&, const NodeInfo& node,
               int64_t* score) const override {
    Log("Score", node.name());
    if (!spec_.status.IsSuccess()) return spec_.status;
    auto it = spec_.scores.find(node.name());
    *score = it == spec_.scores.end() ? 0 : it->second;
    return Status::Success();
  }
  bool HasNormalize() const override { return static_cast<bool>(spec_.normalize); }
  Status NormalizeScore(const CycleState&, const PodInfo&,
                        std::span<NodeScore> scores) const override {
    if (!spec_.normalize_status.IsSuccess()) return spec_.normalize_status;
    spec_.normalize(scores);
    return Status::Success();
  }

 private:
  ScoreSpec spec_;
};

class FakePreScoreScore final : public FakeScore, public PreScorePlugin {
 public:
  FakePreScoreScore(std::string name, CallLog* log, ScoreSpec spec, Status pre_score)
      : FakeScore(std::move(name), log, std::move(spec)), pre_score_(std::move(pre_score)) {}
  Status PreScore(CycleState&, const PodInfo&, std::span<const NodeInfo* const>) override {
    Log("PreScore");
    return pre_score_;
  }

 private:
  Status pre_score_;
};

class FakePostFilter final : public Named, public PostFilterPlugin {
 public:
  FakePostFilter(std::string name, CallLog* log, Status status,
                 std::optional<NominatingInfo> nominating = std::nullopt)
      : Named(std::move(name), log), status_(std::move(status)), nominating_(nominating) {}
  Status PostFilter(CycleState&, const PodInfo&, const NodeStatusMap&,
                    PostFilterResult* result) override {
    Log("PostFilter");
    result->nominating = nominating_;
    return status_;
  }

 private:
  Status status_;
  std::optional<NominatingInfo> nominating_;
};

class FakeReserve final : public Named, public ReservePlugin {
 public:
  FakeReserve(std::string name, CallLog* log, Status status)
      : Named(std::move(name), log), status_(std::move(status)) {}
  Status Reserve(CycleState&, const PodInfo&, const std::string& node) override {
    Log("Reserve", node);
    return status_;
  }
  void Unreserve(CycleState&, const PodInfo&, const std::string& node) override {
    Log("Unreserve", node);
  }

 private:
  Status status_;
};

class FakePermit final : public Named, public PermitPlugin {
 public:
  FakePermit(std::string name, CallLog* log, Status status, Duration timeout)
      : Named(std::move(name), log), status_(std::move(status)), timeout_(timeout) {}
  PermitDecision Permit(CycleState&, const PodInfo&, const std::string&) override {
    Log("Permit");
    return {status_, timeout_};
  }

 private:
  Status status_;
  Duration timeout_;
};

// Holds every pod at Permit until a pod labelled "last" arrives, which lets all waiting pods
// through (a gang of pods).
class GangPermit final : public Named, public PermitPlugin {
 public:
  GangPermit(std::string name, CallLog* log, Handle& handle)
      : Named(std::move(name), log), handle_(handle) {}
  PermitDecision Permit(CycleState&, const PodInfo& pod, const std::string&) override {
    if (!pod.pod->metadata.labels.count("last")) return {Status::Wait(), std::chrono::seconds(30)};
    handle_.IterateOverWaitingPods([&](WaitingPod& wp) { wp.Allow(Name()); });
    return {Status::Success(), Duration{}};
  }

 private:
  Handle& handle_;
};

class FakePreBind final : public Named, public PreBindPlugin {
 public:
  FakePreBind(std::string name, CallLog* log, Status status)
      : Named(std::move(name), log), status_(std::move(status)) {}
  Status PreBind(CycleState&, const PodInfo&, const std::string&) override {
    Log("PreBind");
    return status_;
  }

 private:
  Status status_;
};

class FakeBind final : public Named, public BindPlugin {
 public:
  FakeBind(std::string name, CallLog* log, Status status)
      : Named(std::move(name), log), status_(std::move(status)) {}
  Status Bind(CycleState&, const PodInfo&, const std::string&) override {
    Log("Bind");
    return status_;
  }

 private:
  Status status_;
};

// Implements every extension point (kube-scheduler's tests' "TestPlugin").
class AllPoints final : public Named,
                        public PreEnqueuePlugin,
                        public QueueSortPlugin,
                        public PreFilterPlugin,
                        public FilterPlugin,
                        public PostFilterPlugin,
                        public PreScorePlugin,
                        public ScorePlugin,
                        public ReservePlugin,
                        public PermitPlugin,
                        public PreBindPlugin,
                        public BindPlugin,
                        public PostBindPlugin {
 public:
  using Named::Named;
  Status PreEnqueue(const Pod&) const override { return Status::Success(); }
  bool Less(const QueuedPodInfo&, const QueuedPodInfo&) const override { return false; }
  Status PreFilter(CycleState&, const PodInfo&, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    return Status::Success();
  }
  Status Filter(const CycleState&, const PodInfo&, const NodeInfo&) const override {
    return Status::Success();
  }
  Status PostFilter(CycleState&, const PodInfo&, const NodeStatusMap&, PostFilterResult*) override {
    return Status::Unschedulable("no");
  }
  Status PreScore(CycleState&, const PodInfo&, std::span<const NodeInfo* const>) override {
    return Status::Success();
  }
  Status Score(const CycleState&, const PodInfo&, const NodeInfo&, int64_t* s) const override {
    *s = 0;
    return Status::Success();
  }
  Status Reserve(CycleState&, const PodInfo&, const std::string&) override {
    return Status::Success();
  }
  void Unreserve(CycleState&, const PodInfo&, const std::string&) override {}
  PermitDecision Permit(CycleState&, const PodInfo&, const std::string&) override {
    return {Status::Success(), Duration{}};
  }
  Status PreBind(CycleState&, const PodInfo&, const std::string&) override {
    return Status::Success();
  }
  Status Bind(CycleState&, const PodInfo&, const std::string&) override {
    return Status::Success();
  }
  void PostBind(CycleState&, const PodInfo&, const std::string&) override {}
};

// ---------------------------------------------------------------- helpers

template <class T, class... Args>
PluginRegistration Reg(const std::string& name, CallLog* log, Args... args) {
  PluginRegistration r;
  r.name = name;
  r.factory = [name, log, args...](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<T>(name, log, args...));
  };
  return r;
}

config::PluginSet Set(std::vector<config::PluginRef> enabled,
                      std::vector<std::string> disabled = {}) {
  return {std::move(enabled), std::move(disabled)};
}

std::set<std::string> Names(std::initializer_list<const char*> names) {
  return std::set<std::string>(names.begin(), names.end());
}

class FrameworkTest : public ::testing::Test {
 protected:
  FrameworkTest() {
    Register(Reg<FakeQueueSort>("QS", &log_));
    Register(Reg<FakeBind>("Bind", &log_, Status::Success()));
  }

  void Register(PluginRegistration r) {
    auto added = registry_.Add(std::move(r));
    ASSERT_TRUE(added.ok()) << added.error().message;
  }

  // A valid profile: one queue sort, one binder, nothing else.
  static config::Profile BaseProfile() {
    config::Profile p;
    p.scheduler_name = "test-profile";
    p.plugins.queue_sort = Set({{"QS"}});
    p.plugins.bind = Set({{"Bind"}});
    return p;
  }

  FrameworkServices Services() { return {&cluster_, &clock_, &parallelizer_, &nominator_, 1}; }

  std::unique_ptr<Framework> Build(const config::Profile& profile) {
    auto r = Framework::Create(profile, registry_, Services());
    if (!r.ok()) {
      ADD_FAILURE() << "Framework::Create: " << r.error().message;
      return nullptr;
    }
    return std::move(r).value();
  }

  std::string BuildError(const config::Profile& profile) {
    auto r = Framework::Create(profile, registry_, Services());
    if (r.ok()) {
      ADD_FAILURE() << "Framework::Create succeeded";
      return "";
    }
    return r.error().message;
  }

  // Nodes n1..nN, no pods, as the snapshot of the next cycle.
  void UseNodes(Framework& fw, int n) {
    std::vector<std::shared_ptr<const Node>> nodes;
    for (int i = 1; i <= n; ++i)
      nodes.push_back(MakeNode().Name("n" + std::to_string(i)).Capacity({{"cpu", "4"}}).Obj());
    snapshot_ = Snapshot::Build(nodes, {});
    fw.SetSnapshot(&snapshot_);
  }

  const NodeInfo& NodeNamed(const std::string& name) { return *snapshot_.Get(name); }

  std::vector<const NodeInfo*> AllNodes() {
    return {snapshot_.nodes().begin(), snapshot_.nodes().end()};
  }

  CallLog log_;
  Registry registry_;
  InMemoryCluster cluster_;
  FakeClock clock_;
  testing::InlineParallelizer parallelizer_;
  testing::FakeNominator nominator_;
  Snapshot snapshot_;
  PodInfoPtr pod_ = MakePod().Name("p").Priority(10).Info();
};

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

// ---------------------------------------------------------------- PreEnqueue

TEST_F(FrameworkTest, PreEnqueueReturnsFirstRejectionWithPlugin) {
  Register(Reg<FakePreEnqueue>("Open", &log_, Status::Success()));
  Register(Reg<FakePreEnqueue>("Gate", &log_, Status::Unresolvable("gated")));
  Register(Reg<FakePreEnqueue>("Broken", &log_, Status::Error("boom")));
  config::Profile p = BaseProfile();
  p.plugins.pre_enqueue = Set({{"Open"}, {"Gate"}, {"Broken"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  Status s = fw->RunPreEnqueuePlugins(*pod_->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "gated");
  EXPECT_EQ(s.plugin(), "Gate");

  config::Profile q = BaseProfile();
  q.plugins.pre_enqueue = Set({{"Broken"}});
  auto fw2 = Build(q);
  ASSERT_NE(fw2, nullptr);
  Status e = fw2->RunPreEnqueuePlugins(*pod_->pod);
  EXPECT_TRUE(e.IsError());
  EXPECT_EQ(e.plugin(), "Broken");
}

// ---------------------------------------------------------------- PreFilter

TEST_F(FrameworkTest, PreFilterSkipDisablesThePairedFilterOnly) {
  Register(Reg<FakePreFilter>("Skipper", &log_, Status::Skip()));
  Register(Reg<FakePreFilter>("Runner", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Skipper"}, {"Runner"}});
  p.plugins.filter = Set({{"Skipper"}, {"Runner"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_TRUE(s.IsSuccess());
  EXPECT_TRUE(result.AllNodes());
  EXPECT_THAT(rejected_by, IsEmpty());
  EXPECT_THAT(state.skipped_filters(), ElementsAre(true, false));

  // Skipper's filter (which rejects everything) is not called; Runner's is.
  log_.Clear();
  Status f = fw->RunFilterPlugins(state, *pod_, NodeNamed("n1"));
  EXPECT_EQ(f.plugin(), "Runner");
  EXPECT_EQ(f.Message(), "Runner filter");
  EXPECT_FALSE(log_.Contains("Filter:Skipper:n1"));
  EXPECT_TRUE(log_.Contains("Filter:Runner:n1"));
}

TEST_F(FrameworkTest, PreFilterUnresolvableStopsImmediately) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Unresolvable("a says no")));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "a says no");
  EXPECT_EQ(s.plugin(), "A");
  EXPECT_THAT(rejected_by, ElementsAre("A"));
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A"));
}

// Unschedulable lets later PreFilters run (their state is needed by preemption); as in
// kube-scheduler, the status returned is the last Unschedulable one.
TEST_F(FrameworkTest, PreFilterUnschedulableRunsLaterPlugins) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Unschedulable("a says no")));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success()));
  Register(Reg<FakePreFilter>("C", &log_, Status::Unschedulable("c says no")));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "a says no");
  EXPECT_EQ(s.plugin(), "A");
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A", "PreFilter:B"));

  log_.Clear();
  config::Profile q = BaseProfile();
  q.plugins.pre_filter = Set({{"A"}, {"B"}, {"C"}});
  auto fw2 = Build(q);
  ASSERT_NE(fw2, nullptr);
  UseNodes(*fw2, 2);
  CycleState state2;
  rejected_by.clear();
  Status s2 = fw2->RunPreFilterPlugins(state2, *pod_, &result, &rejected_by);
  EXPECT_EQ(s2.code(), Code::kUnschedulable);
  EXPECT_EQ(s2.Message(), "c says no");
  EXPECT_EQ(s2.plugin(), "C");
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A", "PreFilter:B", "PreFilter:C"));
}

TEST_F(FrameworkTest, PreFilterErrorIsWrapped) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Error("disk on fire")));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 1);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running PreFilter plugin \"A\": disk on fire");
  EXPECT_EQ(s.plugin(), "A");
}

TEST_F(FrameworkTest, PreFilterResultsIntersect) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Success(), Names({"n1", "n2"})));
  Register(Reg<FakePreFilter>("All", &log_, Status::Success()));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success(), Names({"n2", "n3"})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"All"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 3);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_TRUE(s.IsSuccess());
  ASSERT_FALSE(result.AllNodes());
  EXPECT_THAT(*result.node_names, ElementsAre("n2"));
  EXPECT_THAT(rejected_by, ElementsAre("A", "B"));
}

TEST_F(FrameworkTest, EmptyPreFilterIntersectionFromOnePlugin) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Success(), Names({})));
  Register(Reg<FakePreFilter>("Later", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"Later"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin A");
  EXPECT_THAT(rejected_by, ElementsAre("A"));
  EXPECT_THAT(log_.calls(), ElementsAre("PreFilter:A"));
}

// The plugin names are listed sorted, whatever their order in the profile.
TEST_F(FrameworkTest, EmptyPreFilterIntersectionFromSeveralPlugins) {
  Register(Reg<FakePreFilter>("Zeta", &log_, Status::Success(), Names({"n1"})));
  Register(Reg<FakePreFilter>("Alpha", &log_, Status::Success(), Names({"n2"})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Zeta"}, {"Alpha"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously");
  EXPECT_THAT(rejected_by, ElementsAre("Alpha", "Zeta"));
}

TEST_F(FrameworkTest, UnschedulableThenEmptyIntersectionIsUnresolvable) {
  Register(Reg<FakePreFilter>("A", &log_, Status::Unschedulable("a says no")));
  Register(Reg<FakePreFilter>("B", &log_, Status::Success(), Names({})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"A"}, {"B"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  Status s = fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.Message(), "node(s) didn't satisfy plugin B");
}

// ---------------------------------------------------------------- plugin metrics

// Counts what the framework reports per plugin: "point/plugin" evaluations and
// "point/plugin/code" timed executions, with their durations.
class PluginMetricsRecorder final : public SchedulerMetricsSink {
 public:
  class Series final : public PluginSeries {
   public:
    Series(PluginMetricsRecorder* owner, std::string key) : owner_(owner), key_(std::move(key)) {}
    void Executed(Code code, Duration d) override {
      std::lock_guard lock(owner_->mu_);
      owner_->executions_[key_ + "/" + std::string(CodeName(code))].push_back(d);
    }
    void Evaluated(uint64_t n) override {
      std::lock_guard lock(owner_->mu_);
      owner_->evaluations_[key_] += n;
    }

   private:
    PluginMetricsRecorder* owner_;
    std::string key_;
  };
  void ExtensionPoint(std::string_view, std::string_view, const Status&, Duration) override {}
  void IncomingPod(std::string_view, std::string_view) override {}
  PluginSeries* Plugin(std::string_view profile, std::string_view point,
                       std::string_view plugin) override {
    EXPECT_EQ(profile, "test-profile");
    series_.push_back(std::make_unique<Series>(this, fmt::format("{}/{}", point, plugin)));
    return series_.back().get();
  }
  void PermitWait(std::string_view result, Duration d) override {
    std::lock_guard lock(mu_);
    permit_waits_.emplace_back(std::string(result), d);
  }
  std::map<std::string, uint64_t> evaluations() const {
    std::lock_guard lock(mu_);
    return evaluations_;
  }
  std::map<std::string, std::vector<Duration>> executions() const {
    std::lock_guard lock(mu_);
    return executions_;
  }
  std::vector<std::pair<std::string, Duration>> permit_waits() const {
    std::lock_guard lock(mu_);
    return permit_waits_;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::unique_ptr<Series>> series_;
  std::map<std::string, uint64_t> evaluations_;
  std::map<std::string, std::vector<Duration>> executions_;
  std::vector<std::pair<std::string, Duration>> permit_waits_;
};

// A clock that moves 1 ms every time it is read, so every timed call lasts 1 ms.
class TickingClock final : public Clock {
 public:
  TimePoint Now() const override {
    return TimePoint{} + std::chrono::milliseconds(ticks_.fetch_add(1) + 1);
  }

 private:
  mutable std::atomic<int64_t> ticks_{0};
};

TEST_F(FrameworkTest, PluginsAreTimedOnlyInSampledCyclesAndEvaluationsAlwaysCount) {
  Register(Reg<FakePreFilter>("Skipper", &log_, Status::Skip()));
  Register(Reg<FakePreFilter>("Runner", &log_, Status::Success()));
  Register(Reg<FakeFilter>("F1", &log_, Names({"n1"})));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Skipper"}, {"Runner"}});
  p.plugins.filter = Set({{"F1"}});
  PluginMetricsRecorder sink;
  TickingClock clock;
  FrameworkServices services = Services();
  services.metrics = &sink;
  services.clock = &clock;
  auto built = Framework::Create(p, registry_, services);
  ASSERT_TRUE(built.ok()) << built.error().message;
  Framework& fw = **built;
  UseNodes(fw, 2);
  PreFilterResult result;
  std::vector<std::string> rejected_by;

  // Not sampled: evaluations count (a skipped plugin was not evaluated), nothing is timed.
  CycleState plain;
  ASSERT_TRUE(fw.RunPreFilterPlugins(plain, *pod_, &result, &rejected_by).IsSuccess());
  EXPECT_EQ(fw.RunFilterPlugins(plain, *pod_, NodeNamed("n1"), true).code(), Code::kUnschedulable);
  EXPECT_THAT(sink.executions(), IsEmpty());
  EXPECT_EQ(sink.evaluations()["PreFilter/Runner"], 1u);
  EXPECT_EQ(sink.evaluations().count("PreFilter/Skipper"), 0u);

  // Sampled: every PreFilter call is timed with its code; Filter only where asked.
  CycleState sampled;
  sampled.SetRecordPluginMetrics(true);
  ASSERT_TRUE(fw.RunPreFilterPlugins(sampled, *pod_, &result, &rejected_by).IsSuccess());
  EXPECT_TRUE(fw.RunFilterPlugins(sampled, *pod_, NodeNamed("n2"), false).IsSuccess());
  EXPECT_TRUE(fw.RunFilterPlugins(sampled, *pod_, NodeNamed("n2"), true).IsSuccess());
  EXPECT_FALSE(fw.RunFilterPlugins(sampled, *pod_, NodeNamed("n1"), true).IsSuccess());
  auto executions = sink.executions();
  EXPECT_THAT(executions["PreFilter/Skipper/Skip"], ElementsAre(std::chrono::milliseconds(1)));
  EXPECT_THAT(executions["PreFilter/Runner/Success"], ElementsAre(std::chrono::milliseconds(1)));
  EXPECT_EQ(executions["Filter/F1/Success"].size(), 1u);
  EXPECT_EQ(executions["Filter/F1/Unschedulable"].size(), 1u);
  EXPECT_EQ(sink.evaluations()["PreFilter/Runner"], 2u);

  // Filter evaluations come from where each node stopped: passed nodes and those rejected at
  // F1 (index 0) or later all ran F1.
  fw.CountFilterEvaluations(sampled, 2, std::vector<uint64_t>{3});
  EXPECT_EQ(sink.evaluations()["Filter/F1"], 5u);
}

// ---------------------------------------------------------------- Filter

TEST_F(FrameworkTest, FirstFailingFilterWinsAndIsStamped) {
  Register(Reg<FakeFilter>("F1", &log_, Names({"n1"})));
  Register(Reg<FakeFilter>("F2", &log_, Names({"n1", "n2"}), Code::kUnschedulableAndUnresolvable));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"F1"}, {"F2"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 3);
  CycleState state;

  Status s1 = fw->RunFilterPlugins(state, *pod_, NodeNamed("n1"));
  EXPECT_EQ(s1.code(), Code::kUnschedulable);
  EXPECT_EQ(s1.plugin(), "F1");
  EXPECT_EQ(s1.Message(), "F1 rejects n1");
  EXPECT_FALSE(log_.Contains("Filter:F2:n1"));

  Status s2 = fw->RunFilterPlugins(state, *pod_, NodeNamed("n2"));
  EXPECT_EQ(s2.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s2.plugin(), "F2");
  EXPECT_EQ(s2.Message(), "F2 rejects n2");

  EXPECT_TRUE(fw->RunFilterPlugins(state, *pod_, NodeNamed("n3")).IsSuccess());
}

TEST_F(FrameworkTest, FilterErrorIsWrapped) {
  Register(Reg<FakeFilter>("F", &log_, Names({"n1"}), Code::kError));
  Register(Reg<FakeFilter>("Wait", &log_, Names({"n2"}), Code::kWait));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"F"}, {"Wait"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  Status s = fw->RunFilterPlugins(state, *pod_, NodeNamed("n1"));
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running \"F\" filter plugin: F rejects n1");
  EXPECT_EQ(s.plugin(), "F");

  // Any status a filter may not return becomes an error too.
  Status w = fw->RunFilterPlugins(state, *pod_, NodeNamed("n2"));
  EXPECT_TRUE(w.IsError());
  EXPECT_EQ(w.Message(), "running \"Wait\" filter plugin: Wait rejects n2");
  EXPECT_EQ(w.plugin(), "Wait");
}

// ---------------------------------------------------------------- Filter with nominated pods

TEST_F(FrameworkTest, NominatedPodsOfHigherOrEqualPriorityAreAddedFirst) {
  Register(Reg<AloneFilter>("Alone", &log_));
  config::Profile p = BaseProfile();
  p.plugins.filter = Set({{"Alone"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;

  struct Case {
    std::string name;
    PodInfoPtr nominated;
    bool fits;
  };
  const std::vector<Case> cases = {
      {"none", nullptr, true},
      {"higher priority", MakePod().Name("hi").Priority(20).Info(), false},
      {"equal priority", MakePod().Name("eq").Priority(10).Info(), false},
      {"lower priority is ignored", MakePod().Name("lo").Priority(5).Info(), true},
      {"the pod itself is ignored", MakePod().Name("p").Priority(10).Info(), true},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    nominator_.pods.clear();
    if (c.nominated) nominator_.pods["n1"] = {c.nominated};
    fw->SetSnapshot(&snapshot_);
    Status s = fw->RunFilterPluginsWithNominatedPods(state, *pod_, NodeNamed("n1"));
    EXPECT_EQ(s.IsSuccess(), c.fits) << s.Message();
    if (!c.fits) {
      EXPECT_EQ(s.plugin(), "Alone");
      EXPECT_EQ(s.Message(), "node has pods");
    }
    // Pods nominated elsewhere never matter.
    EXPECT_TRUE(fw->RunFilterPluginsWithNominatedPods(state, *pod_, NodeNamed("n2")).IsSuccess());
  }
  // The snapshot node itself is untouched.
  EXPECT_THAT(NodeNamed("n1").pods(), IsEmpty());
}

// The second pass runs without the nominated pods: a filter that passes only because of them
// (like pod affinity) must pass on its own too.
TEST_F(FrameworkTest, SecondPassRunsWithoutNominatedPods) {
  Register(Reg<NeighbourPlugin>("Neighbour", &log_));
  config::Profile p = BaseProfile();
  p.plugins.pre_filter = Set({{"Neighbour"}});
  p.plugins.filter = Set({{"Neighbour"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 1);
  CycleState state;
  PreFilterResult result;
  std::vector<std::string> rejected_by;
  ASSERT_TRUE(fw->RunPreFilterPlugins(state, *pod_, &result, &rejected_by).IsSuccess());

  nominator_.pods["n1"] = {MakePod().Name("friend").Priority(100).Info()};
  fw->SetSnapshot(&snapshot_);
  log_.Clear();
  Status s = fw->RunFilterPluginsWithNominatedPods(state, *pod_, NodeNamed("n1"));
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "no neighbour");
  EXPECT_EQ(s.plugin(), "Neighbour");
  // AddPod ran once, on a clone: the cycle's state still counts no neighbour.
  EXPECT_THAT(log_.calls(), ElementsAre("AddPod:Neighbour:friend@n1"));
  EXPECT_EQ(state.Read(kNeighbourKey)->added, 0);

  // The first pass alone (state with the nominated pod) would have passed.
  CycleState with = state.Clone();
  with.ReadMutable(kNeighbourKey)->added = 1;
  EXPECT_TRUE(fw->RunFilterPlugins(with, *pod_, NodeNamed("n1")).IsSuccess());
}

// ---------------------------------------------------------------- Score

std::function<void(std::span<NodeScore>)> DefaultNormalize() {
  return [](std::span<NodeScore> s) { DefaultNormalizeScore(kMaxNodeScore, false, s); };
}

TEST_F(FrameworkTest, ScoresAreNormalizedThenWeighted) {
  Register(Reg<FakeScore>("S1", &log_, Spec({{"n1", 10}, {"n2", 20}, {"n3", 30}})));
  Register(Reg<FakeScore>(
      "S2", &log_, Spec({{"n1", 1}, {"n2", 2}, {"n3", 4}}, Status::Success(), DefaultNormalize())));
  config::Profile p = BaseProfile();
  p.plugins.score = Set({{"S1"}, {"S2", 2}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 3);
  CycleState state;
  ASSERT_TRUE(fw->RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
  ScoreTable table;
  Status s = fw->RunScorePlugins(state, *pod_, AllNodes(), &table);
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  ASSERT_EQ(table.nodes.size(), 3u);
  EXPECT_EQ(table.nodes[0]->name(), "n1");
  EXPECT_THAT(table.plugin_ran, ElementsAre(true, true));
  EXPECT_THAT(table.plugin_scores[0], ElementsAre(10, 20, 30));
  EXPECT_THAT(table.plugin_scores[1], ElementsAre(25, 50, 100));
  EXPECT_THAT(table.totals, ElementsAre(10 + 2 * 25, 20 + 2 * 50, 30 + 2 * 100));
}

TEST_F(FrameworkTest, ScoresInParallelMatchSequentialScores) {
  ScoreSpec spec;
  for (int i = 1; i <= 300; ++i) spec.scores["n" + std::to_string(i)] = i % 101;
  Register(Reg<FakeScore>("S", nullptr, spec));
  config::Profile p = BaseProfile();
  p.plugins.score = Set({{"S", 3}});
  ThreadPoolParallelizer pool(4);
  FrameworkServices services = Services();
  services.parallelizer = &pool;
  auto r = Framework::Create(p, registry_, services);
  ASSERT_TRUE(r.ok()) << r.error().message;
  auto fw = std::move(r).value();
  UseNodes(*fw, 300);
  CycleState state;
  ASSERT_TRUE(fw->RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
  ScoreTable table;
  ASSERT_TRUE(fw->RunScorePlugins(state, *pod_, AllNodes(), &table).IsSuccess());
  for (size_t i = 0; i < table.nodes.size(); ++i) {
    int64_t want = spec.scores[table.nodes[i]->name()];
    EXPECT_EQ(table.plugin_scores[0][i], want);
    EXPECT_EQ(table.totals[i], 3 * want);
  }
}

TEST_F(FrameworkTest, PreScoreSkipDropsThePluginFromScoring) {
  Register(
      Reg<FakePreScoreScore>("Kept", &log_, Spec({{"n1", 40}, {"n2", 60}}), Status::Success()));
  Register(
      Reg<FakePreScoreScore>("Skipped", &log_, Spec({{"n1", 100}, {"n2", 100}}), Status::Skip()));
  config::Profile p = BaseProfile();
  p.plugins.pre_score = Set({{"Kept"}, {"Skipped"}});
  p.plugins.score = Set({{"Kept"}, {"Skipped", 5}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  ASSERT_TRUE(fw->RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
  EXPECT_THAT(state.skipped_scores(), ElementsAre(false, true));
  ScoreTable table;
  ASSERT_TRUE(fw->RunScorePlugins(state, *pod_, AllNodes(), &table).IsSuccess());
  EXPECT_THAT(table.plugin_ran, ElementsAre(true, false));
  EXPECT_THAT(table.totals, ElementsAre(40, 60));
  EXPECT_FALSE(log_.Contains("Score:Skipped:n1"));
  EXPECT_TRUE(log_.Contains("Score:Kept:n1"));
}

TEST_F(FrameworkTest, PreScoreErrorIsWrapped) {
  Register(Reg<FakePreScoreScore>("Skipper", &log_, Spec(), Status::Skip()));
  Register(Reg<FakePreScoreScore>("Bad", &log_, Spec(), Status::Unschedulable("nope")));
  config::Profile p = BaseProfile();
  p.plugins.pre_score = Set({{"Skipper"}, {"Bad"}});
  p.plugins.score = Set({{"Skipper"}, {"Bad"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  UseNodes(*fw, 2);
  CycleState state;
  Status s = fw->RunPreScorePlugins(state, *pod_, AllNodes());
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running PreScore plugin \"Bad\": nope");
}

TEST_F(FrameworkTest, ScoreErrorsHaveKubeSchedulerText) {
  struct Case {
    std::string name;
    ScoreSpec spec;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"score fails", Spec({}, Status::Error("boom")),
       "running Score plugins: plugin \"S\" failed with: boom"},
      {"normalize fails",
       Spec({}, Status::Success(), DefaultNormalize(), Status::Error("bad normalize")),
       "running Normalize on Score plugins: plugin \"S\" failed with: bad normalize"},
      {"score above the maximum", Spec({{"n1", 101}}),
       "applying score defaultWeights on Score plugins: plugin \"S\" returns an invalid score "
       "101, it should in the range of [0, 100] after normalizing"},
      {"normalized score below the minimum",
       Spec({{"n1", 1}}, Status::Success(),
            [](std::span<NodeScore> s) {
              for (auto& x : s) x.score = -1;
            }),
       "applying score defaultWeights on Score plugins: plugin \"S\" returns an invalid score "
       "-1, it should in the range of [0, 100] after normalizing"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Registry registry;
    ASSERT_TRUE(registry.Add(Reg<FakeQueueSort>("QS", nullptr)).ok());
    ASSERT_TRUE(registry.Add(Reg<FakeBind>("Bind", nullptr, Status::Success())).ok());
    ASSERT_TRUE(registry.Add(Reg<FakeScore>("S", nullptr, c.spec)).ok());
    config::Profile p = BaseProfile();
    p.plugins.score = Set({{"S"}});
    auto r = Framework::Create(p, registry, Services());
    ASSERT_TRUE(r.ok()) << r.error().message;
    auto& fw = **r;
    UseNodes(fw, 2);
    CycleState state;
    ASSERT_TRUE(fw.RunPreScorePlugins(state, *pod_, AllNodes()).IsSuccess());
    ScoreTable table;
    Status s = fw.RunScorePlugins(state, *pod_, AllNodes(), &table);
    EXPECT_TRUE(s.IsError());
    EXPECT_EQ(s.Message(), c.want);
  }
}

// ---------------------------------------------------------------- PostFilter

class PostFilterTest : public FrameworkTest {
 protected:
  Status Run(std::vector<std::string> plugins, PostFilterResult* result,
             std::vector<std::string>* messages) {
    config::Profile p = BaseProfile();
    for (const auto& n : plugins) p.plugins.post_filter.enabled.push_back({n});
    fw_ = Build(p);
    if (!fw_) return Status::Error("no framework");
    UseNodes(*fw_, 1);
    CycleState state;
    return fw_->RunPostFilterPlugins(state, *pod_, NodeStatusMap{}, result, messages);
  }
  std::unique_ptr<Framework> fw_;
};

TEST_F(PostFilterTest, MessagesOfPluginsThatCouldNotHelpAreCollected) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Unschedulable("p2 could not help")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2"}, &result, &messages);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "P1");
  EXPECT_THAT(s.reasons(), ElementsAre("p1 could not help", "p2 could not help"));
  EXPECT_THAT(messages, ElementsAre("p1 could not help", "p2 could not help"));
  EXPECT_FALSE(result.nominating.has_value());
}

TEST_F(PostFilterTest, SuccessStopsAndReturnsTheNomination) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Success(), NominatingInfo{"n1", true}));
  Register(Reg<FakePostFilter>("P3", &log_, Status::Unschedulable("never")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2", "P3"}, &result, &messages);
  EXPECT_TRUE(s.IsSuccess());
  ASSERT_TRUE(result.nominating.has_value());
  EXPECT_EQ(result.nominating->node_name, "n1");
  EXPECT_THAT(log_.calls(), ElementsAre("PostFilter:P1", "PostFilter:P2"));
}

// A rejecting plugin's Override nomination (e.g. clearing it) is kept; a Noop one is not.
TEST_F(PostFilterTest, LastMeaningfulNominationOfRejectingPluginsIsKept) {
  Register(
      Reg<FakePostFilter>("Clears", &log_, Status::Unschedulable("a"), NominatingInfo{"", true}));
  Register(
      Reg<FakePostFilter>("Noop", &log_, Status::Unschedulable("b"), NominatingInfo{"n9", false}));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"Clears", "Noop"}, &result, &messages);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  ASSERT_TRUE(result.nominating.has_value());
  EXPECT_TRUE(result.nominating->override_nomination);
  EXPECT_EQ(result.nominating->node_name, "");
}

// UnschedulableAndUnresolvable stops the chain; its message alone is the PostFilter message.
TEST_F(PostFilterTest, UnresolvableStopsTheChain) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Unresolvable("p2 gives up")));
  Register(Reg<FakePostFilter>("P3", &log_, Status::Unschedulable("never")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2", "P3"}, &result, &messages);
  EXPECT_EQ(s.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(s.plugin(), "P2");
  EXPECT_EQ(s.Message(), "p2 gives up");
  EXPECT_THAT(messages, ElementsAre("p2 gives up"));
  EXPECT_THAT(log_.calls(), ElementsAre("PostFilter:P1", "PostFilter:P2"));
}

TEST_F(PostFilterTest, ErrorStopsTheChain) {
  Register(Reg<FakePostFilter>("P1", &log_, Status::Unschedulable("p1 could not help")));
  Register(Reg<FakePostFilter>("P2", &log_, Status::Error("exploded")));
  PostFilterResult result;
  std::vector<std::string> messages;
  Status s = Run({"P1", "P2"}, &result, &messages);
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.plugin(), "P2");
  EXPECT_EQ(s.Message(), "exploded");
  EXPECT_THAT(messages, ElementsAre("exploded"));
}

// ---------------------------------------------------------------- Reserve

TEST_F(FrameworkTest, ReserveRunsInOrderAndUnreserveInReverse) {
  Register(Reg<FakeReserve>("R1", &log_, Status::Success()));
  Register(Reg<FakeReserve>("R2", &log_, Status::Success()));
  Register(Reg<FakeReserve>("R3", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.reserve = Set({{"R1"}, {"R2"}, {"R3"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_TRUE(fw->RunReservePluginsReserve(state, *pod_, "n1").IsSuccess());
  fw->RunReservePluginsUnreserve(state, *pod_, "n1");
  EXPECT_THAT(log_.calls(), ElementsAre("Reserve:R1:n1", "Reserve:R2:n1", "Reserve:R3:n1",
                                        "Unreserve:R3:n1", "Unreserve:R2:n1", "Unreserve:R1:n1"));
}

TEST_F(FrameworkTest, ReserveFailureStopsAtThatPlugin) {
  Register(Reg<FakeReserve>("R1", &log_, Status::Success()));
  Register(Reg<FakeReserve>("R2", &log_, Status::Unschedulable("full")));
  Register(Reg<FakeReserve>("R3", &log_, Status::Success()));
  Register(Reg<FakeReserve>("RE", &log_, Status::Error("db down")));
  config::Profile p = BaseProfile();
  p.plugins.reserve = Set({{"R1"}, {"R2"}, {"R3"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;
  Status s = fw->RunReservePluginsReserve(state, *pod_, "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "R2");
  EXPECT_EQ(s.Message(), "full");
  EXPECT_THAT(log_.calls(), ElementsAre("Reserve:R1:n1", "Reserve:R2:n1"));

  config::Profile q = BaseProfile();
  q.plugins.reserve = Set({{"RE"}});
  auto fw2 = Build(q);
  ASSERT_NE(fw2, nullptr);
  Status e = fw2->RunReservePluginsReserve(state, *pod_, "n1");
  EXPECT_TRUE(e.IsError());
  EXPECT_EQ(e.Message(), "running Reserve plugin \"RE\": db down");
  EXPECT_EQ(e.plugin(), "RE");
}

// ---------------------------------------------------------------- Permit

class PermitTest : public FrameworkTest {
 protected:
  PermitTest() {
    Register(Reg<FakePermit>("Ok", &log_, Status::Success(), Duration{}));
    Register(Reg<FakePermit>("Wait10", &log_, Status::Wait(), Duration{std::chrono::seconds(10)}));
    Register(Reg<FakePermit>("Wait20", &log_, Status::Wait(), Duration{std::chrono::seconds(20)}));
    Register(
        Reg<FakePermit>("WaitLong", &log_, Status::Wait(), Duration{std::chrono::minutes(20)}));
    Register(Reg<FakePermit>("No", &log_, Status::Unschedulable("not now"), Duration{}));
    Register(Reg<FakePermit>("Broken", &log_, Status::Error("kaput"), Duration{}));
    PluginRegistration gang;
    gang.name = "Gang";
    CallLog* log = &log_;
    gang.factory = [log](const PluginArgs*, Handle& h) -> Result<std::unique_ptr<Plugin>> {
      return std::unique_ptr<Plugin>(std::make_unique<GangPermit>("Gang", log, h));
    };
    Register(std::move(gang));
  }
  std::unique_ptr<Framework> WithPermits(std::vector<std::string> names) {
    config::Profile p = BaseProfile();
    for (const auto& n : names) p.plugins.permit.enabled.push_back({n});
    return Build(p);
  }
};

TEST_F(PermitTest, AllSuccessIsSuccess) {
  auto fw = WithPermits({"Ok"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsSuccess());
  EXPECT_EQ(fw->GetWaitingPod(pod_->pod->metadata.uid), nullptr);
  EXPECT_TRUE(fw->WaitOnPermit(*pod_->pod).IsSuccess());
}

TEST_F(PermitTest, RejectionAndErrorAreStamped) {
  auto fw = WithPermits({"Wait10", "No", "Ok"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  Status s = fw->RunPermitPlugins(state, *pod_, "n1");
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "No");
  EXPECT_EQ(s.Message(), "not now");
  EXPECT_THAT(log_.calls(), ElementsAre("Permit:Wait10", "Permit:No"));
  EXPECT_EQ(fw->GetWaitingPod(pod_->pod->metadata.uid), nullptr);

  auto fw2 = WithPermits({"Broken"});
  ASSERT_NE(fw2, nullptr);
  Status e = fw2->RunPermitPlugins(state, *pod_, "n1");
  EXPECT_TRUE(e.IsError());
  EXPECT_EQ(e.Message(), "running Permit plugin \"Broken\": kaput");
  EXPECT_EQ(e.plugin(), "Broken");
}

TEST_F(PermitTest, WaitingPodIsReleasedWhenEveryWaitingPluginAllows) {
  auto fw = WithPermits({"Wait10", "Ok", "Wait20"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  std::shared_ptr<WaitingPod> wp = fw->GetWaitingPod(pod_->pod->metadata.uid);
  ASSERT_NE(wp, nullptr);
  EXPECT_EQ(wp->pod().metadata.name, "p");
  EXPECT_THAT(wp->PendingPlugins(), UnorderedElementsAre("Wait10", "Wait20"));
  int seen = 0;
  fw->IterateOverWaitingPods([&](WaitingPod& w) {
    ++seen;
    EXPECT_EQ(w.pod().metadata.uid, pod_->pod->metadata.uid);
  });
  EXPECT_EQ(seen, 1);

  auto waiter = std::async(std::launch::async, [&] { return fw->WaitOnPermit(*pod_->pod); });
  wp->Allow("Wait10");
  EXPECT_THAT(wp->PendingPlugins(), ElementsAre("Wait20"));
  EXPECT_EQ(waiter.wait_for(std::chrono::milliseconds(50)), std::future_status::timeout);
  wp->Allow("Wait20");
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  EXPECT_TRUE(waiter.get().IsSuccess());
  // Once the wait is over, the pod is no longer waiting.
  EXPECT_EQ(fw->GetWaitingPod(pod_->pod->metadata.uid), nullptr);
}

TEST_F(PermitTest, PermitWaitIsReportedWithItsResult) {
  config::Profile p = BaseProfile();
  p.plugins.permit.enabled.push_back({"Wait10"});
  PluginMetricsRecorder sink;
  FrameworkServices services = Services();
  services.metrics = &sink;
  auto built = Framework::Create(p, registry_, services);
  ASSERT_TRUE(built.ok()) << built.error().message;
  Framework& fw = **built;
  CycleState state;
  // A pod that did not wait has no wait to report.
  EXPECT_TRUE(fw.WaitOnPermit(*pod_->pod).IsSuccess());
  EXPECT_THAT(sink.permit_waits(), IsEmpty());

  ASSERT_TRUE(fw.RunPermitPlugins(state, *pod_, "n1").IsWait());
  fw.GetWaitingPod(pod_->pod->metadata.uid)->Allow("Wait10");
  EXPECT_TRUE(fw.WaitOnPermit(*pod_->pod).IsSuccess());
  ASSERT_TRUE(fw.RunPermitPlugins(state, *pod_, "n1").IsWait());
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_EQ(fw.WaitOnPermit(*pod_->pod).code(), Code::kUnschedulable);
  auto waits = sink.permit_waits();
  ASSERT_EQ(waits.size(), 2u);
  // The clock stood still while each call waited (the deadline had passed before the second).
  EXPECT_EQ(waits[0].first, "Success");
  EXPECT_EQ(waits[1].first, "Unschedulable");
  EXPECT_EQ(waits[1].second, Duration::zero());
}

TEST_F(PermitTest, AnotherPluginAllowsThroughTheHandle) {
  auto fw = WithPermits({"Gang"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  PodInfoPtr first = MakePod().Name("first").Info();
  PodInfoPtr second = MakePod().Name("second").Info();
  PodInfoPtr last = MakePod().Name("last").Label("last", "yes").Info();
  ASSERT_TRUE(fw->RunPermitPlugins(state, *first, "n1").IsWait());
  ASSERT_TRUE(fw->RunPermitPlugins(state, *second, "n2").IsWait());
  int waiting = 0;
  fw->IterateOverWaitingPods([&](WaitingPod&) { ++waiting; });
  EXPECT_EQ(waiting, 2);
  EXPECT_TRUE(fw->RunPermitPlugins(state, *last, "n3").IsSuccess());
  EXPECT_THAT(fw->GetWaitingPod("uid-first")->PendingPlugins(), IsEmpty());
  EXPECT_TRUE(fw->WaitOnPermit(*first->pod).IsSuccess());
  EXPECT_TRUE(fw->WaitOnPermit(*second->pod).IsSuccess());
  EXPECT_EQ(fw->GetWaitingPod("uid-first"), nullptr);
}

TEST_F(PermitTest, RejectFromAnotherThreadFailsTheWait) {
  auto fw = WithPermits({"Wait10"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  auto waiter = std::async(std::launch::async, [&] { return fw->WaitOnPermit(*pod_->pod); });
  std::thread rejecter([&] { fw->GetWaitingPod("uid-p")->Reject("Wait10", "go away"); });
  rejecter.join();
  ASSERT_EQ(waiter.wait_for(std::chrono::seconds(5)), std::future_status::ready);
  Status s = waiter.get();
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "Wait10");
  EXPECT_EQ(s.Message(), "go away");
}

// A decided pod still lists the plugins it waited for; IsWaitingOnPermit tells it apart.
TEST_F(PermitTest, IsWaitingOnPermitUntilDecided) {
  auto fw = WithPermits({"Wait10", "Wait20"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_FALSE(fw->IsWaitingOnPermit("uid-p"));
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  EXPECT_TRUE(fw->IsWaitingOnPermit("uid-p"));
  fw->GetWaitingPod("uid-p")->Allow("Wait10");
  EXPECT_TRUE(fw->IsWaitingOnPermit("uid-p"));
  fw->GetWaitingPod("uid-p")->Reject("Wait20", "no");
  EXPECT_FALSE(fw->IsWaitingOnPermit("uid-p"));
  EXPECT_THAT(fw->GetWaitingPod("uid-p")->PendingPlugins(), ElementsAre("Wait20"));
  EXPECT_EQ(fw->WaitOnPermit(*pod_->pod).Message(), "no");

  PodInfoPtr other = MakePod().Name("other").Info();
  ASSERT_TRUE(fw->RunPermitPlugins(state, *other, "n1").IsWait());
  clock_.Advance(std::chrono::seconds(10));
  EXPECT_TRUE(fw->IsWaitingOnPermit("uid-other"));  // expired only when expiry runs
  EXPECT_EQ(fw->ExpireWaitingPods(), 1);
  EXPECT_FALSE(fw->IsWaitingOnPermit("uid-other"));
}

TEST_F(PermitTest, RejectWaitingPodByUid) {
  auto fw = WithPermits({"Wait10"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  EXPECT_FALSE(fw->RejectWaitingPod("uid-p"));
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  EXPECT_TRUE(fw->RejectWaitingPod("uid-p"));
  Status s = fw->WaitOnPermit(*pod_->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(), "removed");
}

TEST_F(PermitTest, TimeoutOnTheInjectedClock) {
  auto fw = WithPermits({"Wait20", "Wait10"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  clock_.Advance(std::chrono::seconds(9));
  EXPECT_EQ(fw->ExpireWaitingPods(), 0);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(fw->ExpireWaitingPods(), 1);
  EXPECT_EQ(fw->ExpireWaitingPods(), 0);  // resolved once
  Status s = fw->WaitOnPermit(*pod_->pod);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.plugin(), "Wait10");
  EXPECT_EQ(s.Message(), "rejected due to timeout after waiting 10s at plugin Wait10");
}

TEST_F(PermitTest, TimeoutIsCappedAtFifteenMinutes) {
  auto fw = WithPermits({"WaitLong"});
  ASSERT_NE(fw, nullptr);
  CycleState state;
  ASSERT_TRUE(fw->RunPermitPlugins(state, *pod_, "n1").IsWait());
  clock_.Advance(std::chrono::minutes(15) - std::chrono::seconds(1));
  EXPECT_EQ(fw->ExpireWaitingPods(), 0);
  clock_.Advance(std::chrono::seconds(1));
  EXPECT_EQ(fw->ExpireWaitingPods(), 1);
  EXPECT_EQ(fw->WaitOnPermit(*pod_->pod).Message(),
            "rejected due to timeout after waiting 15m0s at plugin WaitLong");
}

// ---------------------------------------------------------------- binding cycle

TEST_F(FrameworkTest, BindPluginsSkipToTheNext) {
  Register(Reg<FakeBind>("SkipBind", &log_, Status::Skip()));
  Register(Reg<FakeBind>("OkBind", &log_, Status::Success()));
  Register(Reg<FakeBind>("NeverBind", &log_, Status::Success()));
  Register(Reg<FakeBind>("BadBind", &log_, Status::Error("api down")));
  CycleState state;

  config::Profile p = BaseProfile();
  p.plugins.bind = Set({{"SkipBind"}, {"OkBind"}, {"NeverBind"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  EXPECT_TRUE(fw->RunBindPlugins(state, *pod_, "n1").IsSuccess());
  EXPECT_THAT(log_.calls(), ElementsAre("Bind:SkipBind", "Bind:OkBind"));

  config::Profile all_skip = BaseProfile();
  all_skip.plugins.bind = Set({{"SkipBind"}});
  auto fw2 = Build(all_skip);
  ASSERT_NE(fw2, nullptr);
  EXPECT_TRUE(fw2->RunBindPlugins(state, *pod_, "n1").IsSkip());

  config::Profile bad = BaseProfile();
  bad.plugins.bind = Set({{"SkipBind"}, {"BadBind"}, {"OkBind"}});
  auto fw3 = Build(bad);
  ASSERT_NE(fw3, nullptr);
  Status s = fw3->RunBindPlugins(state, *pod_, "n1");
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running Bind plugin \"BadBind\": api down");
  EXPECT_EQ(s.plugin(), "BadBind");
}

TEST_F(FrameworkTest, PreBindFailureIsStamped) {
  Register(Reg<FakePreBind>("PB1", &log_, Status::Success()));
  Register(Reg<FakePreBind>("PB2", &log_, Status::Error("volume stuck")));
  Register(Reg<FakePreBind>("PB3", &log_, Status::Success()));
  config::Profile p = BaseProfile();
  p.plugins.pre_bind = Set({{"PB1"}, {"PB2"}, {"PB3"}});
  auto fw = Build(p);
  ASSERT_NE(fw, nullptr);
  CycleState state;
  Status s = fw->RunPreBindPlugins(state, *pod_, "n1");
  EXPECT_TRUE(s.IsError());
  EXPECT_EQ(s.Message(), "running PreBind plugin \"PB2\": volume stuck");
  EXPECT_EQ(s.plugin(), "PB2");
  EXPECT_THAT(log_.calls(), ElementsAre("PreBind:PB1", "PreBind:PB2"));
}

}  // namespace
}  // namespace berth
