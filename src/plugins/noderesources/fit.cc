#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "api/pod_requests.h"
#include "berth/api/resources.h"
#include "berth/config/plugin_args.h"
#include "berth/framework/cluster_event.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "config/plugin_args_codec.h"
#include "framework/dra_extended_resources.h"
#include "framework/node_batch_score.h"
#include "plugins/noderesources/dra_backed.h"
#include "plugins/noderesources/fit_remedies.h"
#include "plugins/noderesources/noderesources.h"
#include "plugins/noderesources/resource_allocation.h"

namespace berth {
namespace {

using noderesources::RequestedToCapacityRatio;
using noderesources::RequestSource;
using noderesources::ScoredResource;
using noderesources::Scratch;

// What Filter compares against each node, fixed for the cycle.
struct FitPreFilterState final : StateData, std::enable_shared_from_this<FitPreFilterState> {
  Resource request;
  // Requested extended resources that are neither zero nor ignored by the args, sorted by name.
  std::vector<std::pair<std::string, int64_t>> checked_scalars;
  // Per checked scalar (empty when none is): a DeviceClass backs it (DRAExtendedResource), so a
  // node that does not advertise it leaves it to DynamicResources.
  std::vector<bool> dra_backed;

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<FitPreFilterState>(shared_from_this());
  }
};

struct FitPreScoreState final : StateData, std::enable_shared_from_this<FitPreScoreState> {
  std::vector<int64_t> pod_requests;  // in the order of the configured scoring resources
  // Scored extended resources backed by DRA (DRAExtendedResource); null: none.
  std::shared_ptr<const noderesources::DraBackedResources> dra;

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<FitPreScoreState>(shared_from_this());
  }
};

inline constexpr StateKey<FitPreFilterState> kPreFilterKey{"PreFilterNodeResourcesFit"};
inline constexpr StateKey<FitPreScoreState> kPreScoreKey{"PreScoreNodeResourcesFit"};

enum class Strategy { kLeastAllocated, kMostAllocated, kRequestedToCapacityRatio };

// DeviceClass selectors kept compiled (as kube-scheduler's scorer's CEL cache).
inline constexpr size_t kDraSelectorCacheSize = 10;

class Fit final : public PreFilterPlugin,
                  public FilterPlugin,
                  public PreScorePlugin,
                  public ScorePlugin,
                  public ScoresWithoutPreScore,
                  public NodeBatchScorer,
                  public EnqueueExtensions,
                  public FilterRemedySearch,
                  public PodSigner {
 public:
  static Result<std::unique_ptr<Plugin>> New(const PluginArgs* args, bool pod_level_resources,
                                             bool dra_extended_resource, Handle& handle);

  std::string_view Name() const override { return kNodeResourcesFitName; }

  bool Signable(const Pod& pod) const override {
    return !noderesources::RequestsDraBackedResource(pod, dra_extended_resource_, *handle_);
  }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return noderesources::SameSignedRequests(a, b, pod_level_resources_);
  }

  Status PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> nodes,
                   PreFilterResult* result) override;
  Status Filter(const CycleState& state, const PodInfo& pod, const NodeInfo& node) const override;
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) override;
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override;
  Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                    std::span<const NodeInfo* const> nodes, int64_t* out) const override;
  std::vector<ClusterEventWithHint> EventsToRegister() const override;
  // What to free on the rejected nodes, or a larger node (fit_remedies.h).
  RemedyProposal ProposeRemedies(const Pod& pod, std::span<const RejectedNode> rejected,
                                 size_t max_per_group) const override {
    return noderesources::ProposeFitRemedies(handle_->listers(), pod, rejected, max_per_group,
                                             [this](const Pod& p) { return RequestsOf(p); });
  }

 private:
  // The score of `node` for a pod requesting `pod_requests` (per scored resource).
  int64_t ScoreWith(const FitPreScoreState* s, std::span<const int64_t> pod_requests,
                    const NodeInfo& node) const;
  bool IsIgnored(std::string_view name) const;
  // True if `pod` fits an empty `node` by every resource it requests.
  bool FitsEmptyNode(const Resource& request, const Node& node) const;
  QueueingHint AfterPodEvent(const Pod& pod, const Pod* old_pod, const Pod* new_pod) const;
  QueueingHint AfterNodeEvent(const Pod& pod, const Node* old_node, const Node& new_node) const;
  // A pod's requests under the PodLevelResources gate (the hints see what Filter sees).
  Resource RequestsOf(const Pod& pod) const;
  // Whether a DeviceClass backs extended resource `name` (DRAExtendedResource on).
  bool BackedByDra(std::string_view name) const;

  std::vector<std::string> ignored_resources_;        // sorted
  std::vector<std::string> ignored_resource_groups_;  // sorted
  Strategy strategy_ = Strategy::kLeastAllocated;
  std::vector<ScoredResource> resources_;
  std::optional<RequestedToCapacityRatio> ratio_;
  bool pod_level_resources_ = true;    // the PodLevelResources feature gate
  bool dra_extended_resource_ = true;  // the DRAExtendedResource feature gate
  // Compiled DeviceClass selectors, for scoring extended resources backed by DRA.
  std::unique_ptr<cel::dra::SelectorCache> dra_selectors_;
  // What the claims hold, kept across cycles for scoring extended resources backed by DRA.
  std::unique_ptr<dra::AllocatedStateTracker> dra_held_;
  std::unique_ptr<dra::ClassDeviceIndexCache> dra_indexes_;
  Handle* handle_ = nullptr;
};

Result<std::unique_ptr<Plugin>> Fit::New(const PluginArgs* args, bool pod_level_resources,
                                         bool dra_extended_resource, Handle& handle) {
  static const config::NodeResourcesFitArgs kDefaults;
  auto typed = ArgsAs(args, &kDefaults, "NodeResourcesFitArgs");
  if (!typed.ok()) return typed.error();
  const config::NodeResourcesFitArgs* fit_args = *typed;
  auto plugin = std::make_unique<Fit>();
  plugin->pod_level_resources_ = pod_level_resources;
  plugin->dra_extended_resource_ = dra_extended_resource;
  if (dra_extended_resource) {
    plugin->dra_selectors_ = std::make_unique<cel::dra::SelectorCache>(kDraSelectorCacheSize);
    plugin->dra_held_ = std::make_unique<dra::AllocatedStateTracker>();
    plugin->dra_indexes_ = std::make_unique<dra::ClassDeviceIndexCache>();
  }
  plugin->handle_ = &handle;
  const auto& strategy = fit_args->scoring_strategy;
  if (strategy.type == "LeastAllocated") {
    plugin->strategy_ = Strategy::kLeastAllocated;
  } else if (strategy.type == "MostAllocated") {
    plugin->strategy_ = Strategy::kMostAllocated;
  } else if (strategy.type == "RequestedToCapacityRatio") {
    if (strategy.shape.empty()) {
      return Error{"scoring strategy RequestedToCapacityRatio requires a non-empty shape"};
    }
    plugin->strategy_ = Strategy::kRequestedToCapacityRatio;
    plugin->ratio_.emplace(strategy.shape);
  } else {
    return Error{"scoring strategy " + strategy.type + " is not supported"};
  }
  plugin->resources_ = noderesources::ResolveResources(strategy.resources);
  plugin->ignored_resources_ = fit_args->ignored_resources;
  std::sort(plugin->ignored_resources_.begin(), plugin->ignored_resources_.end());
  plugin->ignored_resource_groups_ = fit_args->ignored_resource_groups;
  std::sort(plugin->ignored_resource_groups_.begin(), plugin->ignored_resource_groups_.end());
  return std::unique_ptr<Plugin>(std::move(plugin));
}

bool Fit::BackedByDra(std::string_view name) const {
  if (!dra_extended_resource_ || !dra_extended::IsDraExtendedResourceName(name)) return false;
  const DraListers* dra = DraListersOf(handle_->listers());
  return dra != nullptr && dra_extended::ResolveDeviceClass(*dra, name) != nullptr;
}

bool Fit::IsIgnored(std::string_view name) const {
  if (!IsExtendedResourceName(name)) return false;
  if (std::binary_search(ignored_resources_.begin(), ignored_resources_.end(), name)) return true;
  if (ignored_resource_groups_.empty()) return false;
  const std::string_view group = name.substr(0, name.find('/'));
  return std::binary_search(ignored_resource_groups_.begin(), ignored_resource_groups_.end(),
                            group);
}

std::vector<ClusterEventWithHint> Fit::EventsToRegister() const {
  return {
      {{EventResource::kPod, kDelete | kUpdatePodScaleDown},
       [this](const Pod& pod, const EventObject& old_object,
              const EventObject& new_object) -> Result<QueueingHint> {
         return AfterPodEvent(pod, ObjectAs<Pod>(old_object), ObjectAs<Pod>(new_object));
       }},
      {{EventResource::kNode, kAdd | kUpdateNodeAllocatable},
       [this](const Pod& pod, const EventObject& old_object,
              const EventObject& new_object) -> Result<QueueingHint> {
         const Node* node = ObjectAs<Node>(new_object);
         if (!node) return Error{"node event without the node"};
         return AfterNodeEvent(pod, ObjectAs<Node>(old_object), *node);
       }},
  };
}

QueueingHint Fit::AfterPodEvent(const Pod& pod, const Pod* old_pod, const Pod* new_pod) const {
  if (!new_pod) {  // deleted: only an assigned or nominated pod held room
    const bool held_room = old_pod && (!old_pod->spec.node_name.empty() ||
                                       !old_pod->status.nominated_node_name.empty());
    return held_room ? QueueingHint::kQueue : QueueingHint::kQueueSkip;
  }
  if (new_pod->metadata.uid == pod.metadata.uid) return QueueingHint::kQueue;
  if (!old_pod || new_pod->spec.node_name.empty()) return QueueingHint::kQueueSkip;
  // Scaled down: it helps only if something this pod asks for went down.
  const Resource want = RequestsOf(pod);
  const Resource before = RequestsOf(*old_pod);
  const Resource after = RequestsOf(*new_pod);
  if ((want.milli_cpu > 0 && after.milli_cpu < before.milli_cpu) ||
      (want.memory > 0 && after.memory < before.memory) ||
      (want.ephemeral_storage > 0 && after.ephemeral_storage < before.ephemeral_storage))
    return QueueingHint::kQueue;
  for (const auto& [name, quantity] : want.scalar) {
    if (quantity > 0 && after.Scalar(name) < before.Scalar(name)) return QueueingHint::kQueue;
  }
  return QueueingHint::kQueueSkip;
}

bool Fit::FitsEmptyNode(const Resource& request, const Node& node) const {
  const Resource allocatable = Resource::FromList(node.status.allocatable);
  if (allocatable.allowed_pod_number < 1) return false;
  if (request.milli_cpu > allocatable.milli_cpu || request.memory > allocatable.memory ||
      request.ephemeral_storage > allocatable.ephemeral_storage)
    return false;
  for (const auto& [name, quantity] : request.scalar) {
    if (quantity <= 0 || IsIgnored(name) || quantity <= allocatable.Scalar(name)) continue;
    if (allocatable.Scalar(name) > 0 || !BackedByDra(name)) return false;
  }
  return true;
}

Resource Fit::RequestsOf(const Pod& pod) const {
  return pod_level_resources_ ? ComputePodRequests(pod).requests
                              : ComputePodRequestsIgnoringPodLevel(pod).requests;
}

QueueingHint Fit::AfterNodeEvent(const Pod& pod, const Node* old_node, const Node& new_node) const {
  const Resource want = RequestsOf(pod);
  if (!FitsEmptyNode(want, new_node)) return QueueingHint::kQueueSkip;  // too small anyway
  if (!old_node) return QueueingHint::kQueue;
  // Fits, but only more room than before can change an earlier "Insufficient" verdict.
  const Resource before = Resource::FromList(old_node->status.allocatable);
  const Resource after = Resource::FromList(new_node.status.allocatable);
  if (after.allowed_pod_number > before.allowed_pod_number) return QueueingHint::kQueue;
  if ((want.milli_cpu > 0 && after.milli_cpu > before.milli_cpu) ||
      (want.memory > 0 && after.memory > before.memory) ||
      (want.ephemeral_storage > 0 && after.ephemeral_storage > before.ephemeral_storage))
    return QueueingHint::kQueue;
  for (const auto& [name, quantity] : want.scalar) {
    if (quantity > 0 && after.Scalar(name) > before.Scalar(name)) return QueueingHint::kQueue;
  }
  return QueueingHint::kQueueSkip;
}

Status Fit::PreFilter(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>,
                      PreFilterResult*) {
  auto s = std::make_shared<FitPreFilterState>();
  PodRequests scratch;
  s->request = noderesources::RequestsOf(pod, pod_level_resources_, &scratch).requests;
  for (const auto& [name, quantity] : s->request.scalar) {
    if (quantity == 0 || IsIgnored(name)) continue;
    s->checked_scalars.emplace_back(name, quantity);
  }
  // Once per pod, so that Filter looks up no class per node.
  for (size_t i = 0; i < s->checked_scalars.size(); ++i) {
    if (!BackedByDra(s->checked_scalars[i].first)) continue;
    s->dra_backed.resize(s->checked_scalars.size());
    s->dra_backed[i] = true;
  }
  state.Write(kPreFilterKey, std::move(s));
  return Status::Success();
}

Status Fit::Filter(const CycleState& state, const PodInfo&, const NodeInfo& node) const {
  const FitPreFilterState* s = state.Read(kPreFilterKey);
  if (s == nullptr) {
    return Status::Error("error reading \"PreFilterNodeResourcesFit\" from cycleState: not found");
  }
  const Resource& alloc = node.allocatable();
  const Resource& used = node.requested();
  const Resource& req = s->request;

  // Reasons are only built for failing nodes; a default-constructed vector does not allocate.
  std::vector<std::string> reasons;
  // A request larger than the whole node cannot be fixed by preemption.
  bool unresolvable = false;

  if (static_cast<int64_t>(node.pods().size()) + 1 > alloc.allowed_pod_number) {
    reasons.emplace_back("Too many pods");
  }
  const bool requests_nothing =
      req.milli_cpu == 0 && req.memory == 0 && req.ephemeral_storage == 0 && req.scalar.empty();
  if (!requests_nothing) {
    if (req.milli_cpu > 0 && req.milli_cpu > alloc.milli_cpu - used.milli_cpu) {
      reasons.emplace_back("Insufficient cpu");
      unresolvable |= req.milli_cpu > alloc.milli_cpu;
    }
    if (req.memory > 0 && req.memory > alloc.memory - used.memory) {
      reasons.emplace_back("Insufficient memory");
      unresolvable |= req.memory > alloc.memory;
    }
    if (req.ephemeral_storage > 0 &&
        req.ephemeral_storage > alloc.ephemeral_storage - used.ephemeral_storage) {
      reasons.emplace_back("Insufficient ephemeral-storage");
      unresolvable |= req.ephemeral_storage > alloc.ephemeral_storage;
    }
    for (size_t i = 0; i < s->checked_scalars.size(); ++i) {
      const auto& [name, quantity] = s->checked_scalars[i];
      const int64_t node_alloc = alloc.Scalar(name);
      // Not advertised by the node but backed by a DeviceClass: DynamicResources allocates it.
      if (node_alloc <= 0 && !s->dra_backed.empty() && s->dra_backed[i]) continue;
      if (quantity > node_alloc - used.Scalar(name)) {
        reasons.push_back("Insufficient " + name);
        unresolvable |= quantity > node_alloc;
      }
    }
  }
  if (reasons.empty()) return Status::Success();
  return Status(unresolvable ? Code::kUnschedulableAndUnresolvable : Code::kUnschedulable,
                std::move(reasons));
}

Status Fit::PreScore(CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const>) {
  auto s = std::make_shared<FitPreScoreState>();
  s->pod_requests.resize(resources_.size());
  PodRequests scratch;
  noderesources::PodRequestsFor(noderesources::RequestsOf(pod, pod_level_resources_, &scratch),
                                resources_, RequestSource::kNonZero, s->pod_requests);
  if (dra_extended_resource_)
    s->dra = noderesources::DraBackedResources::Gather(*handle_, resources_, dra_selectors_.get(),
                                                       dra_held_.get(), dra_indexes_.get());
  state.Write(kPreScoreKey, std::move(s));
  return Status::Success();
}

Status Fit::Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                  int64_t* score) const {
  *score = 0;
  if (resources_.empty()) return Status::Error("resources not found");
  const size_t n = resources_.size();
  Scratch fallback(n);
  std::span<const int64_t> pod_requests;
  const FitPreScoreState* s = state.Read(kPreScoreKey);
  if (s != nullptr) {
    pod_requests = s->pod_requests;
  } else {
    // Score enabled without PreScore: compute the same requests here.
    PodRequests scratch;
    noderesources::PodRequestsFor(noderesources::RequestsOf(pod, pod_level_resources_, &scratch),
                                  resources_, RequestSource::kNonZero, fallback.span());
    pod_requests = fallback.span();
  }
  *score = ScoreWith(s, pod_requests, node);
  return Status::Success();
}

Status Fit::ScoreNodes(const CycleState& state, const PodInfo& pod,
                       std::span<const NodeInfo* const> nodes, int64_t* out) const {
  const FitPreScoreState* s = state.Read(kPreScoreKey);
  if (s == nullptr || resources_.empty()) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status st = Score(state, pod, *nodes[i], &out[i]);
      if (!st.IsSuccess()) return st;
    }
    return Status::Success();
  }
  if (strategy_ == Strategy::kLeastAllocated && !s->dra &&
      noderesources::IsCpuThenMemory(resources_)) {
    const int64_t pod_cpu = s->pod_requests[0], pod_mem = s->pod_requests[1];
    const int64_t wc = resources_[0].weight, wm = resources_[1].weight;
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Resource& alloc = nodes[i]->allocatable();
      const Resource& used = nodes[i]->non_zero_requested();
      out[i] = noderesources::LeastAllocatedCpuMemory(alloc.milli_cpu, used.milli_cpu + pod_cpu, wc,
                                                      alloc.memory, used.memory + pod_mem, wm);
    }
    return Status::Success();
  }
  for (size_t i = 0; i < nodes.size(); ++i) out[i] = ScoreWith(s, s->pod_requests, *nodes[i]);
  return Status::Success();
}

int64_t Fit::ScoreWith(const FitPreScoreState* s, std::span<const int64_t> pod_requests,
                       const NodeInfo& node) const {
  const size_t n = resources_.size();
  Scratch allocatable(n);
  Scratch requested(n);
  noderesources::NodeUsage(node, resources_, pod_requests, RequestSource::kNonZero,
                           allocatable.span(), requested.span());
  if (s != nullptr && s->dra)
    s->dra->Apply(node, resources_, pod_requests, allocatable.span(), requested.span());
  switch (strategy_) {
    case Strategy::kLeastAllocated:
      return noderesources::LeastAllocatedScore(requested.span(), allocatable.span(), resources_);
    case Strategy::kMostAllocated:
      return noderesources::MostAllocatedScore(requested.span(), allocatable.span(), resources_);
    case Strategy::kRequestedToCapacityRatio:
      return ratio_->Score(requested.span(), allocatable.span(), resources_);
  }
  return 0;
}

}  // namespace

PluginRegistration NodeResourcesFitRegistration(const config::FeatureGates& gates) {
  const bool pod_level = gates.Enabled(config::features::kPodLevelResources);
  const bool dra_extended = gates.Enabled("DRAExtendedResource");
  return MakeRegistration(
      kNodeResourcesFitName,
      [pod_level, dra_extended](const PluginArgs* args, Handle& handle) {
        return Fit::New(args, pod_level, dra_extended, handle);
      },
      config::InTreeArgsDecoder(std::string(kNodeResourcesFitName)));
}

}  // namespace berth
