// matchLabelKeys and mismatchLabelKeys of pod (anti-)affinity terms and topology spread
// constraints, as kube-apiserver (v1.34 and later) handles them:
//
//   * when a Pod is created, each key the pod has a label for becomes a requirement of the
//     term's labelSelector: `key In (value)` for matchLabelKeys, `key NotIn (value)` for
//     mismatchLabelKeys (MatchLabelKeysInPodAffinity; topology spread constraints take
//     matchLabelKeys the same way, MatchLabelKeysInPodTopologySpreadSelectorMerge). A term
//     without a labelSelector is left alone (it selects nothing either way); updates merge
//     nothing, so a stored pod keeps the selector it was created with;
//   * the keys are validated on pods (after the merge) and on pod templates: a key names a
//     label, appears in at most one of the two lists, is not also a key of the user's own
//     labelSelector, and the lists need a labelSelector.
//
// Threads: pure functions, any thread.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/api_error.h"
#include "apiserver/field_errors.h"
#include "apiserver/resources.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// Adds the requirements the pod's labels give its terms' matchLabelKeys / mismatchLabelKeys to
// the terms' label selectors; for a Pod being created.
void MergeLabelKeys(nlohmann::json& pod);

// The field errors of the label keys in the pod spec `spec`, found at `field` ("spec",
// "spec.template.spec"), in kube-apiserver's words and order.
FieldErrorList LabelKeyErrors(const nlohmann::json& spec, const std::string& field);

// 422 for the label keys of `obj`'s pod spec (a Pod's, or a workload's template), with every
// error as kube-apiserver aggregates them ("[a, b]" when there are several); OK for kinds
// without one.
VoidResult CheckLabelKeys(const ResourceInfo& r, const nlohmann::json& obj);

}  // namespace berth::apiserver
