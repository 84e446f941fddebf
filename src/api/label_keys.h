// What a pod affinity term's matchLabelKeys / mismatchLabelKeys add to its label selector at
// scheduling time.
//
// kube-apiserver merges the keys into the selector when the pod is created
// (`key In (value)`, `key NotIn (value)`) and kube-scheduler's InterPodAffinity reads the
// selector alone. Berth also schedules pods that were never admitted (manifests given to
// `berth simulate`, pods built in tests), so the scheduler folds in what admission would have
// added, and nothing for a term admission has already merged:
//   * a matchLabelKeys key is folded unless the selector already names the key (a valid pod
//     whose label the key reads can name it only through the merge), so a pod relabelled after
//     creation keeps the value it was created with, as in a cluster;
//   * a mismatchLabelKeys key (which the user's selector may also name) is folded unless the
//     selector already holds that exact `key NotIn (value)`.
// Keys the pod has no label for add nothing; a term without a selector selects nothing either
// way and gets nothing.
#pragma once

#include <vector>

#include "berth/api/objects.h"

namespace berth {

std::vector<LabelSelectorRequirement> PendingLabelKeyRequirements(const PodAffinityTerm& term,
                                                                  const Labels& pod_labels);

}  // namespace berth
