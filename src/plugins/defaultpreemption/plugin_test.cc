#include "plugins/defaultpreemption/plugin.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "framework/async_pod_deleter.h"
#include "framework/in_memory_cluster.h"
#include "framework/parallelizer.h"
#include "testing/builders.h"

namespace berth {
namespace {

using preemption::Candidate;
using preemption::CompiledPdb;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::MakeNode;
using testing::MakePod;

// ---------------------------------------------------------------- test plugins

// A minimal resource-fit filter: pod count, cpu and memory against allocatable.
struct FitState final : StateData {
  Resource request;
  std::shared_ptr<StateData> Clone() const override { return std::make_shared<FitState>(*this); }
};
inline constexpr StateKey<FitState> kFitKey{"TestFit"};

class TestFit final : public PreFilterPlugin, public FilterPlugin {
 public:
  std::string_view Name() const override { return "NodeResourcesFit"; }
  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    auto s = std::make_shared<FitState>();
    s->request = pod.requests.requests;
    state.Write(kFitKey, std::move(s));
    return Status::Success();
  }
  Status Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const override {
    const FitState* s = state.Read(kFitKey);
    if (s == nullptr) return Status::Error("missing fit state");
    const Resource& alloc = node.allocatable();
    const Resource& used = node.requested();
    std::vector<std::string> reasons;
    if (static_cast<int64_t>(node.pods().size()) + 1 > alloc.allowed_pod_number)
      reasons.push_back("Too many pods");
    if (s->request.milli_cpu > 0 && s->request.milli_cpu > alloc.milli_cpu - used.milli_cpu)
      reasons.push_back("Insufficient cpu");
    if (s->request.memory > 0 && s->request.memory > alloc.memory - used.memory)
      reasons.push_back("Insufficient memory");
    if (reasons.empty()) return Status::Success();
    return Status(Code::kUnschedulable, std::move(reasons));
  }
};

// Counts its calls and answers every node with a fixed code.
class CountingFilter final : public FilterPlugin {
 public:
  explicit CountingFilter(Code code = Code::kSuccess) : code_(code) {}
  std::string_view Name() const override { return "FakeFilter"; }
  Status Filter(const CycleState&, const PodInfo& pod, const NodeInfo&) const override {
    calls.fetch_add(1);
    if (code_ == Code::kSuccess) return Status::Success();
    return Status(code_, "injecting failure for pod " + pod.pod->metadata.name);
  }
  mutable std::atomic<int> calls{0};

 private:
  Code code_;
};

// PreFilter extensions that fail on nodes labelled error=true.
class FailingExtensions final : public PreFilterPlugin, public PreFilterExtensions {
 public:
  std::string_view Name() const override { return "test-plugin"; }
  Status PreFilter(CycleState&, const PodInfo&, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    return Status::Success();
  }
  const PreFilterExtensions* Extensions() const override { return this; }
  Status AddPod(CycleState&, const PodInfo& pod, const PodInfoPtr&,
                const NodeInfo& node) const override {
    if (Fails(node)) return Status::Error("failed to add pod: " + pod.pod->metadata.name);
    return Status::Success();
  }
  Status RemovePod(CycleState&, const PodInfo& pod, const PodInfoPtr&,
                   const NodeInfo& node) const override {
    if (Fails(node)) return Status::Error("failed to remove pod: " + pod.pod->metadata.name);
    return Status::Success();
  }

 private:
  static bool Fails(const NodeInfo& node) {
    auto it = node.node()->metadata.labels.find("error");
    return it != node.node()->metadata.labels.end() && it->second == "true";
  }
};

class FakeWaitingPod final : public WaitingPod {
 public:
  explicit FakeWaitingPod(Ptr<Pod> pod) : pod_(std::move(pod)) {}
  const Pod& pod() const override { return *pod_; }
  std::vector<std::string> PendingPlugins() const override { return {"Permit"}; }
  void Allow(std::string_view) override {}
  void Reject(std::string_view plugin, std::string_view message) override {
    rejected_by = std::string(plugin);
    rejection = std::string(message);
  }
  std::string rejected_by, rejection;

 private:
  Ptr<Pod> pod_;
};

// ---------------------------------------------------------------- test handle

// A Handle with the framework's runner semantics over an explicit plugin list, a snapshot and
// an in-memory cluster holding the same pods.
class TestHandle final : public Handle {
 public:
  TestHandle(std::vector<Ptr<Node>> nodes, std::vector<Ptr<Pod>> pods, int parallelism = 1)
      : snapshot_(Snapshot::Build(nodes, pods)) {
    for (auto& n : nodes) cluster_.AddNode(n);
    for (auto& p : pods) cluster_.AddPod(p);
    if (parallelism > 1) {
      parallelizer_ = std::make_unique<ThreadPoolParallelizer>(parallelism);
    } else {
      parallelizer_ = std::make_unique<testing::InlineParallelizer>();
    }
  }

  void AddPreFilter(PreFilterPlugin* p) { pre_filter_.push_back(p); }
  void AddFilter(FilterPlugin* f) { filter_.push_back(f); }

  Status RunPreFilter(CycleState& state, const PodInfo& pod) {
    std::span<const NodeInfo* const> nodes(snapshot_.nodes());
    for (auto* p : pre_filter_) {
      PreFilterResult r;
      Status s = p->PreFilter(state, pod, nodes, &r);
      if (!s.IsSuccess()) return s;
    }
    return Status::Success();
  }

  InMemoryCluster& cluster() { return cluster_; }
  testing::FakeNominator& fake_nominator() { return nominator_; }
  FakeWaitingPod* AddWaitingPod(Ptr<Pod> pod) {
    auto w = std::make_shared<FakeWaitingPod>(pod);
    auto* raw = w.get();
    waiting_[pod->metadata.uid] = std::move(w);
    return raw;
  }

  // ---- Handle
  const Snapshot& snapshot() const override { return snapshot_; }
  const ClusterListers& listers() const override { return cluster_; }
  ClusterWriter& writer() override { return writer_ ? *writer_ : cluster_; }
  void SetWriter(ClusterWriter* w) { writer_ = w; }
  void Activate(const Pod& pod) override { activated.push_back(pod.metadata.name); }
  void LogError(std::string_view plugin, std::string_view message) override {
    logged.push_back(std::string(plugin) + ": " + std::string(message));
  }
  std::vector<std::string> activated, logged;
  const Clock& clock() const override { return clock_; }
  Random& random() override { return random_; }
  Parallelizer& parallelizer() override { return *parallelizer_; }
  PodNominator& nominator() override { return nominator_; }
  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) override {
    for (auto& [uid, w] : waiting_) fn(*w);
  }
  std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) override {
    auto it = waiting_.find(std::string(uid));
    if (it == waiting_.end()) return nullptr;
    return it->second;
  }
  bool RejectWaitingPod(std::string_view uid) override {
    std::shared_ptr<WaitingPod> w = GetWaitingPod(uid);
    if (w) w->Reject("", "rejected");
    return w != nullptr;
  }
  Status RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod, const PodInfoPtr& add,
                                     const NodeInfo& node) override {
    for (auto* p : pre_filter_) {
      const PreFilterExtensions* ext = p->Extensions();
      if (!ext) continue;
      Status s = ext->AddPod(state, pod, add, node);
      if (!s.IsSuccess())
        return Status::Error(
            fmt::format("running AddPod on PreFilter plugin \"{}\": {}", p->Name(), s.Message()));
    }
    return Status::Success();
  }
  Status RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod,
                                        const PodInfoPtr& remove, const NodeInfo& node) override {
    for (auto* p : pre_filter_) {
      const PreFilterExtensions* ext = p->Extensions();
      if (!ext) continue;
      Status s = ext->RemovePod(state, pod, remove, node);
      if (!s.IsSuccess())
        return Status::Error(fmt::format("running RemovePod on PreFilter plugin \"{}\": {}",
                                         p->Name(), s.Message()));
    }
    return Status::Success();
  }
  Status RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                           const NodeInfo& node) override {
    std::vector<PodInfoPtr> nominated;
    for (auto& pi : nominator_.NominatedPodsForNode(node.name()))
      if (pi->pod->Priority() >= pod.pod->Priority() &&
          pi->pod->metadata.uid != pod.pod->metadata.uid)
        nominated.push_back(pi);
    if (!nominated.empty()) {
      CycleState with = state.Clone();
      NodeInfo node_with = node;
      for (const auto& pi : nominated) {
        node_with.AddPod(pi);
        Status s = RunPreFilterExtensionAddPod(with, pod, pi, node_with);
        if (!s.IsSuccess()) return s;
      }
      Status s = RunFilters(with, pod, node_with);
      if (!s.IsSuccess()) return s;
    }
    return RunFilters(state, pod, node);
  }

 private:
  Status RunFilters(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const {
    for (auto* f : filter_) {
      Status s = f->Filter(state, pod, node);
      if (!s.IsSuccess()) {
        s.WithPlugin(f->Name());
        return s;
      }
    }
    return Status::Success();
  }

  Snapshot snapshot_;
  InMemoryCluster cluster_;
  ClusterWriter* writer_ = nullptr;
  FakeClock clock_;
  Random random_{1};
  std::unique_ptr<Parallelizer> parallelizer_;
  testing::FakeNominator nominator_;
  std::vector<PreFilterPlugin*> pre_filter_;
  std::vector<FilterPlugin*> filter_;
  std::map<std::string, std::shared_ptr<FakeWaitingPod>> waiting_;
};

// ---------------------------------------------------------------- fixtures

constexpr int32_t kNeg = -100, kLow = 0, kMid = 100, kHigh = 1000, kVeryHigh = 10000;

using Req = std::initializer_list<std::pair<const char*, const char*>>;
const Req kSmall = {{"cpu", "100m"}, {"memory", "100"}};
const Req kMedium = {{"cpu", "200m"}, {"memory", "200"}};
const Req kLarge = {{"cpu", "300m"}, {"memory", "300"}};
const Req kVeryLarge = {{"cpu", "500m"}, {"memory", "500"}};

Ptr<Node> N(const std::string& name, Req capacity = kVeryLarge) {
  return MakeNode().Name(name).Capacity(capacity).Obj();
}

// A running pod: priority, requests and an optional start time.
Ptr<Pod> Running(const std::string& name, const std::string& node, int32_t priority, Req req,
                 UnixTime start = 0) {
  auto b = MakePod().Name(name).Node(node).Priority(priority).Req(req);
  if (start != 0) b.StartTime(start);
  return b.Obj();
}

Ptr<PodDisruptionBudget> Pdb(Labels match_labels, int32_t allowed,
                             std::vector<std::string> disrupted = {}) {
  auto pdb = std::make_shared<PodDisruptionBudget>();
  pdb->metadata.name = "pdb";
  pdb->metadata.namespace_ = "default";
  LabelSelector sel;
  sel.match_labels = std::move(match_labels);
  pdb->selector = std::move(sel);
  pdb->disruptions_allowed = allowed;
  for (auto& d : disrupted) pdb->disrupted_pods[d] = true;
  return pdb;
}

NodeStatusMap Statuses(std::initializer_list<std::pair<const char*, Code>> items) {
  NodeStatusMap m;
  for (const auto& [node, code] : items) m[node] = Status(code, std::vector<std::string>{});
  return m;
}

std::vector<std::string> VictimNames(const preemption::Victims& v, bool sorted = false) {
  std::vector<std::string> out;
  for (const auto& p : v.pods) out.push_back(p->pod->metadata.name);
  if (sorted) std::sort(out.begin(), out.end());
  return out;
}

// Everything one test needs: cluster, handle with TestFit (+ optional extras), plugin.
struct Env {
  Env(std::vector<Ptr<Node>> nodes, std::vector<Ptr<Pod>> pods, Ptr<Pod> preemptor,
      std::vector<Ptr<PodDisruptionBudget>> pdbs = {}, config::DefaultPreemptionArgs args = {},
      int parallelism = 1, std::optional<Code> counting_code = std::nullopt,
      bool failing_extensions = false, bool async_preemption = true)
      : handle(std::move(nodes), std::move(pods), parallelism),
        pod(PodInfo::Create(preemptor)),
        plugin(handle, args, async_preemption) {
    handle.cluster().AddPod(preemptor);
    for (auto& p : pdbs) handle.cluster().AddPDB(p);
    if (counting_code) {
      counting = std::make_unique<CountingFilter>(*counting_code);
      handle.AddFilter(counting.get());
    }
    handle.AddPreFilter(&fit);
    handle.AddFilter(&fit);
    if (failing_extensions) handle.AddPreFilter(&failing);
    EXPECT_TRUE(handle.RunPreFilter(state, *pod).IsSuccess());
  }

  // Dry run over every node, sorted by name, as kube-scheduler's own tests do.
  DefaultPreemption::DryRunResult DryRunAll(int32_t offset, int32_t num_candidates,
                                            const std::vector<Ptr<PodDisruptionBudget>>& pdbs) {
    std::vector<const NodeInfo*> nodes(handle.snapshot().nodes().begin(),
                                       handle.snapshot().nodes().end());
    std::sort(nodes.begin(), nodes.end(),
              [](const NodeInfo* a, const NodeInfo* b) { return a->name() < b->name(); });
    compiled = preemption::CompilePdbs(pdbs);
    return plugin.DryRunPreemption(state, *pod, nodes, compiled, offset, num_candidates);
  }

  TestFit fit;
  FailingExtensions failing;
  std::unique_ptr<CountingFilter> counting;
  TestHandle handle;
  PodInfoPtr pod;
  CycleState state;
  DefaultPreemption plugin;
  std::vector<CompiledPdb> compiled;
};

// ---------------------------------------------------------------- PostFilter

TEST(DefaultPreemptionTest, PostFilter) {
  const Req one_pod = {{"pods", "1"}};
  const Req node_res = {{"cpu", "200m"}, {"memory", "400"}};
  struct Case {
    std::string name;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    std::vector<Ptr<Node>> nodes;
    NodeStatusMap statuses;
    std::vector<Ptr<PodDisruptionBudget>> pdbs;
    bool failing_extensions = false;
    Code want_code;
    std::string want_message;
    std::optional<std::string> want_nomination;  // nullopt: no nomination at all
    std::vector<std::string> want_victims = {};
  };
  const std::vector<Case> cases = {
      {"pod with higher priority can be made schedulable",
       MakePod().Name("p").Priority(kHigh).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       false,
       Code::kSuccess,
       "",
       "node1",
       {"default/p1"}},
      {"pod with tied priority is still unschedulable",
       MakePod().Name("p").Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod.",
       ""},
      {"preemption respects unresolvable filter statuses",
       MakePod().Name("p").Priority(kHigh).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulableAndUnresolvable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"a node without a status counts as unresolvable",
       MakePod().Name("p").Priority(kHigh).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       {},
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
       ""},
      {"pod can be made schedulable on one node",
       MakePod().Name("p").Priority(kMid).Obj(),
       {MakePod().Name("p1").Priority(kHigh).Node("node1").Obj(),
        MakePod().Name("p2").Priority(kLow).Node("node2").Obj()},
       {N("node1", one_pod), N("node2", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {},
       false,
       Code::kSuccess,
       "",
       "node2",
       {"default/p2"}},
      {"pod can be made schedulable on minHighestPriority node",
       MakePod().Name("p").Priority(kVeryHigh).Obj(),
       {MakePod().Name("p1").Label("pdb", "non-violating").Priority(kHigh).Node("node1").Obj(),
        MakePod().Name("p2").Label("pdb", "violating").Priority(kLow).Node("node1").Obj(),
        MakePod().Name("p3").Label("pdb", "violating").Priority(kMid).Node("node2").Obj()},
       {N("node1", one_pod), N("node2", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {Pdb({{"pdb", "violating"}}, 0),
        Pdb({{"pdb", "non-violating"}}, std::numeric_limits<int32_t>::max())},
       false,
       Code::kSuccess,
       "",
       "node2",
       {"default/p3"}},
      {"no candidate nodes: not enough resource after removing low priority pods",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj(), MakePod().Name("p2").Node("node2").Obj()},
       {N("node1", node_res), N("node2", node_res)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/2 nodes are available: 2 Insufficient cpu.",
       ""},
      {"no candidate nodes with mixed reasons: no lower priority pod and not enough cpu",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Priority(kHigh).Obj(),
        MakePod().Name("p2").Node("node2").Obj(),
        MakePod().Name("p3").Node("node3").Priority(kHigh).Obj()},
       {N("node1", one_pod), N("node2", node_res), N("node3", one_pod)},
       Statuses({{"node1", Code::kUnschedulable},
                 {"node2", Code::kUnschedulable},
                 {"node3", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/3 nodes are available: 1 Insufficient cpu, 2 No preemption victims found "
       "for incoming pod.",
       ""},
      {"no candidate nodes with mixed reasons: unresolvable nodes and not enough cpu",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj(), MakePod().Name("p2").Node("node2").Obj()},
       {N("node1", node_res), N("node2", node_res), N("node3", node_res), N("node4", node_res)},
       Statuses({{"node1", Code::kUnschedulable},
                 {"node2", Code::kUnschedulable},
                 {"node4", Code::kUnschedulableAndUnresolvable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: 0/4 nodes are available: 2 Insufficient cpu, 2 Preemption is not helpful for "
       "scheduling.",
       ""},
      {"only one node and it fails in a PreFilter extension",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {MakeNode().Name("node1").Capacity(kLarge).Label("error", "true").Obj()},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       true,
       Code::kError,
       "preemption: running RemovePod on PreFilter plugin \"test-plugin\": failed to remove pod: p",
       std::nullopt},
      {"one node fails in a PreFilter extension, the other is a candidate",
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {MakePod().Name("p1").Node("node1").Obj(),
        MakePod().Name("p2").Node("node2").Req(kMedium).Obj()},
       {MakeNode().Name("node1").Capacity(kLarge).Label("error", "true").Obj(), N("node2", kLarge)},
       Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}),
       {},
       true,
       Code::kSuccess,
       "",
       "node2",
       {"default/p2"}},
      {"preemptionPolicy Never",
       MakePod().Name("p").Priority(kHigh).PreemptionPolicy("Never").Obj(),
       {MakePod().Name("p1").Node("node1").Obj()},
       {N("node1", one_pod)},
       Statuses({{"node1", Code::kUnschedulable}}),
       {},
       false,
       Code::kUnschedulable,
       "preemption: not eligible due to preemptionPolicy=Never.",
       std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env(c.nodes, c.pods, c.pod, c.pdbs, {}, 1, std::nullopt, c.failing_extensions);
    PostFilterResult result;
    Status s = env.plugin.PostFilter(env.state, *env.pod, c.statuses, &result);
    EXPECT_EQ(s.code(), c.want_code) << s.Message();
    EXPECT_EQ(s.Message(), c.want_message);
    if (c.want_nomination) {
      ASSERT_TRUE(result.nominating.has_value());
      EXPECT_EQ(result.nominating->node_name, *c.want_nomination);
      EXPECT_TRUE(result.nominating->override_nomination);
    } else {
      EXPECT_FALSE(result.nominating.has_value());
    }
    EXPECT_EQ(result.victims, c.want_victims);
    // Victims are gone from the cluster; nothing else is.
    for (const auto& p : c.pods) {
      const bool victim =
          std::find(c.want_victims.begin(), c.want_victims.end(), p->Key()) != c.want_victims.end();
      EXPECT_EQ(env.handle.cluster().GetPod("default", p->metadata.name) == nullptr, victim)
          << p->Key();
    }
  }
}

// ---------------------------------------------------------------- dry run

TEST(DefaultPreemptionTest, DryRunPreemption) {
  struct WantCandidate {
    std::string node;
    std::vector<std::string> victims;  // sorted by name
    int64_t violations = 0;
  };
  struct Case {
    std::string name;
    std::vector<std::string> node_names;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    std::vector<Ptr<PodDisruptionBudget>> pdbs;
    Code counting_code = Code::kSuccess;
    config::DefaultPreemptionArgs args = {};
    int32_t offset = 0;
    std::vector<WantCandidate> want;  // sorted by node
    int want_filter_calls;
  };
  auto args = [](int32_t pct, int32_t abs) {
    config::DefaultPreemptionArgs a;
    a.min_candidate_nodes_percentage = pct;
    a.min_candidate_nodes_absolute = abs;
    return a;
  };
  const Labels foo{{"app", "foo"}};
  auto foo_pod = [](const std::string& name, const std::string& node, int32_t prio, Req req) {
    return MakePod().Name(name).Node(node).Label("app", "foo").Priority(prio).Req(req).Obj();
  };
  const std::vector<std::string> five = {"node1", "node2", "node3", "node4", "node5"};
  const std::vector<Ptr<Pod>> five_mid = {
      Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge),
      Running("p3", "node3", kMid, kLarge), Running("p4", "node4", kMid, kLarge),
      Running("p5", "node5", kMid, kLarge)};
  const std::vector<Case> cases = {
      {"a pod that does not fit on any node",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Obj(),
       {Running("p1", "node1", kMid, {}), Running("p2", "node2", kMid, {})},
       {},
       Code::kUnschedulable,
       {},
       0,
       {},
       2},
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1"}}, {"node2", {"p2"}}},
       4},
      {"other pods running are higher priority, no preemption would happen",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kLow).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {},
       0},
      {"medium priority pod is preempted, but lower priority one stays as it is small",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1.1", "node1", kLow, kSmall), Running("p1.2", "node1", kMid, kLarge),
        Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.2"}}, {"node2", {"p2"}}},
       5},
      {"mixed priority pods are preempted",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall), Running("p1.2", "node1", kLow, kSmall),
        Running("p1.3", "node1", kMid, kMedium), Running("p1.4", "node1", kHigh, kSmall),
        Running("p2", "node2", kHigh, kLarge)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.2", "p1.3"}}},
       4},
      {"mixed priority pods are preempted, later start time is picked when priorities are equal",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1.1", "node1", kLow, kSmall, 5), Running("p1.2", "node1", kLow, kSmall, 4),
        Running("p1.3", "node1", kMid, kMedium, 3), Running("p1.4", "node1", kHigh, kSmall, 2),
        Running("p2", "node2", kHigh, kLarge, 1)},
       {},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.3"}}},
       4},
      {"a filter rejecting every node leaves no candidate",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kMid, kLarge)},
       {},
       Code::kUnschedulable,
       {},
       0,
       {},
       2},
      {"preemption with violation of the same pdb",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium)},
       {Pdb(foo, 1)},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2"}, 1}},
       3},
      {"pdb with a disrupted pod that is not a victim still counts the violation",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium)},
       {Pdb(foo, 1, {"p2"})},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2"}, 1}},
       3},
      {"pdb with the victim among disrupted pods: no violation",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium)},
       {Pdb(foo, 1, {"p1.2"})},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2"}, 0}},
       3},
      {"disrupted victim is non-violating, the others still exceed the budget",
       {"node1"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {foo_pod("p1.1", "node1", kMid, kMedium), foo_pod("p1.2", "node1", kMid, kMedium),
        foo_pod("p1.3", "node1", kMid, kMedium)},
       {Pdb(foo, 1, {"p1.3"})},
       Code::kSuccess,
       {},
       0,
       {{"node1", {"p1.1", "p1.2", "p1.3"}, 1}},
       4},
      {"all nodes are candidates, but the args limit them to 2",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       five_mid,
       {},
       Code::kSuccess,
       args(40, 1),
       4,
       {{"node1", {"p1"}}, {"node5", {"p5"}}},
       4},
      {"offset wraps around (second cycle)",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       five_mid,
       {},
       Code::kSuccess,
       args(40, 1),
       1,
       {{"node2", {"p2"}}, {"node3", {"p3"}}},
       4},
      {"offset wraps around (third cycle)",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       five_mid,
       {},
       Code::kSuccess,
       args(40, 1),
       3,
       {{"node4", {"p4"}}, {"node5", {"p5"}}},
       4},
      {"some nodes are not candidates, the args limit them to 2",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge), Running("p2", "node2", kVeryHigh, kLarge),
        Running("p3", "node3", kMid, kLarge), Running("p4", "node4", kMid, kLarge),
        Running("p5", "node5", kVeryHigh, kLarge)},
       {},
       Code::kSuccess,
       args(40, 1),
       4,
       {{"node1", {"p1"}}, {"node3", {"p3"}}},
       4},
      {"dry run looks past numCandidates until a node without PDB violations is found",
       five,
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {foo_pod("p1", "node1", kMid, kLarge), foo_pod("p2", "node2", kMid, kLarge),
        Running("p3", "node3", kMid, kLarge), Running("p4", "node4", kMid, kLarge),
        foo_pod("p5", "node5", kMid, kLarge)},
       {Pdb(foo, 0)},
       Code::kSuccess,
       args(40, 2),
       4,
       // node2 is a violating candidate too, but the list of those is already full.
       {{"node1", {"p1"}, 1}, {"node3", {"p3"}}, {"node5", {"p5"}, 1}},
       8},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Ptr<Node>> nodes;
    for (const auto& n : c.node_names) nodes.push_back(N(n));
    Env env(nodes, c.pods, c.pod, c.pdbs, c.args, 1, c.counting_code);
    const int32_t num = preemption::CalculateNumCandidates(static_cast<int32_t>(nodes.size()),
                                                           c.args.min_candidate_nodes_percentage,
                                                           c.args.min_candidate_nodes_absolute);
    auto got = env.DryRunAll(c.offset, num, c.pdbs);
    std::sort(got.candidates.begin(), got.candidates.end(),
              [](const Candidate& a, const Candidate& b) { return a.node_name < b.node_name; });
    ASSERT_EQ(got.candidates.size(), c.want.size());
    for (size_t i = 0; i < c.want.size(); ++i) {
      EXPECT_EQ(got.candidates[i].node_name, c.want[i].node);
      EXPECT_EQ(VictimNames(got.candidates[i].victims, true), c.want[i].victims) << c.want[i].node;
      EXPECT_EQ(got.candidates[i].victims.num_pdb_violations, c.want[i].violations)
          << c.want[i].node;
    }
    EXPECT_EQ(env.counting->calls.load(), c.want_filter_calls);
  }
}

// Victims come out most important first (priority, then earlier start); pods of at least the
// preemptor's priority are never victims.
TEST(DefaultPreemptionTest, SelectVictimsOnNode) {
  const std::vector<Ptr<Pod>> pods = {
      Running("young-low", "node1", kLow, kSmall, 9), Running("old-low", "node1", kLow, kSmall, 1),
      Running("mid", "node1", kMid, kSmall, 5), Running("high", "node1", kVeryHigh, kSmall)};
  auto preemptor = MakePod().Name("p").Priority(kHigh).Req({{"cpu", "500m"}}).Obj();
  {
    // 100m of the high-priority pod remain: the pod cannot fit even after evicting the rest.
    Env env({N("node1")}, pods, preemptor);
    NodeInfo copy = *env.handle.snapshot().Get("node1");
    CycleState state = env.state.Clone();
    preemption::Victims victims;
    Status s = env.plugin.SelectVictimsOnNode(state, *env.pod, copy, {}, &victims);
    EXPECT_EQ(s.code(), Code::kUnschedulable);
    EXPECT_EQ(s.reasons(), std::vector<std::string>{"Insufficient cpu"});
  }
  {
    Env env({N("node1", {{"cpu", "600m"}, {"memory", "500"}})}, pods, preemptor);
    const NodeInfo& original = *env.handle.snapshot().Get("node1");
    NodeInfo copy = original;
    CycleState state = env.state.Clone();
    preemption::Victims victims;
    ASSERT_TRUE(env.plugin.SelectVictimsOnNode(state, *env.pod, copy, {}, &victims).IsSuccess());
    EXPECT_EQ(VictimNames(victims), (std::vector<std::string>{"mid", "old-low", "young-low"}));
    EXPECT_EQ(victims.num_pdb_violations, 0);
    EXPECT_EQ(original.pods().size(), 4u);  // the snapshot is untouched
  }
  {
    // Only the cheapest victims go: the 300m pod must, the 100m one may stay.
    Env env({N("node1")},
            {Running("small", "node1", kLow, kSmall), Running("large", "node1", kMid, kLarge)},
            MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj());
    NodeInfo copy = *env.handle.snapshot().Get("node1");
    CycleState state = env.state.Clone();
    preemption::Victims victims;
    ASSERT_TRUE(env.plugin.SelectVictimsOnNode(state, *env.pod, copy, {}, &victims).IsSuccess());
    EXPECT_EQ(VictimNames(victims), std::vector<std::string>{"large"});
  }
  {
    // Budget-protected pods get the first chance to stay, even when a non-protected pod is more
    // important: "guarded" stays and the older "plain" goes.
    const std::vector<Ptr<PodDisruptionBudget>> pdbs = {Pdb({{"app", "foo"}}, 0)};
    Env env({N("node1")},
            {MakePod()
                 .Name("guarded")
                 .Node("node1")
                 .Label("app", "foo")
                 .Priority(kLow)
                 .Req(kMedium)
                 .StartTime(9)
                 .Obj(),
             Running("plain", "node1", kLow, kMedium, 1)},
            MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(), pdbs);
    NodeInfo copy = *env.handle.snapshot().Get("node1");
    CycleState state = env.state.Clone();
    const auto compiled = preemption::CompilePdbs(pdbs);
    preemption::Victims victims;
    ASSERT_TRUE(
        env.plugin.SelectVictimsOnNode(state, *env.pod, copy, compiled, &victims).IsSuccess());
    EXPECT_EQ(VictimNames(victims), std::vector<std::string>{"plain"});
    EXPECT_EQ(victims.num_pdb_violations, 0);
  }
}

// ---------------------------------------------------------------- candidate choice

TEST(DefaultPreemptionTest, SelectBestCandidate) {
  struct Case {
    std::string name;
    std::vector<std::string> node_names;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    std::vector<std::string> want;  // any of these
  };
  const UnixTime t0 = 100;  // a common start time
  const std::vector<Case> cases = {
      {"a pod that fits on both nodes when lower priority pods are preempted",
       {"node1", "node2"},
       MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj(),
       {Running("p1", "node1", kMid, kLarge, t0), Running("p2", "node2", kMid, kLarge, t0)},
       {"node1", "node2"}},
      {"node with min highest priority pod is picked",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, t0), Running("p1.2", "node1", kMid, kLarge, t0),
        Running("p2.1", "node2", kMid, kMedium, t0), Running("p2.2", "node2", kLow, kMedium, t0),
        Running("p3.1", "node3", kLow, kMedium, t0), Running("p3.2", "node3", kLow, kMedium, t0)},
       {"node3"}},
      {"when highest priorities are the same, minimum sum of priorities is picked",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, t0), Running("p1.2", "node1", kMid, kLarge, t0),
        Running("p2.1", "node2", kMid, kLarge, t0), Running("p2.2", "node2", kLow, kMedium, t0),
        Running("p3.1", "node3", kMid, kMedium, t0), Running("p3.2", "node3", kMid, kMedium, t0)},
       {"node2"}},
      {"when highest priority and sum are the same, minimum number of pods is picked",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall, t0), Running("p1.2", "node1", kNeg, kSmall, t0),
        Running("p1.3", "node1", kMid, kSmall, t0), Running("p1.4", "node1", kNeg, kSmall, t0),
        Running("p2.1", "node2", kMid, kLarge, t0), Running("p2.2", "node2", kNeg, kMedium, t0),
        Running("p3.1", "node3", kMid, kMedium, t0), Running("p3.2", "node3", kNeg, kSmall, t0),
        Running("p3.3", "node3", kLow, kSmall, t0)},
       {"node2"}},
      {"sum of adjusted priorities is considered",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall, t0), Running("p1.2", "node1", kNeg, kSmall, t0),
        Running("p1.3", "node1", kNeg, kSmall, t0), Running("p2.1", "node2", kMid, kLarge, t0),
        Running("p2.2", "node2", kNeg, kMedium, t0), Running("p3.1", "node3", kMid, kMedium, t0),
        Running("p3.2", "node3", kNeg, kSmall, t0), Running("p3.3", "node3", kLow, kSmall, t0)},
       {"node2"}},
      {"non-overlapping lowest high priority, sum priorities, and number of pods",
       {"node1", "node2", "node3", "node4"},
       MakePod().Name("p").Priority(kVeryHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kSmall, t0), Running("p1.2", "node1", kLow, kSmall, t0),
        Running("p1.3", "node1", kLow, kSmall, t0), Running("p2.1", "node2", kHigh, kLarge, t0),
        Running("p3.1", "node3", kMid, kMedium, t0), Running("p3.2", "node3", kLow, kSmall, t0),
        Running("p3.3", "node3", kLow, kSmall, t0), Running("p3.4", "node3", kLow, kMedium, t0),
        Running("p4.1", "node4", kMid, kMedium, t0), Running("p4.2", "node4", kMid, kSmall, t0),
        Running("p4.3", "node4", kMid, kSmall, t0), Running("p4.4", "node4", kNeg, kSmall, t0)},
       {"node1"}},
      {"same priority, same number of victims, different start time for each node's pod",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, 2), Running("p1.2", "node1", kMid, kMedium, 2),
        Running("p2.1", "node2", kMid, kMedium, 3), Running("p2.2", "node2", kMid, kMedium, 3),
        Running("p3.1", "node3", kMid, kMedium, 1), Running("p3.2", "node3", kMid, kMedium, 1)},
       {"node2"}},
      {"same priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kMid, kMedium, 4), Running("p1.2", "node1", kMid, kMedium, 2),
        Running("p2.1", "node2", kMid, kMedium, 5), Running("p2.2", "node2", kMid, kMedium, 1),
        Running("p3.1", "node3", kMid, kMedium, 3), Running("p3.2", "node3", kMid, kMedium, 6)},
       {"node3"}},
      {"different priority, same number of victims, different start time for all pods",
       {"node1", "node2", "node3"},
       MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(),
       {Running("p1.1", "node1", kLow, kMedium, 4), Running("p1.2", "node1", kMid, kMedium, 2),
        Running("p2.1", "node2", kMid, kMedium, 6), Running("p2.2", "node2", kLow, kMedium, 1),
        Running("p3.1", "node3", kLow, kMedium, 3), Running("p3.2", "node3", kMid, kMedium, 5)},
       {"node2"}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<Ptr<Node>> nodes;
    for (const auto& n : c.node_names) nodes.push_back(N(n));
    Env env(nodes, c.pods, c.pod);
    auto got = env.DryRunAll(0, static_cast<int32_t>(nodes.size()), {});
    const int best = preemption::PickOneNodeForPreemption(got.candidates);
    ASSERT_GE(best, 0);
    EXPECT_NE(std::find(c.want.begin(), c.want.end(), got.candidates[best].node_name), c.want.end())
        << got.candidates[best].node_name;
  }
}

// The sample conformance case: the node whose most important victim is least important wins.
TEST(DefaultPreemptionTest, LowestHighestVictimPriorityEndToEnd) {
  const Req node_res = {{"cpu", "500m"}, {"memory", "500Mi"}, {"pods", "32"}};
  const Req r200 = {{"cpu", "200m"}, {"memory", "200Mi"}};
  const Req r300 = {{"cpu", "300m"}, {"memory", "300Mi"}};
  Env env(
      {N("node1", node_res), N("node2", node_res), N("node3", node_res)},
      {Running("p1-1", "node1", 100, r200, 1704067200),
       Running("p1-2", "node1", 100, r300, 1704067200),
       Running("p2-1", "node2", 100, r200, 1704067200),
       Running("p2-2", "node2", 0, r200, 1704067200), Running("p3-1", "node3", 0, r200, 1704067200),
       Running("p3-2", "node3", 0, r200, 1704067200)},
      MakePod().Name("p").Priority(1000).Req({{"cpu", "500m"}, {"memory", "500Mi"}}).Obj());
  PostFilterResult result;
  Status s = env.plugin.PostFilter(env.state, *env.pod,
                                   Statuses({{"node1", Code::kUnschedulable},
                                             {"node2", Code::kUnschedulable},
                                             {"node3", Code::kUnschedulable}}),
                                   &result);
  ASSERT_TRUE(s.IsSuccess()) << s.Message();
  ASSERT_TRUE(result.nominating.has_value());
  EXPECT_EQ(result.nominating->node_name, "node3");
  std::vector<std::string> victims = result.victims;
  std::sort(victims.begin(), victims.end());
  EXPECT_EQ(victims, (std::vector<std::string>{"default/p3-1", "default/p3-2"}));
}

// ---------------------------------------------------------------- eligibility

TEST(DefaultPreemptionTest, PodEligibleToPreemptOthers) {
  auto terminating_victim = [](int32_t prio) {
    auto b = MakePod().Name("p1").Priority(prio).Node("node1").Terminating();
    b.mutable_pod().status.conditions.push_back(
        {"DisruptionTarget", "True", "PreemptionByScheduler", ""});
    return b.Obj();
  };
  struct Case {
    std::string name;
    Ptr<Pod> pod;
    std::vector<Ptr<Pod>> pods;
    NodeStatusMap statuses;
    bool want;
    std::string want_reason;
  };
  const std::vector<Case> cases = {
      {"nominated node is unresolvable now: preempt again",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {terminating_victim(kLow)},
       Statuses({{"node1", Code::kUnschedulableAndUnresolvable}}),
       true,
       ""},
      {"pod without nominated node", MakePod().Name("p").Priority(kHigh).Obj(), {}, {}, true, ""},
      {"preemptionPolicy Never",
       MakePod().Name("p").Priority(kHigh).PreemptionPolicy("Never").Obj(),
       {},
       {},
       false,
       "not eligible due to preemptionPolicy=Never."},
      {"preemption victim terminating on the nominated node",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {terminating_victim(kLow)},
       Statuses({{"node1", Code::kUnschedulable}}),
       false,
       "not eligible due to a terminating pod on the nominated node."},
      {"terminating pod that was not preempted does not block",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {MakePod().Name("p1").Priority(kLow).Node("node1").Terminating().Obj()},
       Statuses({{"node1", Code::kUnschedulable}}),
       true,
       ""},
      {"terminating preempted pod of higher priority does not block",
       MakePod().Name("p").Priority(kHigh).NominatedNodeName("node1").Obj(),
       {terminating_victim(kVeryHigh)},
       Statuses({{"node1", Code::kUnschedulable}}),
       true,
       ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    Env env({N("node1")}, c.pods, c.pod);
    std::string reason;
    EXPECT_EQ(env.plugin.PodEligibleToPreemptOthers(*c.pod, c.statuses, &reason), c.want);
    EXPECT_EQ(reason, c.want_reason);
  }
}

// A nominated preemptor whose victims are still terminating waits instead of preempting more.
TEST(DefaultPreemptionTest, PostFilterWaitsForTerminatingVictims) {
  auto victim = MakePod().Name("v").Priority(kLow).Node("node1").Req(kLarge).Terminating();
  victim.mutable_pod().status.conditions.push_back(
      {"DisruptionTarget", "True", "PreemptionByScheduler", ""});
  Env env({N("node1", kLarge), N("node2", kLarge)},
          {victim.Obj(), Running("other", "node2", kLow, kLarge)},
          MakePod().Name("p").Priority(kHigh).Req(kLarge).NominatedNodeName("node1").Obj());
  PostFilterResult result;
  Status s = env.plugin.PostFilter(
      env.state, *env.pod,
      Statuses({{"node1", Code::kUnschedulable}, {"node2", Code::kUnschedulable}}), &result);
  EXPECT_EQ(s.code(), Code::kUnschedulable);
  EXPECT_EQ(s.Message(),
            "preemption: not eligible due to a terminating pod on the nominated node.");
  EXPECT_FALSE(result.nominating.has_value());
  EXPECT_NE(env.handle.cluster().GetPod("default", "other"), nullptr);
}

// ---------------------------------------------------------------- side effects

TEST(DefaultPreemptionTest, PrepareCandidateEvictsAndClearsLowerNominations) {
  auto waiting = Running("waiting", "node1", kLow, kSmall);
  auto doomed = Running("doomed", "node1", kLow, kMedium);
  auto already =
      MakePod().Name("already").Priority(kLow).Node("node1").Req(kSmall).Terminating().Obj();
  auto nominated_low = MakePod().Name("nom-low").Priority(kLow).NominatedNodeName("node1").Obj();
  auto nominated_high =
      MakePod().Name("nom-high").Priority(kVeryHigh).NominatedNodeName("node1").Obj();
  Env env({N("node1")}, {waiting, doomed, already, nominated_low, nominated_high},
          MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj());
  FakeWaitingPod* w = env.handle.AddWaitingPod(waiting);
  env.handle.fake_nominator().pods["node1"] = {PodInfo::Create(nominated_low),
                                               PodInfo::Create(nominated_high)};

  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(waiting), PodInfo::Create(doomed), PodInfo::Create(already)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());

  auto& cluster = env.handle.cluster();
  EXPECT_EQ(w->rejected_by, "DefaultPreemption");
  EXPECT_EQ(w->rejection, "preempted");
  EXPECT_NE(cluster.GetPod("default", "waiting"), nullptr);  // rejected, not deleted
  EXPECT_EQ(cluster.GetPod("default", "doomed"), nullptr);
  EXPECT_NE(cluster.GetPod("default", "already"), nullptr);  // already terminating
  EXPECT_EQ(cluster.write_counts().deletes, 1);
  EXPECT_EQ(cluster.GetPod("default", "nom-low")->status.nominated_node_name, "");
  EXPECT_EQ(cluster.GetPod("default", "nom-high")->status.nominated_node_name, "node1");
}

// The daemon's writer queues deletions: one that fails later makes the preemptor try again at
// once (nothing else would move it out of the unschedulable pool). DeletePodThen's answers are
// held in `held` until the test gives them.
class QueuedDeletions final : public ClusterWriter, public AsyncPodDeleter {
 public:
  explicit QueuedDeletions(ClusterWriter& base) : base_(base) {}
  VoidResult Bind(const Pod& pod, std::string_view node) override { return base_.Bind(pod, node); }
  VoidResult DeletePod(const Pod& pod, std::function<void(const Error&)> on_failure) override {
    queued.push_back({pod.metadata.name, std::move(on_failure)});
    return {};
  }
  void DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) override {
    held.push_back({pod, std::move(done)});
  }
  // Deletes the oldest held victim through the base writer and answers.
  void Release() {
    auto [pod, done] = std::move(held.front());
    held.erase(held.begin());
    ASSERT_TRUE(base_.DeletePod(pod, nullptr).ok());
    done(nullptr);
  }
  VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node) override {
    return base_.SetNominatedNodeName(pod, node);
  }
  VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& c) override {
    return base_.SetPodScheduledCondition(pod, c);
  }
  VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv) override {
    return base_.BindVolume(pvc, pv);
  }
  VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc, std::string_view node) override {
    return base_.RequestProvisioning(pvc, node);
  }
  std::vector<std::pair<std::string, std::function<void(const Error&)>>> queued;
  std::vector<std::pair<Pod, std::function<void(const Error*)>>> held;

 private:
  ClusterWriter& base_;
};

// SchedulerAsyncPreemption off.
TEST(DefaultPreemptionTest, AFailedQueuedDeletionActivatesThePreemptor) {
  auto a = Running("a", "node1", kLow, kMedium);
  auto b = Running("b", "node1", kLow, kMedium);
  Env env({N("node1")}, {a, b}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(), {}, {},
          1, std::nullopt, false, /*async_preemption=*/false);
  QueuedDeletions queued(env.handle.cluster());
  env.handle.SetWriter(&queued);
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a), PodInfo::Create(b)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());
  ASSERT_EQ(queued.queued.size(), 2u);
  EXPECT_TRUE(env.handle.activated.empty());  // queued, not failed yet

  queued.queued[1].second(Error{"pods \"b\" is forbidden", ErrorCode::kForbidden});
  EXPECT_THAT(env.handle.activated, ElementsAre("p"));
  ASSERT_EQ(env.handle.logged.size(), 1u);
  EXPECT_THAT(env.handle.logged[0], HasSubstr("preempting for pod default/p failed"));
  EXPECT_THAT(env.handle.logged[0], HasSubstr("forbidden"));
}

// SchedulerAsyncPreemption (upstream's TestIsPodRunningPreemption and prepareCandidateAsync):
// the preemptor is gated while its victims go; the last victim is asked for once the others
// are gone, and the preemption is over as soon as that victim is terminating or gone.
TEST(DefaultPreemptionTest, AsyncPreemptionGatesThePreemptorUntilItsLastVictimGoes) {
  auto a = Running("a", "node1", kLow, kMedium);
  auto b = Running("b", "node1", kLow, kMedium);
  Env env({N("node1")}, {a, b}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj());
  QueuedDeletions queued(env.handle.cluster());
  env.handle.SetWriter(&queued);
  const Pod& p = *env.pod->pod;
  EXPECT_TRUE(env.plugin.PreEnqueue(p).IsSuccess());
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a), PodInfo::Create(b)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, p).IsSuccess());
  ASSERT_EQ(queued.held.size(), 1u);  // the last victim waits for the first
  EXPECT_EQ(queued.held[0].first.metadata.name, "a");
  EXPECT_TRUE(env.plugin.IsPodRunningPreemption(p));
  Status gated = env.plugin.PreEnqueue(p);
  EXPECT_EQ(gated.code(), Code::kUnschedulableAndUnresolvable);
  EXPECT_EQ(gated.Message(), "waiting for the preemption for this pod to be finished");

  queued.Release();
  ASSERT_EQ(queued.held.size(), 1u);
  EXPECT_EQ(queued.held[0].first.metadata.name, "b");
  EXPECT_TRUE(env.plugin.IsPodRunningPreemption(p));  // "b" is still there

  // "b" starts terminating before the writer answers: the preemption is over.
  auto terminating = std::make_shared<Pod>(*env.handle.cluster().GetPod("default", "b"));
  terminating->metadata.deletion_timestamp = 1;
  env.handle.cluster().UpdatePod(terminating);
  EXPECT_FALSE(env.plugin.IsPodRunningPreemption(p));
  EXPECT_TRUE(env.plugin.PreEnqueue(p).IsSuccess());
  queued.Release();
  EXPECT_FALSE(env.plugin.IsPodRunningPreemption(p));
  EXPECT_TRUE(env.handle.activated.empty());
  EXPECT_EQ(env.plugin.EventsToRegister().size(), 1u);
}

// Gate off: no gating, no registration.
TEST(DefaultPreemptionTest, SyncPreemptionNeverGates) {
  auto a = Running("a", "node1", kLow, kMedium);
  Env env({N("node1")}, {a}, MakePod().Name("p").Priority(kHigh).Req(kVeryLarge).Obj(), {}, {}, 1,
          std::nullopt, false, /*async_preemption=*/false);
  Candidate c;
  c.node_name = "node1";
  c.victims.pods = {PodInfo::Create(a)};
  ASSERT_TRUE(env.plugin.PrepareCandidate(c, *env.pod->pod).IsSuccess());
  EXPECT_EQ(env.handle.cluster().GetPod("default", "a"), nullptr);
  EXPECT_FALSE(env.plugin.IsPodRunningPreemption(*env.pod->pod));
  EXPECT_TRUE(env.plugin.EventsToRegister().empty());
}

// Nominated pods of at least the preemptor's priority keep their room during the dry run.
TEST(DefaultPreemptionTest, DryRunAccountsForHigherNominatedPods) {
  Env env({N("node1"), N("node2")},
          {Running("v1", "node1", kLow, kLarge), Running("v2", "node2", kLow, kLarge)},
          MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj());
  auto nominated =
      MakePod().Name("nom").Priority(kVeryHigh).Req(kLarge).NominatedNodeName("node1").Obj();
  env.handle.fake_nominator().pods["node1"] = {PodInfo::Create(nominated)};
  auto got = env.DryRunAll(0, 2, {});
  ASSERT_EQ(got.candidates.size(), 1u);
  EXPECT_EQ(got.candidates[0].node_name, "node2");
  ASSERT_EQ(got.statuses.count("node1"), 1u);
  EXPECT_EQ(got.statuses.at("node1").reasons(),
            (std::vector<std::string>{"Insufficient cpu", "Insufficient memory"}));
}

// Parallel batches give exactly what a one-at-a-time evaluation gives.
TEST(DefaultPreemptionTest, ParallelDryRunMatchesSequential) {
  std::vector<Ptr<Node>> nodes;
  std::vector<Ptr<Pod>> pods;
  for (int i = 0; i < 60; ++i) {
    const std::string node = fmt::format("node{:02}", i);
    nodes.push_back(N(node));
    // Every third node only has a high-priority pod; every fifth node's pods are under a budget.
    const int32_t prio = i % 3 == 0 ? kVeryHigh : kLow;
    auto b = MakePod().Name(fmt::format("a{:02}", i)).Node(node).Priority(prio).Req(kLarge);
    if (i % 5 == 0) b.Label("app", "foo");
    pods.push_back(b.Obj());
    pods.push_back(Running(fmt::format("b{:02}", i), node, kLow, kSmall, i + 1));
  }
  const std::vector<Ptr<PodDisruptionBudget>> pdbs = {Pdb({{"app", "foo"}}, 0)};
  auto preemptor = MakePod().Name("p").Priority(kHigh).Req(kLarge).Obj();
  for (int32_t num : {1, 5, 17}) {
    for (int32_t offset : {0, 7, 59}) {
      SCOPED_TRACE(fmt::format("num={} offset={}", num, offset));
      Env seq(nodes, pods, preemptor, pdbs);
      Env par(nodes, pods, preemptor, pdbs, {}, 4);
      auto a = seq.DryRunAll(offset, num, pdbs);
      auto b = par.DryRunAll(offset, num, pdbs);
      ASSERT_EQ(a.candidates.size(), b.candidates.size());
      for (size_t i = 0; i < a.candidates.size(); ++i) {
        EXPECT_EQ(a.candidates[i].node_name, b.candidates[i].node_name);
        EXPECT_EQ(VictimNames(a.candidates[i].victims), VictimNames(b.candidates[i].victims));
      }
      EXPECT_EQ(a.statuses.size(), b.statuses.size());
    }
  }
}

TEST(DefaultPreemptionTest, RegistrationDecodesAndValidatesArgs) {
  PluginRegistration reg = DefaultPreemptionRegistration(config::FeatureGates());
  EXPECT_EQ(reg.name, "DefaultPreemption");
  ASSERT_TRUE(static_cast<bool>(reg.decode_args));
  auto defaults = reg.decode_args(nullptr, "args");
  ASSERT_TRUE(defaults.ok());
  const auto* typed = dynamic_cast<const config::DefaultPreemptionArgs*>(defaults->get());
  ASSERT_NE(typed, nullptr);
  EXPECT_EQ(typed->min_candidate_nodes_percentage, 10);
  EXPECT_EQ(typed->min_candidate_nodes_absolute, 100);

  testing::FakeHandle handle;
  auto plugin = reg.factory(nullptr, handle);
  ASSERT_TRUE(plugin.ok());
  EXPECT_EQ((*plugin)->Name(), "DefaultPreemption");
  EXPECT_NE(dynamic_cast<PostFilterPlugin*>(plugin->get()), nullptr);

  config::DefaultPreemptionArgs bad;
  bad.min_candidate_nodes_percentage = 150;
  EXPECT_FALSE(reg.factory(&bad, handle).ok());
}

}  // namespace
}  // namespace berth
