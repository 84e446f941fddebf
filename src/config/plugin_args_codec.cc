#include "config/plugin_args_codec.h"

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <utility>

#include "api/codec.h"
#include "config/decode_util.h"
#include "config/in_tree_plugins.h"

namespace berth::config {

using internal::ChildPath;
using internal::Fields;
using internal::FormatGoDurationMs;
using internal::IndexPath;
using internal::Problems;
using internal::Quote;
using internal::Unsupported;

namespace {

// ------------------------------------------------------------------ shared pieces

void CheckTypeMeta(Fields& f, std::string_view kind) {
  if (auto v = f.String("apiVersion"); v && *v != kConfigApiVersion) {
    f.problems().Add(f.PathOf("apiVersion"), Unsupported(*v, {kConfigApiVersion}));
  }
  if (auto k = f.String("kind"); k && *k != kind) {
    f.problems().Add(f.PathOf("kind"), Unsupported(*k, {kind}));
  }
}

std::vector<ResourceSpec> DecodeResources(const std::vector<const nlohmann::json*>& list,
                                          const std::string& path, Problems& p) {
  std::vector<ResourceSpec> out;
  for (size_t i = 0; i < list.size(); ++i) {
    Fields r(list[i], IndexPath(path, i), p, {"name", "weight"});
    ResourceSpec spec;
    spec.name = r.String("name").value_or("");
    spec.weight = r.Int64("weight").value_or(0);
    out.push_back(std::move(spec));
  }
  return out;
}

// An unset or zero weight means 1, as kube-scheduler's defaulting does.
void DefaultResourceWeights(std::vector<ResourceSpec>& resources) {
  for (ResourceSpec& r : resources) {
    if (r.weight == 0) r.weight = 1;
  }
}

std::vector<UtilizationShapePoint> DecodeShape(const std::vector<const nlohmann::json*>& list,
                                               const std::string& path, Problems& p) {
  std::vector<UtilizationShapePoint> out;
  for (size_t i = 0; i < list.size(); ++i) {
    Fields s(list[i], IndexPath(path, i), p, {"utilization", "score"});
    UtilizationShapePoint point;
    point.utilization = s.Int32("utilization").value_or(0);
    point.score = s.Int32("score").value_or(0);
    out.push_back(point);
  }
  return out;
}

void ValidateShape(const std::vector<UtilizationShapePoint>& shape, const std::string& path,
                   Problems& p) {
  if (shape.empty()) {
    p.Add(path, "required value: at least one point must be specified");
    return;
  }
  for (size_t i = 1; i < shape.size(); ++i) {
    if (shape[i - 1].utilization >= shape[i].utilization) {
      p.Add(ChildPath(IndexPath(path, i), "utilization"),
            fmt::format("invalid value {}: values must be sorted in increasing order",
                        shape[i].utilization));
      break;
    }
  }
  for (size_t i = 0; i < shape.size(); ++i) {
    const UtilizationShapePoint& point = shape[i];
    if (point.utilization < 0 || point.utilization > 100) {
      p.Add(ChildPath(IndexPath(path, i), "utilization"),
            fmt::format("invalid value {}: not in valid range [0, 100]", point.utilization));
    }
    if (point.score < 0 || point.score > kMaxCustomPriorityScore) {
      p.Add(ChildPath(IndexPath(path, i), "score"),
            fmt::format("invalid value {}: not in valid range [0, {}]", point.score,
                        kMaxCustomPriorityScore));
    }
  }
}

std::string FormatList(const std::vector<std::string>& values) {
  std::string out = "[";
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += Quote(values[i]);
  }
  return out + "]";
}

void ValidateLabelName(std::string_view name, const std::string& path, Problems& p) {
  std::string problem = internal::QualifiedNameProblem(name);
  if (!problem.empty()) p.Add(path, fmt::format("invalid value {}: {}", Quote(name), problem));
}

// The checks kube-scheduler applies when it compiles a node selector requirement into a label
// selector requirement.
void ValidateLabelRequirement(const NodeSelectorRequirement& req, const std::string& path,
                              Problems& p) {
  const std::string values_path = ChildPath(path, "values");
  const std::string& op = req.op;
  if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist" && op != "Gt" &&
      op != "Lt") {
    p.Add(ChildPath(path, "operator"),
          Unsupported(op, {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"}));
    return;
  }
  ValidateLabelName(req.key, ChildPath(path, "key"), p);
  if (op == "In" || op == "NotIn") {
    if (req.values.empty()) {
      p.Add(values_path,
            "invalid value []: for 'in', 'notin' operators, values set can't be empty");
    }
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!req.values.empty()) {
      p.Add(values_path,
            fmt::format("invalid value {}: values set must be empty for exists and does not exist",
                        FormatList(req.values)));
    }
  } else {
    if (req.values.size() != 1) {
      p.Add(values_path,
            fmt::format("invalid value {}: for 'Gt', 'Lt' operators, exactly one value is required",
                        FormatList(req.values)));
    }
    for (size_t i = 0; i < req.values.size(); ++i) {
      const std::string& v = req.values[i];
      char* end = nullptr;
      errno = 0;
      std::strtoll(v.c_str(), &end, 10);
      if (v.empty() || std::isspace(static_cast<unsigned char>(v[0])) || *end != '\0' ||
          errno == ERANGE) {
        p.Add(
            IndexPath(values_path, i),
            fmt::format("invalid value {}: for 'Gt', 'Lt' operators, the value must be an integer",
                        Quote(v)));
      }
    }
  }
  for (size_t i = 0; i < req.values.size(); ++i) {
    std::string problem = internal::LabelValueProblem(req.values[i]);
    if (!problem.empty()) {
      p.Add(IndexPath(values_path, i),
            fmt::format("invalid value {}: {}", Quote(req.values[i]), problem));
    }
  }
}

void ValidateNodeSelectorTerm(const NodeSelectorTerm& term, const std::string& path, Problems& p) {
  const std::string exprs_path = ChildPath(path, "matchExpressions");
  for (size_t i = 0; i < term.match_expressions.size(); ++i) {
    ValidateLabelRequirement(term.match_expressions[i], IndexPath(exprs_path, i), p);
  }
  const std::string fields_path = ChildPath(path, "matchFields");
  for (size_t i = 0; i < term.match_fields.size(); ++i) {
    const NodeSelectorRequirement& req = term.match_fields[i];
    const std::string req_path = IndexPath(fields_path, i);
    if (req.op != "In" && req.op != "NotIn") {
      p.Add(ChildPath(req_path, "operator"), Unsupported(req.op, {"In", "NotIn"}));
    } else if (req.values.size() != 1) {
      p.Add(ChildPath(req_path, "values"),
            fmt::format("invalid value {}: must have one element", FormatList(req.values)));
    }
  }
}

bool IsEmptyTerm(const NodeSelectorTerm& term) {
  return term.match_expressions.empty() && term.match_fields.empty();
}

VoidResult ToVoid(const Problems& p) {
  if (p.ok()) return {};
  return p.error();
}

// ------------------------------------------------------------------ validation

void Validate(const DefaultPreemptionArgs& args, std::string_view path, Problems& p) {
  const std::string pct_path = ChildPath(path, "minCandidateNodesPercentage");
  const std::string abs_path = ChildPath(path, "minCandidateNodesAbsolute");
  if (args.min_candidate_nodes_percentage < 0 || args.min_candidate_nodes_percentage > 100) {
    p.Add(pct_path, fmt::format("invalid value {}: not in valid range [0, 100]",
                                args.min_candidate_nodes_percentage));
  }
  if (args.min_candidate_nodes_absolute < 0) {
    p.Add(abs_path, fmt::format("invalid value {}: not in valid range [0, inf)",
                                args.min_candidate_nodes_absolute));
  }
  if (args.min_candidate_nodes_percentage == 0 && args.min_candidate_nodes_absolute == 0) {
    p.Add(pct_path,
          "invalid value 0: cannot be zero at the same time as minCandidateNodesAbsolute");
  }
}

void Validate(const InterPodAffinityArgs& args, std::string_view path, Problems& p) {
  if (args.hard_pod_affinity_weight < 0 || args.hard_pod_affinity_weight > 100) {
    p.Add(ChildPath(path, "hardPodAffinityWeight"),
          fmt::format("invalid value {}: not in valid range [0, 100]",
                      args.hard_pod_affinity_weight));
  }
}

void Validate(const NodeAffinityArgs& args, std::string_view path, Problems& p) {
  if (!args.added_affinity) return;
  const std::string base = ChildPath(path, "addedAffinity");
  if (args.added_affinity->required) {
    const std::string terms_path = ChildPath(
        ChildPath(base, "requiredDuringSchedulingIgnoredDuringExecution"), "nodeSelectorTerms");
    const auto& terms = args.added_affinity->required->terms;
    for (size_t i = 0; i < terms.size(); ++i) {
      if (IsEmptyTerm(terms[i])) continue;  // selects nothing; not an error
      ValidateNodeSelectorTerm(terms[i], IndexPath(terms_path, i), p);
    }
  }
  const std::string preferred_path =
      ChildPath(base, "preferredDuringSchedulingIgnoredDuringExecution");
  const auto& preferred = args.added_affinity->preferred;
  for (size_t i = 0; i < preferred.size(); ++i) {
    // Zero-weight and empty terms are ignored by the scorer, so their contents are not checked.
    if (preferred[i].weight == 0 || IsEmptyTerm(preferred[i].preference)) continue;
    ValidateNodeSelectorTerm(preferred[i].preference,
                             ChildPath(IndexPath(preferred_path, i), "preference"), p);
  }
}

// `rtcr_present`: whether scoringStrategy.requestedToCapacityRatio was given (decoding knows;
// for args built in code a non-empty shape stands for it).
void ValidateFit(const NodeResourcesFitArgs& args, std::string_view path, bool rtcr_present,
                 Problems& p) {
  const std::string res_path = ChildPath(path, "ignoredResources");
  for (size_t i = 0; i < args.ignored_resources.size(); ++i) {
    ValidateLabelName(args.ignored_resources[i], IndexPath(res_path, i), p);
  }
  const std::string group_path = ChildPath(path, "ignoredResourceGroups");
  for (size_t i = 0; i < args.ignored_resource_groups.size(); ++i) {
    const std::string& group = args.ignored_resource_groups[i];
    if (group.find('/') != std::string::npos) {
      p.Add(IndexPath(group_path, i),
            fmt::format("invalid value {}: resource group name can't contain '/'", Quote(group)));
    }
    ValidateLabelName(group, IndexPath(group_path, i), p);
  }
  const std::string strategy_path = ChildPath(path, "scoringStrategy");
  const auto& strategy = args.scoring_strategy;
  if (strategy.type != "LeastAllocated" && strategy.type != "MostAllocated" &&
      strategy.type != "RequestedToCapacityRatio") {
    p.Add(ChildPath(strategy_path, "type"),
          Unsupported(strategy.type,
                      {"LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"}));
  }
  const std::string resources_path = ChildPath(strategy_path, "resources");
  for (size_t i = 0; i < strategy.resources.size(); ++i) {
    const ResourceSpec& r = strategy.resources[i];
    if (r.weight <= 0 || r.weight > 100) {
      p.Add(ChildPath(IndexPath(resources_path, i), "weight"),
            fmt::format("invalid value {}: resource weight of {} not in valid range (0, 100]",
                        r.weight, r.name));
    }
  }
  const std::string rtcr_path = ChildPath(strategy_path, "requestedToCapacityRatio");
  if (strategy.type == "RequestedToCapacityRatio") {
    if (!rtcr_present) {
      p.Add(rtcr_path, "required value: must be specified when type is RequestedToCapacityRatio");
    } else {
      ValidateShape(strategy.shape, ChildPath(rtcr_path, "shape"), p);
    }
  } else if (rtcr_present) {
    p.Add(rtcr_path, "forbidden: must be nil when type is not RequestedToCapacityRatio");
  }
}

void Validate(const NodeResourcesBalancedAllocationArgs& args, std::string_view path, Problems& p) {
  const std::string resources_path = ChildPath(path, "resources");
  std::set<std::string, std::less<>> seen;
  for (size_t i = 0; i < args.resources.size(); ++i) {
    const ResourceSpec& r = args.resources[i];
    const std::string item = IndexPath(resources_path, i);
    if (!seen.insert(r.name).second) {
      p.Add(ChildPath(item, "name"), fmt::format("duplicate value {}", Quote(r.name)));
    }
    if (r.weight != 1) {
      p.Add(ChildPath(item, "weight"), fmt::format("invalid value {}: must be 1", r.weight));
    }
  }
}

void Validate(const PodTopologySpreadArgs& args, std::string_view path, Problems& p) {
  const std::string type_path = ChildPath(path, "defaultingType");
  if (args.defaulting_type != "System" && args.defaulting_type != "List") {
    p.Add(type_path, Unsupported(args.defaulting_type, {"System", "List"}));
  } else if (args.defaulting_type == "System" && !args.default_constraints.empty()) {
    p.Add(type_path, "invalid value \"System\": when .defaultConstraints are not empty");
  }
  const std::string constraints_path = ChildPath(path, "defaultConstraints");
  const auto& constraints = args.default_constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    const TopologySpreadConstraint& c = constraints[i];
    const std::string item = IndexPath(constraints_path, i);
    if (c.max_skew <= 0) {
      p.Add(ChildPath(item, "maxSkew"),
            fmt::format("invalid value {}: not in valid range (0, inf)", c.max_skew));
    }
    if (c.topology_key.empty()) {
      p.Add(ChildPath(item, "topologyKey"), "required value: can not be empty");
    } else {
      ValidateLabelName(c.topology_key, ChildPath(item, "topologyKey"), p);
    }
    if (c.when_unsatisfiable.empty()) {
      p.Add(ChildPath(item, "whenUnsatisfiable"), "required value: can not be empty");
    } else if (c.when_unsatisfiable != "DoNotSchedule" &&
               c.when_unsatisfiable != "ScheduleAnyway") {
      p.Add(ChildPath(item, "whenUnsatisfiable"),
            Unsupported(c.when_unsatisfiable, {"DoNotSchedule", "ScheduleAnyway"}));
    }
    if (c.label_selector) {
      p.Add(ChildPath(item, "labelSelector"),
            "forbidden: constraint must not define a selector, as they deduced for each pod");
    }
    for (size_t j = 0; j < i; ++j) {
      if (constraints[j].topology_key == c.topology_key &&
          constraints[j].when_unsatisfiable == c.when_unsatisfiable) {
        p.Add(item,
              fmt::format("duplicate value \"{{{}, {}}}\"", c.topology_key, c.when_unsatisfiable));
        break;
      }
    }
  }
}

// `shape_given`: whether the shape was written (even empty), which is what the feature-off
// check looks at.
void ValidateVolumeBinding(const VolumeBindingArgs& args, std::string_view path, bool shape_given,
                           bool storage_capacity_scoring, Problems& p) {
  if (args.bind_timeout_seconds < 0) {
    p.Add(
        ChildPath(path, "bindTimeoutSeconds"),
        fmt::format("invalid value {}: invalid BindTimeoutSeconds, should not be a negative value",
                    args.bind_timeout_seconds));
  }
  if (storage_capacity_scoring) {
    ValidateShape(args.shape, ChildPath(path, "shape"), p);
  } else if (shape_given) {
    p.Add(ChildPath(path, "shape"),
          "invalid value: unexpected field `shape`, remove it or turn on the feature gate "
          "StorageCapacityScoring");
  }
}

// kube-scheduler's ValidateDynamicResourcesArgs with its v1.37 default gates
// (DRASchedulerFilterTimeout, DRADeviceBindingConditions and DRAResourceClaimDeviceStatus on).
void Validate(const DynamicResourcesArgs& args, std::string_view path, Problems& p) {
  if (args.filter_timeout_ms < 0) {
    p.Add(ChildPath(path, "filterTimeout"),
          fmt::format("invalid value \"{}\": must be zero or positive",
                      FormatGoDurationMs(args.filter_timeout_ms)));
  }
  if (args.binding_timeout_ms < 1000) {
    p.Add(ChildPath(path, "bindingTimeout"),
          fmt::format("invalid value \"{}\": must be at least 1 second",
                      FormatGoDurationMs(args.binding_timeout_ms)));
  }
}

template <class T>
ArgsResult Finish(std::shared_ptr<T> args, const Problems& p) {
  if (!p.ok()) return p.error();
  return std::shared_ptr<const PluginArgs>(std::move(args));
}

ArgsResult DecodeVolumeBinding(const nlohmann::json* raw, const std::string& path,
                               bool storage_capacity_scoring) {
  Problems p;
  Fields f(raw, path, p, {"apiVersion", "kind", "bindTimeoutSeconds", "shape"});
  CheckTypeMeta(f, "VolumeBindingArgs");
  auto args = std::make_shared<VolumeBindingArgs>();
  if (auto v = f.Int64("bindTimeoutSeconds")) args->bind_timeout_seconds = *v;
  bool shape_given = false;
  if (auto list = f.List("shape")) {
    shape_given = true;
    args->shape = DecodeShape(*list, f.PathOf("shape"), p);
  }
  if (args->shape.empty() && storage_capacity_scoring) {
    // Favors the lowest utilization: the node whose volumes leave the most room.
    args->shape = {{0, kMaxCustomPriorityScore}, {100, 0}};
  }
  if (p.ok()) ValidateVolumeBinding(*args, path, shape_given, storage_capacity_scoring, p);
  return Finish(std::move(args), p);
}

}  // namespace

// ------------------------------------------------------------------ decoders

ArgsResult DecodeDynamicResourcesArgs(const nlohmann::json* raw, const std::string& path) {
  Problems p;
  Fields f(raw, path, p, {"apiVersion", "kind", "filterTimeout", "bindingTimeout"});
  CheckTypeMeta(f, "DynamicResourcesArgs");
  auto args = std::make_shared<DynamicResourcesArgs>();
  if (auto ms = f.DurationMs("filterTimeout")) args->filter_timeout_ms = *ms;
  if (auto ms = f.DurationMs("bindingTimeout")) args->binding_timeout_ms = *ms;
  if (p.ok()) Validate(*args, path, p);
  return Finish(std::move(args), p);
}

VoidResult ValidateDynamicResourcesArgs(const DynamicResourcesArgs& args, std::string_view path) {
  Problems p;
  Validate(args, path, p);
  if (!p.ok()) return p.error();
  return {};
}

ArgsResult DecodeDefaultPreemptionArgs(const nlohmann::json* raw, const std::string& path) {
  Problems p;
  Fields f(raw, path, p,
           {"apiVersion", "kind", "minCandidateNodesPercentage", "minCandidateNodesAbsolute"});
  CheckTypeMeta(f, "DefaultPreemptionArgs");
  auto args = std::make_shared<DefaultPreemptionArgs>();
  if (auto v = f.Int32("minCandidateNodesPercentage")) args->min_candidate_nodes_percentage = *v;
  if (auto v = f.Int32("minCandidateNodesAbsolute")) args->min_candidate_nodes_absolute = *v;
  if (p.ok()) Validate(*args, path, p);
  return Finish(std::move(args), p);
}

ArgsResult DecodeInterPodAffinityArgs(const nlohmann::json* raw, const std::string& path) {
  Problems p;
  Fields f(raw, path, p,
           {"apiVersion", "kind", "hardPodAffinityWeight", "ignorePreferredTermsOfExistingPods"});
  CheckTypeMeta(f, "InterPodAffinityArgs");
  auto args = std::make_shared<InterPodAffinityArgs>();
  if (auto v = f.Int32("hardPodAffinityWeight")) args->hard_pod_affinity_weight = *v;
  if (auto v = f.Bool("ignorePreferredTermsOfExistingPods")) {
    args->ignore_preferred_terms_of_existing_pods = *v;
  }
  if (p.ok()) Validate(*args, path, p);
  return Finish(std::move(args), p);
}

ArgsResult DecodeNodeAffinityArgs(const nlohmann::json* raw, const std::string& path) {
  Problems p;
  Fields f(raw, path, p, {"apiVersion", "kind", "addedAffinity"});
  CheckTypeMeta(f, "NodeAffinityArgs");
  auto args = std::make_shared<NodeAffinityArgs>();
  if (const nlohmann::json* v = f.Get("addedAffinity"); v != nullptr && p.ok()) {
    auto affinity = DecodeNodeAffinity(*v, f.PathOf("addedAffinity"));
    if (affinity.ok()) {
      args->added_affinity = std::move(affinity).value();
    } else {
      p.AddMessage(affinity.error().message);
    }
  }
  if (p.ok()) Validate(*args, path, p);
  return Finish(std::move(args), p);
}

ArgsResult DecodeNodeResourcesFitArgs(const nlohmann::json* raw, const std::string& path) {
  Problems p;
  Fields f(raw, path, p,
           {"apiVersion", "kind", "ignoredResources", "ignoredResourceGroups", "scoringStrategy"});
  CheckTypeMeta(f, "NodeResourcesFitArgs");
  auto args = std::make_shared<NodeResourcesFitArgs>();
  if (auto v = f.StringList("ignoredResources")) args->ignored_resources = std::move(*v);
  if (auto v = f.StringList("ignoredResourceGroups")) args->ignored_resource_groups = std::move(*v);
  bool rtcr_present = false;
  if (const nlohmann::json* raw_strategy = f.Get("scoringStrategy")) {
    Fields s(raw_strategy, f.PathOf("scoringStrategy"), p,
             {"type", "resources", "requestedToCapacityRatio"});
    auto& strategy = args->scoring_strategy;
    // A given strategy must name its type; only the resources list has a default.
    strategy.type = s.String("type").value_or("");
    if (auto list = s.List("resources"); list && !list->empty()) {
      strategy.resources = DecodeResources(*list, s.PathOf("resources"), p);
    }
    if (const nlohmann::json* rtcr = s.Get("requestedToCapacityRatio")) {
      rtcr_present = true;
      Fields r(rtcr, s.PathOf("requestedToCapacityRatio"), p, {"shape"});
      if (auto list = r.List("shape")) strategy.shape = DecodeShape(*list, r.PathOf("shape"), p);
    }
    DefaultResourceWeights(strategy.resources);
  }
  if (p.ok()) ValidateFit(*args, path, rtcr_present, p);
  return Finish(std::move(args), p);
}

ArgsResult DecodeNodeResourcesBalancedAllocationArgs(const nlohmann::json* raw,
                                                     const std::string& path) {
  Problems p;
  Fields f(raw, path, p, {"apiVersion", "kind", "resources"});
  CheckTypeMeta(f, "NodeResourcesBalancedAllocationArgs");
  auto args = std::make_shared<NodeResourcesBalancedAllocationArgs>();
  if (auto list = f.List("resources"); list && !list->empty()) {
    args->resources = DecodeResources(*list, f.PathOf("resources"), p);
    DefaultResourceWeights(args->resources);
  }
  if (p.ok()) Validate(*args, path, p);
  return Finish(std::move(args), p);
}

ArgsResult DecodePodTopologySpreadArgs(const nlohmann::json* raw, const std::string& path) {
  Problems p;
  Fields f(raw, path, p, {"apiVersion", "kind", "defaultConstraints", "defaultingType"});
  CheckTypeMeta(f, "PodTopologySpreadArgs");
  auto args = std::make_shared<PodTopologySpreadArgs>();
  if (auto list = f.List("defaultConstraints")) {
    const std::string list_path = f.PathOf("defaultConstraints");
    for (size_t i = 0; i < list->size() && p.ok(); ++i) {
      auto c = DecodeTopologySpreadConstraint(*(*list)[i], IndexPath(list_path, i));
      if (c.ok()) {
        args->default_constraints.push_back(std::move(c).value());
      } else {
        p.AddMessage(c.error().message);
      }
    }
  }
  if (auto v = f.String("defaultingType"); v && !v->empty()) args->defaulting_type = *v;
  if (p.ok()) Validate(*args, path, p);
  return Finish(std::move(args), p);
}

ArgsResult DecodeVolumeBindingArgs(const nlohmann::json* raw, const std::string& path) {
  return DecodeVolumeBinding(raw, path, /*storage_capacity_scoring=*/false);
}

ArgsDecoder VolumeBindingArgsDecoder(bool storage_capacity_scoring) {
  return [storage_capacity_scoring](const nlohmann::json* raw, const std::string& path) {
    return DecodeVolumeBinding(raw, path, storage_capacity_scoring);
  };
}

ArgsDecoder InTreeArgsDecoder(std::string_view plugin_name) {
  const InTreePlugin* plugin = FindInTreePlugin(plugin_name);
  if (plugin == nullptr || plugin->decode_args == nullptr) return {};
  return plugin->decode_args;
}

// ------------------------------------------------------------------ typed validation

VoidResult ValidateDefaultPreemptionArgs(const DefaultPreemptionArgs& args, std::string_view path) {
  Problems p;
  Validate(args, path, p);
  return ToVoid(p);
}

VoidResult ValidateInterPodAffinityArgs(const InterPodAffinityArgs& args, std::string_view path) {
  Problems p;
  Validate(args, path, p);
  return ToVoid(p);
}

VoidResult ValidateNodeAffinityArgs(const NodeAffinityArgs& args, std::string_view path) {
  Problems p;
  Validate(args, path, p);
  return ToVoid(p);
}

VoidResult ValidateNodeResourcesFitArgs(const NodeResourcesFitArgs& args, std::string_view path) {
  Problems p;
  ValidateFit(args, path, !args.scoring_strategy.shape.empty(), p);
  return ToVoid(p);
}

VoidResult ValidateNodeResourcesBalancedAllocationArgs(
    const NodeResourcesBalancedAllocationArgs& args, std::string_view path) {
  Problems p;
  Validate(args, path, p);
  return ToVoid(p);
}

VoidResult ValidatePodTopologySpreadArgs(const PodTopologySpreadArgs& args, std::string_view path) {
  Problems p;
  Validate(args, path, p);
  return ToVoid(p);
}

VoidResult ValidateVolumeBindingArgs(const VolumeBindingArgs& args, std::string_view path,
                                     bool storage_capacity_scoring) {
  Problems p;
  ValidateVolumeBinding(args, path, !args.shape.empty(), storage_capacity_scoring, p);
  return ToVoid(p);
}

}  // namespace berth::config
