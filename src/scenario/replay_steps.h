// A recording (`berth record`, kube-scheduler-simulator's recorder lines) as a scenario: each
// recorded change becomes a step at its recorded time from the first line's, replayed against
// the simulated cluster, whose scheduler, controllers and kubelets decide the rest.
#pragma once

#include <string>

#include "berth/api/result.h"
#include "scenario/scenario_spec.h"

namespace berth::scenario {

// The steps of a recording (docs/scenarios.md, "Replaying a recording"):
//   * an added node is created (its kubelet is simulated from then on); a deleted node is
//     deleted; a node's recorded updates are its kubelet's and are not replayed;
//   * an added pod is created, without its owners (the recording has no controllers) and its
//     status: pending when recorded without spec.nodeName, scheduled here; bound to its
//     recorded node otherwise. A deleted pod, or one recorded Succeeded or Failed, is deleted;
//   * other kinds are created when added; their updates and deletions are not replayed.
// A checkpoint named "end" follows the last change.
Result<Scenario> ScenarioFromRecording(const std::string& path);

}  // namespace berth::scenario
