// Label arithmetic for the remedies Filter plugins propose to `berth explain`
// (FilterRemedySearch): the fewest label changes after which a pod's or a node's labels match
// what a selector asks for, and how to show them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"

namespace berth {

// Label changes: a value to set, or nullopt to remove the label.
using LabelChanges = std::map<std::string, std::optional<std::string>>;

// The changes that turn `have` into `want`.
LabelChanges Diff(const Labels& have, const Labels& want);

// The fewest label changes (roughly: one per requirement not met) after which `have` matches
// every selector. An Exists requirement takes "true"; a selector that contradicts itself gives
// changes that still do not match, which the verification then throws away.
LabelChanges ChangesToMatch(const std::vector<LabelSelector>& selectors, const Labels& have);

// The label changes after which a node's labels match one required node affinity term (the
// term needing the fewest); nullopt when every term selects on fields (the node's name).
std::optional<LabelChanges> NodeTermChanges(const NodeSelector& required, const Labels& have);

void Apply(const LabelChanges& changes, Labels& labels);

// Whether the label describes the machine itself (its name, OS, architecture, instance type),
// as the kubelet sets it: relabelling a node there does not make it another machine, so no
// suggestion changes one.
bool IsMachineLabel(std::string_view key);

// "a=1 b-" as kubectl label takes them.
std::string KubectlLabels(const LabelChanges& changes);
// "a=1,b removed" for prose.
std::string DescribeLabels(const LabelChanges& changes);
// YAML of a label map under `indent`.
std::string LabelsYaml(const Labels& labels, std::string_view indent);

// The selector an existing pod must match to count for the incoming pod's required affinity
// term: the term's own, with matchLabelKeys / mismatchLabelKeys resolved against the incoming
// pod's labels as the scheduler resolves them.
LabelSelector EffectiveSelector(const PodAffinityTerm& term, const Pod& pod);

}  // namespace berth
