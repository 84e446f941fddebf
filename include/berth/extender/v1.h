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

namespace berth::extender::v1 {

using PodPtr = std::shared_ptr<const Pod>;
using NodePtr = std::shared_ptr<const Node>;
// Node name -> reason it failed.
using FailedNodesMap = std::map<std::string, std::string>;

// The arguments of filter and prioritize: the pod and either the full nodes (`nodes`, for an
// extender without a node cache) or only their names (`node_names`, nodeCacheCapable).
struct ExtenderArgs {
  PodPtr pod;
  std::optional<std::vector<NodePtr>> nodes;
  std::optional<std::vector<std::string>> node_names;
};

struct ExtenderFilterResult {
  std::optional<std::vector<NodePtr>> nodes;  // answer with nodes or with names, like the args
  std::optional<std::vector<std::string>> node_names;
  FailedNodesMap failed_nodes;
  FailedNodesMap failed_and_unresolvable_nodes;
  std::string error;  // non-empty: the filter failed
};

struct HostPriority {
  std::string host;
  int64_t score = 0;  // 0..10
};
using HostPriorityList = std::vector<HostPriority>;

struct ExtenderBindingArgs {
  std::string pod_name, pod_namespace, pod_uid, node;
};

struct ExtenderBindingResult {
  std::string error;
};

struct MetaPod {
  std::string uid;
};

struct MetaVictims {
  std::vector<MetaPod> pods;
  int64_t num_pdb_violations = 0;
};

struct Victims {
  std::vector<PodPtr> pods;
  int64_t num_pdb_violations = 0;
};

// Preemption candidates: full victims for an extender without a node cache, victim UIDs
// (meta victims) for a nodeCacheCapable one.
struct ExtenderPreemptionArgs {
  PodPtr pod;
  std::optional<std::map<std::string, Victims>> node_name_to_victims;
  std::optional<std::map<std::string, MetaVictims>> node_name_to_meta_victims;
};

// Always answered with meta victims.
struct ExtenderPreemptionResult {
  std::map<std::string, MetaVictims> node_name_to_meta_victims;
};

// ---- encoding (exact Go field names)
std::string Encode(const ExtenderArgs& args);
std::string Encode(const ExtenderFilterResult& result);
std::string Encode(const HostPriorityList& list);
std::string Encode(const ExtenderBindingArgs& args);
std::string Encode(const ExtenderBindingResult& result);
std::string Encode(const ExtenderPreemptionArgs& args);
std::string Encode(const ExtenderPreemptionResult& result);

// ---- decoding (field names in any case; null = empty)
Result<ExtenderArgs> DecodeExtenderArgs(std::string_view json);
Result<ExtenderFilterResult> DecodeExtenderFilterResult(std::string_view json);
Result<HostPriorityList> DecodeHostPriorityList(std::string_view json);
Result<ExtenderBindingArgs> DecodeExtenderBindingArgs(std::string_view json);
Result<ExtenderBindingResult> DecodeExtenderBindingResult(std::string_view json);
Result<ExtenderPreemptionArgs> DecodeExtenderPreemptionArgs(std::string_view json);
Result<ExtenderPreemptionResult> DecodeExtenderPreemptionResult(std::string_view json);

}  // namespace berth::extender::v1
