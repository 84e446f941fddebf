// FakeHandle: a Handle for plugin unit tests. Holds a Snapshot and a ClusterClient (usually an
// InMemoryCluster), runs parallel loops inline, has no waiting pods and no nominated pods unless
// a test adds them. The framework runners return Success (plugin tests that need real runners use
// the real framework).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "berth/framework/handle.h"
#include "framework/in_memory_cluster.h"

namespace berth::testing {

class InlineParallelizer final : public Parallelizer {
 public:
  void Until(int n, const std::function<void(int)>& fn) override {
    for (int i = 0; i < n; ++i) fn(i);
  }
  int parallelism() const override { return 1; }
};

class FakeNominator final : public PodNominator {
 public:
  std::vector<PodInfoPtr> NominatedPodsForNode(std::string_view node) const override {
    auto it = pods.find(std::string(node));
    return it == pods.end() ? std::vector<PodInfoPtr>{} : it->second;
  }
  std::map<std::string, std::vector<PodInfoPtr>> pods;
};

class FakeHandle final : public Handle {
 public:
  explicit FakeHandle(Snapshot snapshot = {}, ClusterClient* client = nullptr)
      : snapshot_(std::move(snapshot)), client_(client ? client : &own_client_) {}

  void SetSnapshot(Snapshot s) { snapshot_ = std::move(s); }
  const Snapshot& snapshot() const override { return snapshot_; }
  ClusterClient& client() override { return *client_; }
  const Clock& clock() const override { return clock_; }
  FakeClock& fake_clock() { return clock_; }
  Random& random() override { return random_; }
  Parallelizer& parallelizer() override { return parallelizer_; }
  PodNominator& nominator() override { return nominator_; }
  FakeNominator& fake_nominator() { return nominator_; }

  void IterateOverWaitingPods(const std::function<void(WaitingPod&)>&) override {}
  std::shared_ptr<WaitingPod> GetWaitingPod(std::string_view) override { return nullptr; }
  bool RejectWaitingPod(std::string_view) override { return false; }

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
  InMemoryCluster own_client_;
  ClusterClient* client_;
  FakeClock clock_;
  Random random_{1};
  InlineParallelizer parallelizer_;
  FakeNominator nominator_;
};

}  // namespace berth::testing
