// Building blocks of pod preemption, shared by DefaultPreemption and by anything that wants to
// reason about victims the way kube-scheduler does: victim ordering, PodDisruptionBudget
// accounting, the candidate-node ranking and the extender seam.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/api/selectors.h"
#include "berth/framework/cluster.h"
#include "berth/framework/extender.h"
#include "berth/framework/node_info.h"

namespace berth::preemption {

// Pods that must go for the preemptor to fit on one node (berth/framework/extender.h).
using Victims = berth::Victims;

// A node on which the preemptor fits once its victims are gone.
struct Candidate {
  std::string node_name;
  Victims victims;
};

// When a pod started, for ordering. A pod without status.startTime counts as starting now,
// that is later than every recorded start (kube-scheduler substitutes the current time).
int64_t StartTimeKey(const Pod& pod);

// True if `a` should be kept in preference to `b`: higher priority, then earlier start.
bool MoreImportantPod(const Pod& a, const Pod& b);

// How many candidates a dry run should collect among `num_nodes` potential nodes:
// max(num_nodes * percentage / 100, absolute), capped at num_nodes.
int32_t CalculateNumCandidates(int32_t num_nodes, int32_t min_percentage, int32_t min_absolute);

// A PodDisruptionBudget prepared for many matches.
struct CompiledPdb {
  Ptr<PodDisruptionBudget> pdb;
  // Matches nothing for a null, empty or invalid selector.
  CompiledSelector selector;
};

std::vector<CompiledPdb> CompilePdbs(const std::vector<Ptr<PodDisruptionBudget>>& pdbs);

// Splits `pods` (order kept in both groups) into those whose eviction would take some matching
// budget below zero disruptions and the others. Budgets are consumed in order across `pods`;
// a pod already listed in a budget's disruptedPods neither consumes nor violates it.
void SplitByPdbViolation(std::span<const PodInfoPtr> pods, std::span<const CompiledPdb> pdbs,
                         std::vector<PodInfoPtr>* violating,
                         std::vector<PodInfoPtr>* non_violating);

// Index of the candidate to preempt on, or -1 for none. Ranks by, in order: fewest PDB
// violations, lowest highest-victim priority, smallest sum of (priority + 2^31) over victims,
// fewest victims, latest start among the highest-priority victims; remaining ties go to the
// earliest candidate in `candidates`.
int PickOneNodeForPreemption(std::span<const Candidate> candidates);

// Runs the interested, preemption-capable extenders in order over `candidates`. Returns the
// surviving candidates (ordered by node name) or the error that fails preemption.
Result<std::vector<Candidate>> CallExtenders(std::span<Extender* const> extenders, const Pod& pod,
                                             std::vector<Candidate> candidates,
                                             const Snapshot& snapshot);

}  // namespace berth::preemption
