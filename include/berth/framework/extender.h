// Extender: the scheduler's view of a scheduler extender — a service consulted after the
// Filter plugins, beside the Score plugins, instead of the Bind plugins and inside preemption.
// Berth's HTTP client for upstream's extender protocol implements it (src/extender); an
// in-process implementation may too.
//
// Who calls, from which thread:
//   * IsInterested, Filter: the scheduling thread, extenders in configured order.
//   * Prioritize: the scheduling cycle's parallelizer workers, concurrently for the different
//     extenders of one cycle.
//   * Bind: binding threads, concurrently for different pods.
//   * ProcessPreemption: the scheduling thread, inside DefaultPreemption.
// Implementations must therefore be thread-safe.
//
// Errors: every call returns a Result. An error from an ignorable extender is skipped (the
// extender is passed over); from another, Filter and ProcessPreemption errors fail the attempt
// and Bind errors fail the binding. Prioritize errors are always ignored (no contribution).
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/export.h"
#include "berth/framework/node_info.h"

namespace berth {

// Extender scores range over 0..kMaxExtenderPriority; the scheduler scales them to the plugin
// range (x MaxNodeScore / kMaxExtenderPriority) and by the extender's weight.
inline constexpr int64_t kMaxExtenderPriority = 10;

// The name under which extender rejections are recorded among a pod's rejecting plugins:
// extenders register for no events, so such pods are retried on every cluster change.
inline constexpr std::string_view kExtenderRejection = "Extender";

// Pods that must go for the preemptor to fit on one node, most important first, and how many
// of them would break a PodDisruptionBudget.
struct BERTH_EXPORT Victims {
  std::vector<PodInfoPtr> pods;
  int64_t num_pdb_violations = 0;
};

struct BERTH_EXPORT ExtenderFilterResult {
  // The nodes that pass, a subset of the input (in the extender's order).
  std::vector<const NodeInfo*> feasible;
  // Node name -> reason. A node in both maps counts as unresolvable.
  std::map<std::string, std::string> failed;
  std::map<std::string, std::string> failed_and_unresolvable;
};

struct BERTH_EXPORT HostPriority {
  std::string host;
  int64_t score = 0;  // 0..kMaxExtenderPriority
};

class BERTH_EXPORT Extender {
 public:
  virtual ~Extender() = default;

  // Identifies the extender in messages and explanations (the urlPrefix for HTTP extenders).
  virtual const std::string& Name() const = 0;
  virtual bool IsFilter() const = 0;
  virtual bool IsPrioritizer() const = 0;
  virtual bool IsBinder() const = 0;
  virtual bool SupportsPreemption() const = 0;
  virtual bool IsIgnorable() const = 0;
  // Multiplies this extender's prioritize scores.
  virtual int64_t Weight() const = 0;
  // Whether the extender takes part in scheduling `pod` at all.
  virtual bool IsInterested(const Pod& pod) const = 0;

  virtual Result<ExtenderFilterResult> Filter(const Pod& pod,
                                              std::span<const NodeInfo* const> nodes) = 0;
  virtual Result<std::vector<HostPriority>> Prioritize(const Pod& pod,
                                                       std::span<const NodeInfo* const> nodes) = 0;
  // Binds `pod` to `node` in the cluster instead of the Bind plugins.
  virtual VoidResult Bind(const Pod& pod, std::string_view node) = 0;
  // Given node -> victims, returns the nodes (with their victims) the extender agrees to
  // preempt on. Victims are resolved against `snapshot`.
  virtual Result<std::map<std::string, Victims>> ProcessPreemption(
      const Pod& pod, const std::map<std::string, Victims>& node_to_victims,
      const Snapshot& snapshot) = 0;
};

}  // namespace berth
