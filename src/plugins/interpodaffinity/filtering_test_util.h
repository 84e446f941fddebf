// Test helpers of InterPodAffinity's filtering tests: the statuses Filter returns, and a harness
// that runs PreFilter and then Filter against a cluster of nodes and pods.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "berth/testing/fake_handle.h"
#include "plugins/interpodaffinity/interpodaffinity.h"
#include "plugins/interpodaffinity/state.h"
#include "plugins/interpodaffinity/test_util.h"

namespace berth::interpodaffinity::test {

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;

inline const Status kOk = Status::Success();
inline Status Affinity() {
  return Status::Unresolvable(std::string(kErrReasonAffinityRulesNotMatch));
}
inline Status Anti() {
  return Status::Unschedulable(std::string(kErrReasonAntiAffinityRulesNotMatch));
}
inline Status Existing() {
  return Status::Unschedulable(std::string(kErrReasonExistingAntiAffinityRulesNotMatch));
}

// Runs PreFilter and then Filter on each node, against a cluster of `nodes` and `pods`.
class Harness {
 public:
  Harness(std::vector<NodePtr> nodes, std::vector<PodPtr> pods,
          config::InterPodAffinityArgs args = {})
      : handle_(Snapshot::Build(nodes, pods), &cluster_), plugin_(args, handle_) {
    AddTeamNamespaces(cluster_);
    cluster_.AddNamespace(MakeNamespace("NS1", {}));
  }

  Status PreFilter(const PodPtr& pod) {
    info_ = PodInfo::Create(pod);
    PreFilterResult result;
    Status s = plugin_.PreFilter(state_, *info_, handle_.snapshot().nodes(), &result);
    EXPECT_TRUE(result.AllNodes());
    return s;
  }
  Status Filter(const std::string& node) const {
    const NodeInfo* ni = handle_.snapshot().Get(node);
    EXPECT_NE(ni, nullptr) << node;
    return plugin_.Filter(state_, *info_, *ni);
  }

  InterPodAffinity& plugin() { return plugin_; }
  CycleState& state() { return state_; }
  const PodInfo& pod_info() const { return *info_; }
  const Snapshot& snapshot() const { return handle_.snapshot(); }
  const PreFilterState* pre_filter_state() const { return state_.Read(kPreFilterStateKey); }

 private:
  InMemoryCluster cluster_;
  testing::FakeHandle handle_;
  InterPodAffinity plugin_;
  CycleState state_;
  PodInfoPtr info_;
};

inline std::string Describe(const Status& s) {
  std::string out(CodeName(s.code()));
  for (const auto& r : s.reasons()) out += " | " + r;
  return out;
}

}  // namespace berth::interpodaffinity::test
