// Test helpers of the framework's tests: fake plugins at every extension point that log their
// calls, the registration helper and the FrameworkTest fixture (a profile, a cluster, a clock).
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/in_memory_cluster.h"
#include "framework/parallelizer.h"
#include "runtime/framework.h"
#include "runtime/scheduler_metrics.h"
#include "testing/builders.h"

namespace berth::framework_test {

using testing::MakeNode;
using testing::MakePod;

// fake plugins

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

inline ScoreSpec Spec(std::map<std::string, int64_t> scores = {}, Status status = Status::Success(),
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

// helpers

template <class T, class... Args>
PluginRegistration Reg(const std::string& name, CallLog* log, Args... args) {
  PluginRegistration r;
  r.name = name;
  r.factory = [name, log, args...](const PluginArgs*, Handle&) -> Result<std::unique_ptr<Plugin>> {
    return std::unique_ptr<Plugin>(std::make_unique<T>(name, log, args...));
  };
  return r;
}

inline config::PluginSet Set(std::vector<config::PluginRef> enabled,
                             std::vector<std::string> disabled = {}) {
  return {std::move(enabled), std::move(disabled)};
}

inline std::set<std::string> Names(std::initializer_list<const char*> names) {
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

  // `parallelizer`: the Filter/Score fan-out's (null: the inline one, tests' default).
  std::unique_ptr<Framework> Build(const config::Profile& profile,
                                   Parallelizer* parallelizer = nullptr) {
    FrameworkServices services = Services();
    if (parallelizer) services.parallelizer = parallelizer;
    auto r = Framework::Create(profile, registry_, services);
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

}  // namespace berth::framework_test
