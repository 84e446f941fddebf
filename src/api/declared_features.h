// Node declared features (KEP-5328, NodeDeclaredFeatures, GA in v1.37): a kubelet lists in
// the Node's status.declaredFeatures the node-level features it supports; the scheduler's
// NodeDeclaredFeatures plugin infers from a pod's spec which of them the pod needs and keeps
// the pod off nodes that do not declare them.
//
// This is the registry both sides share, as component-helpers' nodedeclaredfeatures is
// upstream: each feature's name, the kubelet gate that makes a kubelet declare it, and whether
// a pod needs it when it is scheduled. Features that matter only to updates of running pods
// (the in-place resize ones) infer nothing at scheduling time.
//
// Version bounds: a feature may name the last Kubernetes version (inclusive) for which it is
// still a scheduling factor, the release from which every node of the supported skew has it.
// Past that version a kubelet no longer declares it and a scheduler no longer requires it;
// versions are compared as Kubernetes compares them (api/kube_version.h), so a pre-release of
// the next minor is already past it. None of v1.37's features has a bound.
//
// Node and Pod layouts are frozen (SDK ABI), so the fields read here that the typed objects do
// not carry are read from the objects' documents: status.declaredFeatures of a node, and
// spec.hostUsers and containers' restartPolicyRules of a pod. Informers that drop documents
// keep these (NodeDocumentToKeep, PodKeepsDocument).
#pragma once

#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "api/kube_version.h"
#include "berth/api/objects.h"

namespace berth::declared_features {

struct Feature {
  std::string_view name;
  // The kubelet feature gate whose value decides whether a kubelet declares the feature.
  std::string_view kubelet_gate;
  // Whether a v1.37 kubelet with its default configuration and gates declares it.
  bool declared_by_default;
  // Whether a pod being scheduled needs the feature (null: it never does).
  bool (*infer_for_scheduling)(const Pod& pod);
  // The last version (inclusive) for which the feature matters; empty: no bound.
  std::string_view max_version = {};
};

// The kube-scheduler version whose decisions Berth follows: the version compared with the
// features' bounds when a pod is scheduled.
inline constexpr std::string_view kSchedulerVersion = "1.37.0";

// Every feature Berth knows, sorted by name.
std::span<const Feature> AllFeatures();

// Whether `feature` still matters to a component of `version`: it has no bound, or `version`
// is not above it (a bound that does not parse counts as none).
bool RelevantAt(const Feature& feature, const KubeVersion& version);

// The features `pod` needs on its node, sorted by name; empty for nearly every pod.
std::vector<std::string> InferForScheduling(const Pod& pod);
// The same, for a scheduler of `scheduler_version` with the features of `registry`: a feature
// past its bound is not required.
std::vector<std::string> InferForScheduling(const Pod& pod, std::span<const Feature> registry,
                                            const KubeVersion& scheduler_version);

// A node's status.declaredFeatures (empty when it declares none or keeps no document).
const nlohmann::json* NodeDeclaredFeaturesOf(const Node& node);
// True if every feature in `required` is among the node's declared features.
bool NodeDeclaresAll(const Node& node, std::span<const std::string> required);
// Whether two nodes declare the same list.
bool SameDeclaredFeatures(const Node& a, const Node& b);

// What an informer that drops node documents keeps of one: {"status":{"declaredFeatures":
// [...]}} when the node declares features, else null (nothing to keep).
RawObject NodeDocumentToKeep(const nlohmann::json& node_doc);
// Whether a pod's document holds a field the inference reads (spec.hostUsers false or a
// container's restartPolicyRules), so that an informer dropping pod documents keeps it.
bool PodKeepsDocument(const nlohmann::json& pod_doc);

// What a kubelet of `kubelet_version` declares with v1.37's default configuration and gates
// (sorted), as simulated kubelets publish it: features past their bound are left out (a
// version that does not parse applies no bound, as a kubelet that knows no version).
std::vector<std::string> KubeletDefaults(std::string_view kubelet_version,
                                         std::span<const Feature> registry = AllFeatures());
// `declared` (sorted) without the features of `registry` that a kubelet of `kubelet_version`
// no longer declares; names the registry does not know are kept.
std::vector<std::string> WithoutPastBound(std::vector<std::string> declared,
                                          std::string_view kubelet_version,
                                          std::span<const Feature> registry = AllFeatures());

}  // namespace berth::declared_features
