// The scheduling cycle's extender steps, with kube-scheduler's order and error semantics:
// filter after the Filter plugins (extenders in order, each on the previous one's survivors),
// prioritize beside the Score plugins (concurrently, errors ignored), bind before the Bind
// plugins (the first interested binder). Preemption consults extenders through the Handle.
//
// Threads: FilterWithExtenders and PrioritizeWithExtenders run on the scheduling thread (the
// latter fans out on the parallelizer); BindWithExtenders on a binding thread.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "berth/framework/extender.h"
#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"
#include "runtime/framework.h"

namespace berth {

// Narrows `feasible` through the interested extenders. Failed nodes get a status (stamped with
// the extender's name) in `statuses`; `*rejected_some` is set when an extender removed a node.
// An error of a non-ignorable extender is returned as an Error status naming it; those of
// ignorable extenders are skipped and appended to `skipped_errors`.
Status FilterWithExtenders(std::span<Extender* const> extenders, const Pod& pod,
                           std::vector<const NodeInfo*>* feasible, NodeStatusMap* statuses,
                           bool* rejected_some, std::vector<std::string>* skipped_errors);

// Adds each interested extender's score x weight x (MaxNodeScore / MaxExtenderPriority) to the
// totals of `table` (nodes already set), recording contributions in table->extender_scores.
void PrioritizeWithExtenders(std::span<Extender* const> extenders, const Pod& pod,
                             Parallelizer& parallelizer, ScoreTable* table);

// Binds through the first interested binder extender. nullopt when none took the pod (the Bind
// plugins run); otherwise the binding's outcome.
std::optional<Status> BindWithExtenders(std::span<Extender* const> extenders, const Pod& pod,
                                        const std::string& node);

// True if some extender filters / prioritizes (they widen the node search like scoring does).
bool AnyExtenderFilters(std::span<Extender* const> extenders);
bool AnyExtenderPrioritizes(std::span<Extender* const> extenders);

}  // namespace berth
