#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "berth/config/plugin_args.h"
#include "berth/framework/cycle_state.h"
#include "berth/framework/plugin.h"
#include "berth/framework/pod_signer.h"
#include "config/plugin_args_codec.h"
#include "framework/node_batch_score.h"
#include "plugins/noderesources/dra_backed.h"
#include "plugins/noderesources/noderesources.h"
#include "plugins/noderesources/resource_allocation.h"

namespace berth {
namespace {

using noderesources::RequestSource;
using noderesources::ScoredResource;
using noderesources::Scratch;

struct BalancedPreScoreState final : StateData,
                                     std::enable_shared_from_this<BalancedPreScoreState> {
  std::vector<int64_t> pod_requests;  // in the order of the configured resources
  // Configured extended resources backed by DRA (DRAExtendedResource); null: none.
  std::shared_ptr<const noderesources::DraBackedResources> dra;

  std::shared_ptr<StateData> Clone() const override {
    return std::const_pointer_cast<BalancedPreScoreState>(shared_from_this());
  }
};

inline constexpr StateKey<BalancedPreScoreState> kPreScoreKey{
    "PreScoreNodeResourcesBalancedAllocation"};

bool RequestsNothing(std::span<const int64_t> pod_requests) {
  return std::all_of(pod_requests.begin(), pod_requests.end(), [](int64_t r) { return r == 0; });
}

class BalancedAllocation final : public PreScorePlugin,
                                 public ScorePlugin,
                                 public ScoresWithoutPreScore,
                                 public NodeBatchScorer,
                                 public PodSigner {
 public:
  static Result<std::unique_ptr<Plugin>> New(const PluginArgs* args, bool pod_level_resources,
                                             bool dra_extended_resource, Handle& handle);

  std::string_view Name() const override { return kNodeResourcesBalancedAllocationName; }

  bool Signable(const Pod& pod) const override {
    return !noderesources::RequestsDraBackedResource(pod, dra_selectors_ != nullptr, *handle_);
  }
  bool SameSignature(const Pod& a, const Pod& b) const override {
    return noderesources::SameSignedRequests(a, b, pod_level_resources_);
  }

  // Skip for pods that request none of the configured resources: scoring them would pile
  // best-effort pods onto the same nodes.
  Status PreScore(CycleState& state, const PodInfo& pod,
                  std::span<const NodeInfo* const> feasible) override;
  Status Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
               int64_t* score) const override;
  Status ScoreNodes(const CycleState& state, const PodInfo& pod,
                    std::span<const NodeInfo* const> nodes, int64_t* out) const override;

 private:
  int64_t ScoreWith(const BalancedPreScoreState* s, std::span<const int64_t> pod_requests,
                    const NodeInfo& node) const;
  std::vector<ScoredResource> resources_;
  bool pod_level_resources_ = true;  // the PodLevelResources feature gate
  // Compiled DeviceClass selectors (DRAExtendedResource on), else null.
  std::unique_ptr<cel::dra::SelectorCache> dra_selectors_;
  // What the claims hold, kept across cycles (with dra_selectors_).
  std::unique_ptr<dra::AllocatedStateTracker> dra_held_;
  std::unique_ptr<dra::ClassDeviceIndexCache> dra_indexes_;
  Handle* handle_ = nullptr;
};

// DeviceClass selectors kept compiled (as kube-scheduler's scorer's CEL cache).
inline constexpr size_t kDraSelectorCacheSize = 10;

Result<std::unique_ptr<Plugin>> BalancedAllocation::New(const PluginArgs* args,
                                                        bool pod_level_resources,
                                                        bool dra_extended_resource,
                                                        Handle& handle) {
  static const config::NodeResourcesBalancedAllocationArgs kDefaults;
  auto ba_args = ArgsAs(args, &kDefaults, "NodeResourcesBalancedAllocationArgs");
  if (!ba_args.ok()) return ba_args.error();
  auto plugin = std::make_unique<BalancedAllocation>();
  plugin->pod_level_resources_ = pod_level_resources;
  if (dra_extended_resource) {
    plugin->dra_selectors_ = std::make_unique<cel::dra::SelectorCache>(kDraSelectorCacheSize);
    plugin->dra_held_ = std::make_unique<dra::AllocatedStateTracker>();
    plugin->dra_indexes_ = std::make_unique<dra::ClassDeviceIndexCache>();
  }
  plugin->handle_ = &handle;
  plugin->resources_ = noderesources::ResolveResources((*ba_args)->resources);
  return std::unique_ptr<Plugin>(std::move(plugin));
}

Status BalancedAllocation::PreScore(CycleState& state, const PodInfo& pod,
                                    std::span<const NodeInfo* const>) {
  auto s = std::make_shared<BalancedPreScoreState>();
  s->pod_requests.resize(resources_.size());
  PodRequests scratch;
  noderesources::PodRequestsFor(noderesources::RequestsOf(pod, pod_level_resources_, &scratch),
                                resources_, RequestSource::kActual, s->pod_requests);
  if (RequestsNothing(s->pod_requests)) return Status::Skip();
  if (dra_selectors_)
    s->dra = noderesources::DraBackedResources::Gather(*handle_, resources_, dra_selectors_.get(),
                                                       dra_held_.get(), dra_indexes_.get());
  state.Write(kPreScoreKey, std::move(s));
  return Status::Success();
}

Status BalancedAllocation::Score(const CycleState& state, const PodInfo& pod, const NodeInfo& node,
                                 int64_t* score) const {
  *score = 0;
  if (resources_.empty()) return Status::Error("resources not found");
  const size_t n = resources_.size();
  Scratch fallback(n);
  std::span<const int64_t> pod_requests;
  const BalancedPreScoreState* s = state.Read(kPreScoreKey);
  if (s != nullptr) {
    pod_requests = s->pod_requests;
  } else {
    PodRequests scratch;
    noderesources::PodRequestsFor(noderesources::RequestsOf(pod, pod_level_resources_, &scratch),
                                  resources_, RequestSource::kActual, fallback.span());
    pod_requests = fallback.span();
    if (RequestsNothing(pod_requests)) return Status::Success();
  }
  *score = ScoreWith(s, pod_requests, node);
  return Status::Success();
}

Status BalancedAllocation::ScoreNodes(const CycleState& state, const PodInfo& pod,
                                      std::span<const NodeInfo* const> nodes, int64_t* out) const {
  const BalancedPreScoreState* s = state.Read(kPreScoreKey);
  if (s == nullptr || resources_.empty()) {
    for (size_t i = 0; i < nodes.size(); ++i) {
      Status st = Score(state, pod, *nodes[i], &out[i]);
      if (!st.IsSuccess()) return st;
    }
    return Status::Success();
  }
  if (!s->dra && noderesources::IsCpuThenMemory(resources_)) {
    const int64_t pod_cpu = s->pod_requests[0], pod_mem = s->pod_requests[1];
    for (size_t i = 0; i < nodes.size(); ++i) {
      const Resource& alloc = nodes[i]->allocatable();
      const Resource& used = nodes[i]->requested();
      out[i] = noderesources::BalancedCpuMemory(alloc.milli_cpu, used.milli_cpu + pod_cpu,
                                                alloc.memory, used.memory + pod_mem);
    }
    return Status::Success();
  }
  for (size_t i = 0; i < nodes.size(); ++i) out[i] = ScoreWith(s, s->pod_requests, *nodes[i]);
  return Status::Success();
}

int64_t BalancedAllocation::ScoreWith(const BalancedPreScoreState* s,
                                      std::span<const int64_t> pod_requests,
                                      const NodeInfo& node) const {
  const size_t n = resources_.size();
  Scratch allocatable(n);
  Scratch requested(n);
  noderesources::NodeUsage(node, resources_, pod_requests, RequestSource::kActual,
                           allocatable.span(), requested.span());
  if (s != nullptr && s->dra)
    s->dra->Apply(node, resources_, pod_requests, allocatable.span(), requested.span());
  return noderesources::BalancedAllocationScore(requested.span(), allocatable.span());
}

}  // namespace

PluginRegistration NodeResourcesBalancedAllocationRegistration(const config::FeatureGates& gates) {
  const bool pod_level = gates.Enabled(config::features::kPodLevelResources);
  const bool dra_extended = gates.Enabled("DRAExtendedResource");
  return MakeRegistration(
      kNodeResourcesBalancedAllocationName,
      [pod_level, dra_extended](const PluginArgs* args, Handle& handle) {
        return BalancedAllocation::New(args, pod_level, dra_extended, handle);
      },
      config::InTreeArgsDecoder(std::string(kNodeResourcesBalancedAllocationName)));
}

}  // namespace berth
