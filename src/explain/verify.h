// The search side of `berth explain`: the cluster an explanation schedules over, copies of it
// with one change applied, and the Verifier, through which alone a suggestion reaches an
// explanation: it schedules the pod again over the changed copy, through the real framework,
// and keeps the suggestion only when the pod is then placed.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "explain/explain.h"
#include "sim/simulator.h"

namespace berth::explain {

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;

// The pod, the nodes, and everything else the attempt reads (bound pods, claims, classes, ...).
// Copies share the objects; a change replaces the pointers it changes.
struct Cluster {
  std::vector<Object> others;
  std::vector<NodePtr> nodes;
  PodPtr pod;

  Cluster WithPod(PodPtr replacement) const;
  // The node of the same name replaced.
  Cluster WithNode(NodePtr replacement) const;
  Cluster WithAddedNode(NodePtr added) const;
  // The bound pods with these keys (namespace/name) gone.
  Cluster WithoutPods(const std::set<std::string>& keys) const;
  // A pod of `others` replaced by one of the same key; or an object added.
  Cluster WithReplacedPod(PodPtr replacement) const;
  Cluster WithAdded(Object o) const;

  // The bound pods (all of `others`' pods: pending ones do not take part).
  std::vector<PodPtr> BoundPods() const;
  // The bound pods on `node`.
  std::vector<PodPtr> PodsOn(const std::string& node) const;
};

// One read-only scheduling attempt for the pod over the cluster; nullopt when it cannot run.
std::optional<sim::PodResult> Attempt(const config::SchedulerConfiguration& config,
                                      const Registry& registry, const Cluster& c,
                                      const ExplainOptions& options);

class Verifier {
 public:
  Verifier(const config::SchedulerConfiguration& config, const Registry& registry,
           const ExplainOptions& options);

  // How many nodes the pod fits on over `changed`, 0 when none. Every node is filtered (no
  // sampling by percentageOfNodesToScore), so that on a large cluster the count ranks changes.
  int Opens(const Cluster& changed) const;

  // Schedules the pod over `changed`: when it is placed, keeps `s` (with opens_nodes set) and
  // returns true; otherwise drops it.
  bool Check(Suggestion s, const Cluster& changed);

  // The suggestions kept so far, in the order they were checked.
  std::vector<Suggestion> Take() { return std::move(kept_); }
  int checks() const { return checks_; }

 private:
  config::SchedulerConfiguration all_nodes_;
  const Registry& registry_;
  const ExplainOptions& options_;
  std::vector<Suggestion> kept_;
  int checks_ = 0;
};

}  // namespace berth::explain
