// The scheduler extender wire format (kube-scheduler's extender/v1): the JSON documents the
// scheduler POSTs to an extender's verbs and the answers it reads. Shared by Berth's extender
// client and the extender SDK (berth/extender/server.h).
//
// The upstream types carry no JSON tags, so the field names on the wire are the Go field names
// ("Pod", "NodeNames", "FailedNodes", ...). Encoding writes them exactly; decoding accepts them
// in any letter case and null for an absent list or map, as Go's decoder does.
//
// All functions are pure and thread-safe. Decode errors name the field.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/export.h"

namespace berth::extender::v1 {

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;
// Node name -> reason it failed.
using FailedNodesMap = std::map<std::string, std::string>;

// The arguments of filter and prioritize: the pod and either the full nodes (`nodes`, for an
// extender without a node cache) or only their names (`node_names`, nodeCacheCapable).
struct BERTH_EXPORT ExtenderArgs {
  PodPtr pod;
  std::optional<std::vector<NodePtr>> nodes;
  std::optional<std::vector<std::string>> node_names;
};

struct BERTH_EXPORT ExtenderFilterResult {
  std::optional<std::vector<NodePtr>> nodes;  // answer with nodes or with names, like the args
  std::optional<std::vector<std::string>> node_names;
  FailedNodesMap failed_nodes;
  FailedNodesMap failed_and_unresolvable_nodes;
  std::string error;  // non-empty: the filter failed
};

struct BERTH_EXPORT HostPriority {
  std::string host;
  int64_t score = 0;  // 0..10
};
using HostPriorityList = std::vector<HostPriority>;

struct BERTH_EXPORT ExtenderBindingArgs {
  std::string pod_name, pod_namespace, pod_uid, node;
};

struct BERTH_EXPORT ExtenderBindingResult {
  std::string error;
};

struct BERTH_EXPORT MetaPod {
  std::string uid;
};

struct BERTH_EXPORT MetaVictims {
  std::vector<MetaPod> pods;
  int64_t num_pdb_violations = 0;
};

struct BERTH_EXPORT Victims {
  std::vector<PodPtr> pods;
  int64_t num_pdb_violations = 0;
};

// Preemption candidates: full victims for an extender without a node cache, victim UIDs
// (meta victims) for a nodeCacheCapable one.
struct BERTH_EXPORT ExtenderPreemptionArgs {
  PodPtr pod;
  std::optional<std::map<std::string, Victims>> node_name_to_victims;
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
};

// Always answered with meta victims.
struct BERTH_EXPORT ExtenderPreemptionResult {
  std::map<std::string, MetaVictims> node_name_to_meta_victims;
};

// ---- encoding (exact Go field names)
BERTH_EXPORT std::string Encode(const ExtenderArgs& args);
BERTH_EXPORT std::string Encode(const ExtenderFilterResult& result);
BERTH_EXPORT std::string Encode(const HostPriorityList& list);
BERTH_EXPORT std::string Encode(const ExtenderBindingArgs& args);
BERTH_EXPORT std::string Encode(const ExtenderBindingResult& result);
BERTH_EXPORT std::string Encode(const ExtenderPreemptionArgs& args);
BERTH_EXPORT std::string Encode(const ExtenderPreemptionResult& result);

// ---- decoding (field names in any case; null = empty)
BERTH_EXPORT Result<ExtenderArgs> DecodeExtenderArgs(std::string_view json);
BERTH_EXPORT Result<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view json);
BERTH_EXPORT Result<HostPriorityList> DecodeHostPriorityList(std::string_view json);
BERTH_EXPORT Result<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view json);
BERTH_EXPORT Result<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view json);
BERTH_EXPORT Result<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view json);
BERTH_EXPORT Result<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view json);

}  // namespace berth::extender::v1
