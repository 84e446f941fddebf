#include "plugins/dynamicresources/dynamicresources.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <utility>

#include "berth/api/selectors.h"
#include "config/plugin_args_codec.h"
#include "plugins/dynamicresources/claims.h"

namespace berth {
namespace dynamicresources {
namespace {

// Compiled CEL selectors kept across cycles (kube-scheduler keeps 10; classes and claims of a
// cluster use a few more distinct expressions than that in practice).
constexpr size_t kCelCacheSize = 64;

// kube-scheduler's statusUnschedulable: nothing this cycle can change helps.
Status Unresolvable(std::string reason) { return Status::Unresolvable(std::move(reason)); }

}  // namespace

std::shared_ptr<StateData> CycleData::Clone() const {
  // Shared by every clone of the cycle's state, as kube-scheduler's stateData: Filter records
  // into it under its lock.
  return std::const_pointer_cast<CycleData>(shared_from_this());
}

DynamicResources::DynamicResources(Handle& handle, const config::DynamicResourcesArgs& args,
                                   dra::Features features)
    : handle_(&handle),
      args_(args),
      features_(features),
      cel_cache_(kCelCacheSize),
      pool_cache_(features) {}

const DraListers* DynamicResources::listers() const { return DraListersOf(handle_->listers()); }

std::vector<Ptr<ResourceClaim>> DynamicResources::ClaimsInUse() const {
  const DraListers* dra = listers();
  if (!dra) return {};
  std::vector<Ptr<ResourceClaim>> in_use = assumed_.Merge(dra->ListResourceClaims());
  std::erase_if(in_use, [](const Ptr<ResourceClaim>& c) { return !c->status.allocation; });
  return in_use;
}

std::shared_ptr<const dra::Allocator> DynamicResources::MakeAllocator() const {
  const DraListers* dra = listers();
  auto classes = [dra](std::string_view name) { return dra->GetDeviceClass(name); };
  auto in_use = in_use_.Sync(*dra, DraClaimFeedOf(handle_->listers()));
  // The slices are listed (5,000 of them in a cluster of as many nodes) only when they changed.
  std::shared_ptr<const dra::SliceIndex> slices;
  if (const DraSliceGeneration* gen = DraSliceGenerationOf(handle_->listers())) {
    slices = pool_cache_.ForGeneration(gen->ResourceSliceGeneration(),
                                       [dra] { return dra->ListResourceSlices(); });
  } else {
    slices = pool_cache_.For(dra->ListResourceSlices());
  }
  return std::make_shared<const dra::Allocator>(features_, std::move(in_use), classes,
                                                std::move(slices), &cel_cache_);
}

Result<std::vector<Ptr<ResourceClaim>>> DynamicResources::PodClaims(const Pod& pod) const {
  std::vector<Ptr<ResourceClaim>> claims;
  const std::vector<PodResourceClaim> entries = PodResourceClaimsOf(pod);
  if (entries.empty()) return claims;
  const DraListers* dra = listers();
  for (const PodResourceClaim& entry : entries) {
    Result<ClaimName> name = ClaimNameOf(pod, entry);
    if (!name.ok()) return name.error();
    if (!name->name) continue;
    Ptr<ResourceClaim> claim =
        dra ? dra->GetResourceClaim(pod.metadata.namespace_, *name->name) : nullptr;
    if (!claim)
      return Error{fmt::format("resourceclaim.resource.k8s.io \"{}\" not found", *name->name)};
    claim = assumed_.Resolve(claim);
    if (claim->metadata.deletion_timestamp)
      return Error{fmt::format("resourceclaim \"{}\" is being deleted", claim->metadata.name)};
    if (name->must_check_owner)
      if (VoidResult owned = IsForPod(pod, *claim); !owned.ok()) return owned.error();
    claims.push_back(std::move(claim));
  }
  return claims;
}

Status DynamicResources::PreEnqueue(const Pod& pod) const {
  if (Result<std::vector<Ptr<ResourceClaim>>> claims = PodClaims(pod); !claims.ok())
    return Unresolvable(claims.error().message);
  return Status::Success();
}

Status DynamicResources::PreFilter(CycleState& state, const PodInfo& pod_info,
                                   std::span<const NodeInfo* const> /*nodes*/,
                                   PreFilterResult* /*result*/) {
  const Pod& pod = *pod_info.pod;
  auto data = std::make_shared<CycleData>();
  state.Write(kStateKey, data);
  Result<std::vector<Ptr<ResourceClaim>>> claims = PodClaims(pod);
  if (!claims.ok()) return Unresolvable(claims.error().message);
  PreFilterExtended(pod, *data, *claims);
  if (claims->empty()) return Status::Skip();
  const DraListers* dra = listers();

  data->available_on.resize(claims->size());
  for (size_t i = 0; i < claims->size(); ++i) {
    const ResourceClaim& claim = *(*claims)[i];
    if (claim.status.allocation) {
      if (!CanBeReserved(claim) && !IsReservedForPod(pod, claim))
        return Unresolvable("resourceclaim in use");
      data->available_on[i] = claim.status.allocation->node_selector;
      continue;
    }
    data->to_allocate.push_back(i);
    data->claims_to_allocate.push_back((*claims)[i]);
    if (assumed_.InFlight(claim.metadata.uid)) {
      return Unresolvable(
          fmt::format("resource claim {} is in the process of being allocated", KObj(claim)));
    }
    // A missing class makes the pod wait for a DeviceClass event.
    auto check_class = [&](const std::string& class_name, const std::string& request) -> Status {
      if (class_name.empty())
        return Status::Error(fmt::format("request {}: unsupported request type", request));
      if (!dra->GetDeviceClass(class_name))
        return Unresolvable(
            fmt::format("request {}: device class {} does not exist", request, class_name));
      return Status::Success();
    };
    for (const DeviceRequest& request : claim.spec.devices.requests) {
      if (request.exactly) {
        if (Status s = check_class(request.exactly->device_class_name, request.name);
            !s.IsSuccess())
          return s;
        continue;
      }
      if (request.first_available.empty())
        return Status::Error(fmt::format("request {}: unsupported request type", request.name));
      if (!features_.prioritized_list) {
        return Unresolvable(fmt::format(
            "resource claim {}, request {}: has subrequests, but the DRAPrioritizedList feature "
            "is disabled",
            KObj(claim), request.name));
      }
      for (const DeviceSubRequest& sub : request.first_available)
        if (Status s = check_class(sub.request.device_class_name, request.name + "/" + sub.name);
            !s.IsSuccess())
          return s;
    }
  }

  if (!data->to_allocate.empty()) {
    // The devices every claim in use holds: the listers' claims, with this scheduler's
    // assumptions over them (allocations in flight and writes not yet listed), as the claim
    // feed changed them since the previous cycle.
    data->allocator = MakeAllocator();
  }
  data->claims = std::move(*claims);
  return Status::Success();
}

Status DynamicResources::Filter(const CycleState& state, const PodInfo& pod,
                                const NodeInfo& node_info) const {
  const CycleData* data = state.Read(kStateKey);
  if (!data || data->claims.empty()) return Status::Success();
  const Node& node = *node_info.node();

  std::vector<size_t> unavailable;
  for (size_t i = 0; i < data->claims.size(); ++i) {
    const auto& selector = data->available_on[i];
    if (selector && !NodeSelectorMatches(*selector, node)) unavailable.push_back(i);
  }

  NodeExtendedClaim extended;
  if (data->extended) {
    if (Status s = FilterExtended(*data, *pod.pod, node_info, &extended); !s.IsSuccess()) return s;
    if (!extended.claim && !data->extended->has_user_claims) return Status::Success();
  }

  std::vector<AllocationResult> allocations;
  if (data->allocator) {
    const TimePoint start = handle_->clock().Now();
    // The extended resource claim is allocated in its node's variant.
    std::vector<Ptr<ResourceClaim>> node_claims;
    if (extended.claim) {
      node_claims = data->claims_to_allocate;
      std::replace(node_claims.begin(), node_claims.end(), data->claims[data->extended->index],
                   extended.claim);
    }
    auto r = data->allocator->Allocate(
        node, extended.claim ? node_claims : data->claims_to_allocate, node_info.list_index());
    if (!r.ok()) return Status::Error(r.error().message);
    if (args_.filter_timeout_ms > 0 &&
        handle_->clock().Now() - start > std::chrono::milliseconds(args_.filter_timeout_ms))
      return Unresolvable("timed out trying to allocate devices");
    if (!r->has_value() || (*r)->size() != data->claims_to_allocate.size()) return cannot_allocate_;
    allocations = std::move(**r);
  }

  std::lock_guard lock(data->mu);
  if (!unavailable.empty()) {
    data->unavailable_claims.insert(unavailable.begin(), unavailable.end());
    return Unresolvable("resourceclaim not available on the node");
  }
  if (data->allocator) data->node_allocations[node.metadata.name] = std::move(allocations);
  if (data->extended) RecordExtended(*data, node.metadata.name, std::move(extended));
  return Status::Success();
}

Status DynamicResources::PostFilter(CycleState& state, const PodInfo& pod_info,
                                    const NodeStatusMap& /*filtered*/,
                                    PostFilterResult* /*result*/) {
  const Pod& pod = *pod_info.pod;
  const CycleData* data = state.Read(kStateKey);
  if (PodResourceClaimsOf(pod).empty() && !(data && data->extended))
    return Status(Code::kUnschedulable, std::vector<std::string>{});
  if (!data) return Status::Error("no DynamicResources state for the pod");
  if (data->claims.empty()) return Status::Unschedulable("no new claims to deallocate");
  std::set<size_t> unavailable;
  {
    std::lock_guard lock(data->mu);
    unavailable = data->unavailable_claims;
  }
  // kube-scheduler picks one at random; the first in spec order keeps simulations reproducible.
  for (size_t index : unavailable) {
    if (data->extended && index == data->extended->index) continue;  // see PostFilterExtended
    const ResourceClaim& claim = *data->claims[index];
    const auto& reserved = claim.status.reserved_for;
    if (!reserved.empty() && !(reserved.size() == 1 && reserved[0].uid == pod.metadata.uid))
      continue;
    DraWriter* writer = DraWriterOf(handle_->writer());
    if (!writer) return Status::Error("the cluster client cannot write ResourceClaims");
    ResourceClaim copy = claim;
    copy.status.reserved_for.clear();
    copy.status.allocation.reset();
    auto stored = writer->UpdateResourceClaimStatus(copy);
    if (!stored.ok()) return Status::Error(stored.error().message);
    assumed_.Written(*stored);
    return Status::Unschedulable("deallocation of ResourceClaim completed");
  }
  if (std::optional<Status> s = PostFilterExtended(*data)) return *s;
  return Status::Unschedulable("still not schedulable");
}

}  // namespace dynamicresources

PluginRegistration DynamicResourcesRegistration(const config::FeatureGates& gates) {
  static const config::DynamicResourcesArgs kDefaults;
  dra::Features features;
  features.admin_access = gates.Enabled("DRAAdminAccess");
  features.prioritized_list = gates.Enabled("DRAPrioritizedList");
  features.partitionable_devices = gates.Enabled("DRAPartitionableDevices");
  features.device_taints = gates.Enabled("DRADeviceTaints");
  features.binding_conditions = gates.Enabled("DRADeviceBindingConditions");
  features.consumable_capacity = gates.Enabled("DRAConsumableCapacity");
  const bool extended_resources = gates.Enabled("DRAExtendedResource");
  auto factory = [features, extended_resources](const PluginArgs* args,
                                                Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "DynamicResourcesArgs");
    if (!typed.ok()) return typed.error();
    auto plugin = std::make_unique<dynamicresources::DynamicResources>(handle, **typed, features);
    plugin->set_extended_resources(extended_resources);
    return std::unique_ptr<Plugin>(std::move(plugin));
  };
  return MakeRegistration(dynamicresources::kName, factory,
                          config::InTreeArgsDecoder(std::string(dynamicresources::kName)));
}

}  // namespace berth
