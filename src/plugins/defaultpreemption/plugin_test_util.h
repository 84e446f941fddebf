// Test helpers of DefaultPreemption's tests: a resource-fit filter, a Handle with the framework's
// runner semantics over an explicit plugin list, and the Env that builds the plugin over nodes,
// pods and PodDisruptionBudgets.
#pragma once

#include <fmt/format.h>
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
#include "framework/detached_services.h"
#include "framework/in_memory_cluster.h"
#include "framework/parallelizer.h"
#include "plugins/defaultpreemption/plugin.h"
#include "testing/builders.h"

namespace berth::defaultpreemption_test {

using preemption::Candidate;
using preemption::CompiledPdb;
using testing::MakeNode;
using testing::MakePod;

// test plugins

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

// test handle

// A Handle with the framework's runner semantics over an explicit plugin list, a snapshot and
// an in-memory cluster holding the same pods.
class TestHandle final : public Handle, public DetachedServicesProvider {
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
  void Activate(const Pod& pod) override {
    if (retired) ADD_FAILURE() << "Activate on the handle of a replaced profile";
    activated.push_back(pod.metadata.name);
  }
  void LogError(std::string_view plugin, std::string_view message) override {
    if (retired) ADD_FAILURE() << "LogError on the handle of a replaced profile";
    logged.push_back(std::string(plugin) + ": " + std::string(message));
  }
  std::vector<std::string> activated, logged;

  // What the scheduler's services (DetachedServices) received; they outlive the handle.
  struct DetachedCalls {
    std::vector<std::string> activated, logged;
  };
  // Null (the default): the detached services call this handle, as for a handle without them.
  std::shared_ptr<DetachedCalls> detached;
  // A reload replaced the profile this handle stands for (its framework would be freed): any
  // further call of Activate or LogError fails the test.
  bool retired = false;
  DetachedServices Detached() const override {
    if (!detached) {
      auto* self = const_cast<TestHandle*>(this);
      return {.activate = [self](const Pod& pod) { self->Activate(pod); },
              .log_error = [self](std::string_view plugin,
                                  std::string_view message) { self->LogError(plugin, message); }};
    }
    return {.activate = [calls = detached](
                            const Pod& pod) { calls->activated.push_back(pod.metadata.name); },
            .log_error =
                [calls = detached](std::string_view plugin, std::string_view message) {
                  calls->logged.push_back(std::string(plugin) + ": " + std::string(message));
                }};
  }
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

// fixtures

inline constexpr int32_t kNeg = -100, kLow = 0, kMid = 100, kHigh = 1000, kVeryHigh = 10000;

using Req = std::initializer_list<std::pair<const char*, const char*>>;
inline const Req kSmall = {{"cpu", "100m"}, {"memory", "100"}};
inline const Req kMedium = {{"cpu", "200m"}, {"memory", "200"}};
inline const Req kLarge = {{"cpu", "300m"}, {"memory", "300"}};
inline const Req kVeryLarge = {{"cpu", "500m"}, {"memory", "500"}};

inline Ptr<Node> N(const std::string& name, Req capacity = kVeryLarge) {
  return MakeNode().Name(name).Capacity(capacity).Obj();
}

// A running pod: priority, requests and an optional start time.
inline Ptr<Pod> Running(const std::string& name, const std::string& node, int32_t priority, Req req,
                        UnixTime start = 0) {
  auto b = MakePod().Name(name).Node(node).Priority(priority).Req(req);
  if (start != 0) b.StartTime(start);
  return b.Obj();
}

inline Ptr<PodDisruptionBudget> Pdb(Labels match_labels, int32_t allowed,
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

inline NodeStatusMap Statuses(std::initializer_list<std::pair<const char*, Code>> items) {
  NodeStatusMap m;
  for (const auto& [node, code] : items) m[node] = Status(code, std::vector<std::string>{});
  return m;
}

inline std::vector<std::string> VictimNames(const preemption::Victims& v, bool sorted = false) {
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

}  // namespace berth::defaultpreemption_test
