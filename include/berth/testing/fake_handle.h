// FakeHandle and FakeCluster: what a plugin's unit test gives the plugin in place of the
// framework (namespace berth::testing, no test framework required).
//
// FakeHandle holds a Snapshot (the test owns it and may replace it between calls), a
// ClusterClient (a FakeCluster of its own unless the test passes one), a FakeClock, a seeded
// Random, a parallelizer that runs loops inline on the calling thread, and a nominator the test
// fills. Its waiting pods are the FakeWaitingPods the test lists (they record what plugins
// decide), and its framework runners (used by PostFilter plugins) return
// Success: tests of preemption use Berth's real framework.
//
// Threading: like the objects a plugin test drives, one thread at a time; FakeCluster is
// thread-safe only for reads of objects not changed meanwhile.
//
// Linking: Snapshot, NodeInfo and PodInfo are defined in Berth's libraries; an out-of-tree test
// links Berth::testing (see docs/plugin-authoring.md, "Testing a plugin").
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/export.h"
#include "berth/framework/cluster.h"
#include "berth/framework/handle.h"

namespace berth::testing {

class BERTH_EXPORT InlineParallelizer final : public Parallelizer {
 public:
  void Until(int n, const std::function<void(int)>& fn) override {
    for (int i = 0; i < n; ++i) fn(i);
  }
  int parallelism() const override { return 1; }
};

// Nominated pods by node name, filled by the test.
class BERTH_EXPORT FakeNominator final : public PodNominator {
 public:
  std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const override {
    auto it = pods.find(std::string(node));
    return it == pods.end() ? std::vector<PodInfoPtr>{} : it->second;
  }
  std::map<std::string, std::vector<PodInfoPtr>> pods;
};

// A ClusterClient over plain lists the test fills. Kinds without a list read as absent.
// Writes succeed and are recorded in `writes` ("bind ns/name node", "delete ns/name", ...), so
// a test can assert what a plugin asked of the cluster.
class BERTH_EXPORT FakeCluster final : public ClusterClient {
 public:
  std::vector<Ptr<Pod>> pods;
  std::vector<Ptr<Node>> nodes;
  std::vector<Ptr<Namespace>> namespaces;
  std::vector<Ptr<Service>> services;
  std::vector<Ptr<PodGroup>> pod_groups;
  std::vector<Ptr<SchedulingPodGroup>> scheduling_pod_groups;
  std::vector<std::string> writes;

  Ptr<Pod> GetPod(std::string_view ns, std::string_view name) const override {
    for (const auto& p : pods)
      if (p->metadata.namespace_ == ns && p->metadata.name == name) return p;
    return nullptr;
  }
  std::vector<Ptr<Pod>> ListPods() const override { return pods; }
  Ptr<Node> GetNode(std::string_view name) const override { return Named(nodes, name); }
  std::vector<Ptr<Node>> ListNodes() const override { return nodes; }
  Ptr<Namespace> GetNamespace(std::string_view name) const override {
    return Named(namespaces, name);
  }
  std::vector<Ptr<Namespace>> ListNamespaces() const override { return namespaces; }
  std::vector<Ptr<Service>> ListServices(std::string_view ns) const override {
    std::vector<Ptr<Service>> out;
    for (const auto& s : services)
      if (s->metadata.namespace_ == ns) out.push_back(s);
    return out;
  }
  std::vector<Ptr<ReplicationController>> ListReplicationControllers(
      std::string_view) const override {
    return {};
  }
  std::vector<Ptr<ReplicaSet>> ListReplicaSets(std::string_view) const override { return {}; }
  std::vector<Ptr<StatefulSet>> ListStatefulSets(std::string_view) const override { return {}; }
  Ptr<PersistentVolumeClaim> GetPVC(std::string_view, std::string_view) const override {
    return nullptr;
  }
  Ptr<PersistentVolume> GetPV(std::string_view) const override { return nullptr; }
  std::vector<Ptr<PersistentVolume>> ListPVs() const override { return {}; }
  Ptr<StorageClass> GetStorageClass(std::string_view) const override { return nullptr; }
  Ptr<CSINode> GetCSINode(std::string_view) const override { return nullptr; }
  std::vector<Ptr<PodDisruptionBudget>> ListPDBs() const override { return {}; }
  Ptr<PriorityClass> GetPriorityClass(std::string_view) const override { return nullptr; }
  Ptr<PodGroup> GetPodGroup(std::string_view ns, std::string_view name) const override {
    return NamedIn(pod_groups, ns, name);
  }
  std::vector<Ptr<PodGroup>> ListPodGroups(std::string_view ns) const override {
    std::vector<Ptr<PodGroup>> out;
    for (const auto& g : pod_groups)
      if (ns.empty() || g->metadata.namespace_ == ns) out.push_back(g);
    return out;
  }
  Ptr<SchedulingPodGroup> GetSchedulingPodGroup(std::string_view ns,
                                                std::string_view name) const override {
    return NamedIn(scheduling_pod_groups, ns, name);
  }

  VoidResult Bind(const Pod& pod, std::string_view node_name) override {
    return Record("bind", pod, node_name);
  }
  // Synchronous, as the in-memory twin: `on_failure` is never called.
  VoidResult DeletePod(const Pod& pod, std::function<void(const Error&)> /*on_failure*/) override {
    return Record("delete", pod, {});
  }
  VoidResult SetNominatedNodeName(const Pod& pod, std::string_view node_name) override {
    return Record("nominate", pod, node_name);
  }
  VoidResult SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) override {
    return Record("condition", pod, cond.reason);
  }
  VoidResult BindVolume(const PersistentVolumeClaim& pvc, std::string_view pv_name) override {
    writes.push_back("bind-volume " + pvc.metadata.namespace_ + "/" + pvc.metadata.name + " " +
                     std::string(pv_name));
    return {};
  }
  VoidResult RequestProvisioning(const PersistentVolumeClaim& pvc,
                                 std::string_view node_name) override {
    writes.push_back("provision " + pvc.metadata.namespace_ + "/" + pvc.metadata.name + " " +
                     std::string(node_name));
    return {};
  }

 private:
  template <typename T>
  static Ptr<T> Named(const std::vector<Ptr<T>>& list, std::string_view name) {
    for (const auto& o : list)
      if (o->metadata.name == name) return o;
    return nullptr;
  }
  template <typename T>
  static Ptr<T> NamedIn(const std::vector<Ptr<T>>& list, std::string_view ns,
                        std::string_view name) {
    for (const auto& o : list)
      if (o->metadata.namespace_ == ns && o->metadata.name == name) return o;
    return nullptr;
  }
  VoidResult Record(std::string_view what, const Pod& pod, std::string_view arg) {
    std::string line(what);
    line += " " + pod.metadata.namespace_ + "/" + pod.metadata.name;
    if (!arg.empty()) line += " " + std::string(arg);
    writes.push_back(std::move(line));
    return {};
  }
};

// A pod waiting at Permit, for FakeHandle::waiting_pods: it records what plugins decide.
class BERTH_EXPORT FakeWaitingPod final : public WaitingPod {
 public:
  explicit FakeWaitingPod(Ptr<Pod> pod, std::vector<std::string> pending_plugins = {})
      : pending(std::move(pending_plugins)), pod_(std::move(pod)) {}
  const Pod& pod() const override { return *pod_; }
  std::vector<std::string> PendingPlugins() const override { return pending; }
  void Allow(std::string_view plugin) override {
    if (!rejected.empty()) return;
    allowed.emplace_back(plugin);
    std::erase(pending, std::string(plugin));
  }
  // Keeps the first rejection as "plugin: message".
  void Reject(std::string_view plugin, std::string_view message) override {
    if (rejected.empty()) rejected = std::string(plugin) + ": " + std::string(message);
  }
  std::vector<std::string> pending, allowed;
  std::string rejected;

 private:
  Ptr<Pod> pod_;
};

class BERTH_EXPORT FakeHandle final : public Handle {
 public:
  explicit FakeHandle(Snapshot snapshot = {}, ClusterClient* client = nullptr)
      : snapshot_(std::move(snapshot)), client_(client ? client : &own_client_) {}

  void SetSnapshot(Snapshot s) { snapshot_ = std::move(s); }
  const Snapshot& snapshot() const override { return snapshot_; }
  // The test's own access (what the scheduler's cache does between cycles, e.g. bumping
  // `generation`); plugins see snapshot() only.
  Snapshot& mutable_snapshot() { return snapshot_; }
  const ClusterListers& listers() const override { return *client_; }
  ClusterWriter& writer() override { return *client_; }
  // The FakeCluster in use when the handle was built without a client.
  FakeCluster& fake_cluster() { return own_client_; }
  const Clock& clock() const override { return clock_; }
  FakeClock& fake_clock() { return clock_; }
  Random& random() override { return random_; }
  Parallelizer& parallelizer() override { return parallelizer_; }
  PodNominator& nominator() override { return nominator_; }
  FakeNominator& fake_nominator() { return nominator_; }
  // Records the pod's namespace/name in `activated`.
  void Activate(const Pod& pod) override {
    activated.push_back(pod.metadata.namespace_ + "/" + pod.metadata.name);
  }
  std::vector<std::string> activated;

  // Pods the test puts at Permit; plugins visit, allow and reject them through the Handle.
  std::vector<std::shared_ptr<FakeWaitingPod>> waiting_pods;
  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) override {
    for (const auto& w : waiting_pods) fn(*w);
  }
  std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view uid) override {
    for (const auto& w : waiting_pods)
      if (w->pod().metadata.uid == uid) return w;
    return nullptr;
  }
  bool RejectWaitingPod(std::string_view uid) override {
    auto w = GetWaitingPod(uid);
    if (w) w->Reject("", "rejected");
    return w != nullptr;
  }

  Status RunPreFilterExtensionAddPod(CycleState&, const PodInfo&, const PodInfoPtr&,
                                     const NodeInfo&) override {
    return Status::Success();
  }
  Status RunPreFilterExtensionRemovePod(CycleState&, const PodInfo&, const PodInfoPtr&,
                                        const NodeInfo&) override {
    return Status::Success();
  }
  Status RunFilterPluginsWithNominatedPods(const CycleState&, const PodInfo&,
                                           const NodeInfo&) override {
    return Status::Success();
  }

 private:
  Snapshot snapshot_;
  FakeCluster own_client_;
  ClusterClient* client_;
  FakeClock clock_;
  Random random_{1};
  InlineParallelizer parallelizer_;
  FakeNominator nominator_;
};

}  // namespace berth::testing
