// DynamicResources' Reserve, Unreserve and PreBind: the allocation Filter found for the chosen
// node becomes assumed, then written to the claims with the pod in reservedFor.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "framework/dra_extended_resources.h"
#include "plugins/dynamicresources/claims.h"
#include "plugins/dynamicresources/dynamicresources.h"

namespace berth::dynamicresources {
namespace {

// The devices of `claim` whose driver must report them ready (bindingConditions) before the pod
// binds: whether they are (true), not yet (false), or failed (an error), from the conditions in
// status.devices[] (kept in the claim's document).
Result<bool> BindingConditionsMet(const ResourceClaim& claim) {
  if (!claim.status.allocation) return true;
  auto condition_true = [&](const DeviceRequestAllocationResult& r, const std::string& type) {
    if (!claim.raw) return false;
    const auto status = claim.raw->find("status");
    if (status == claim.raw->end() || !status->contains("devices")) return false;
    for (const auto& d : (*status)["devices"]) {
      if (d.value("driver", "") != r.driver || d.value("pool", "") != r.pool ||
          d.value("device", "") != r.device || !d.contains("conditions"))
        continue;
      for (const auto& c : d["conditions"])
        if (c.value("type", "") == type && c.value("status", "") == "True") return true;
    }
    return false;
  };
  bool ready = true;
  for (const DeviceRequestAllocationResult& r : claim.status.allocation->results) {
    for (const std::string& type : r.binding_failure_conditions)
      if (condition_true(r, type))
        return Error{fmt::format("claim {} binding failed: device {}/{}/{} reports {}", KObj(claim),
                                 r.driver, r.pool, r.device, type)};
    for (const std::string& type : r.binding_conditions)
      if (!condition_true(r, type)) ready = false;
  }
  return ready;
}

bool HasBindingConditions(const AllocationResult& allocation) {
  return std::any_of(allocation.results.begin(), allocation.results.end(),
                     [](const auto& r) { return !r.binding_conditions.empty(); });
}

}  // namespace

Status DynamicResources::Reserve(CycleState& state, const PodInfo& /*pod*/,
                                 const std::string& node) {
  CycleData* data = state.ReadMutable(kStateKey);
  if (!data || data->claims.empty()) return Status::Success();
  data->allocations.assign(data->claims.size(), std::nullopt);
  if (data->to_allocate.empty()) return Status::Success();
  std::vector<AllocationResult> allocations;
  {
    std::lock_guard lock(data->mu);
    auto it = data->node_allocations.find(node);
    if (it == data->node_allocations.end()) {
      // Only extended resources, all from the node's device plugins: nothing to allocate.
      if (data->extended && !data->extended->has_user_claims) return Status::Success();
      return Status::Error("claim allocation not found for node");
    }
    allocations = std::move(it->second);
    data->node_allocations.clear();
  }
  // Filter is over: the allocator's hold on the shared allocated state would only make the
  // next cycle's update copy it.
  data->allocator.reset();
  if (allocations.size() != data->to_allocate.size()) {
    return Status::Error(
        fmt::format("internal error, have {} allocations, {} claims to allocate, want {} claims",
                    allocations.size(), data->claims_to_allocate.size(), data->to_allocate.size()));
  }
  for (size_t j = 0; j < data->to_allocate.size(); ++j) {
    const size_t index = data->to_allocate[j];
    data->allocations[index] = allocations[j];
    auto claim = std::make_shared<ResourceClaim>(*data->claims[index]);
    claim->status.allocation = allocations[j];
    assumed_.AssumeInFlight(std::move(claim));
  }
  return Status::Success();
}

void DynamicResources::Unreserve(CycleState& state, const PodInfo& pod_info,
                                 const std::string& /*node*/) {
  CycleData* data = state.ReadMutable(kStateKey);
  if (!data || data->claims.empty()) return;
  if (data->extended) UnreserveExtended(*data);
  const Pod& pod = *pod_info.pod;
  DraWriter* writer = DraWriterOf(handle_->writer());
  for (const Ptr<ResourceClaim>& claim : data->claims) {
    if (assumed_.InFlight(claim->metadata.uid)) assumed_.Forget(claim->metadata.uid);
    if (!claim->status.allocation || !IsReservedForPod(pod, *claim) || !writer) continue;
    // PreBind reserved it: take the pod out again (the claim stays allocated; PostFilter may
    // deallocate it later).
    ResourceClaim copy = *claim;
    std::erase_if(copy.status.reserved_for,
                  [&](const auto& r) { return r.uid == pod.metadata.uid; });
    auto stored = writer->UpdateResourceClaimStatus(copy);
    if (stored.ok()) {
      assumed_.Written(*stored);
    } else {
      // The pod's next attempt finds the claim reserved for it and keeps it.
      handle_->LogError(kName,
                        fmt::format("unreserve {}: {}", KObj(*claim), stored.error().message));
    }
  }
}

Status DynamicResources::PreBindPreFlightCheck(CycleState& state, const PodInfo& pod_info,
                                               const std::string& /*node*/) {
  const CycleData* data = state.Read(kStateKey);
  if (!data) return Status::Skip();
  for (const Ptr<ResourceClaim>& claim : data->claims)
    if (!IsReservedForPod(*pod_info.pod, *claim)) return Status::Success();
  return Status::Skip();
}

Result<Ptr<ResourceClaim>> DynamicResources::MarkDeleteProtected(const ResourceClaim& claim) {
  dra_extended::DynamicResourcesWriter* writer =
      dra_extended::DynamicResourcesWriterOf(handle_->writer());
  // A writer of one's own without it writes the allocation unprotected, as before.
  if (writer == nullptr) return std::make_shared<const ResourceClaim>(claim);
  return writer->AddResourceClaimFinalizer(claim, dra_extended::kDeleteProtectionFinalizer);
}

Result<Ptr<ResourceClaim>> DynamicResources::BindClaim(
    const Pod& pod, Ptr<ResourceClaim> claim, const std::optional<AllocationResult>& allocation,
    DraWriter& writer) {
  const DraListers* dra = listers();
  // A conflict (another pod reserved a shared claim meanwhile) is retried on the latest claim.
  Result<Ptr<ResourceClaim>> stored = Error{"not written"};
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (attempt > 0) {
      Ptr<ResourceClaim> latest = dra ? assumed_.Resolve(dra->GetResourceClaim(
                                            claim->metadata.namespace_, claim->metadata.name))
                                      : nullptr;
      if (!latest || latest->metadata.uid != claim->metadata.uid) {
        stored = Error{fmt::format("claim {} got deleted in the meantime", KObj(*claim))};
        break;
      }
      if (allocation && latest->status.allocation) {
        stored =
            Error{fmt::format("claim {} got allocated elsewhere in the meantime", KObj(*claim))};
        break;
      }
      if (!allocation && !latest->status.allocation) {
        stored = Error{fmt::format("claim {} got deallocated in the meantime", KObj(*claim))};
        break;
      }
      claim = latest;
    }
    ResourceClaim copy = *claim;
    if (allocation) {
      // The finalizer goes on with a normal update before the allocation is written: from
      // then on a deletion of the claim waits for its deallocation (the resource claim
      // controller's), so its devices are never freed while a pod may use them.
      Result<Ptr<ResourceClaim>> marked = MarkDeleteProtected(*claim);
      if (!marked.ok()) {
        stored = marked.error();
        if (stored.error().code == ErrorCode::kConflict) continue;
        break;
      }
      if ((*marked)->status.allocation) {
        stored =
            Error{fmt::format("claim {} got allocated elsewhere in the meantime", KObj(*claim))};
        break;
      }
      copy = **marked;
      copy.status.allocation = allocation;
    }
    if (!IsReservedForPod(pod, copy)) {
      if (!CanBeReserved(copy)) {
        stored = Error{fmt::format("claim {} reserved for too many pods", KObj(copy))};
        break;
      }
      copy.status.reserved_for.push_back(ConsumerOf(pod));
    }
    stored = writer.UpdateResourceClaimStatus(copy);
    if (stored.ok() || stored.error().code != ErrorCode::kConflict) break;
  }
  return stored;
}

Status DynamicResources::PreBind(CycleState& state, const PodInfo& pod_info,
                                 const std::string& node) {
  CycleData* data = state.ReadMutable(kStateKey);
  if (!data || data->claims.empty()) return Status::Success();
  const Pod& pod = *pod_info.pod;
  DraWriter* writer = DraWriterOf(handle_->writer());
  if (!writer) return Status::Error("the cluster client cannot write ResourceClaims");
  const DraListers* dra = listers();
  bool wait_for_binding = false;
  for (size_t index = 0; index < data->claims.size(); ++index) {
    if (data->extended && index == data->extended->index) {
      if (Status s = PreBindExtended(*data, pod, node); !s.IsSuccess()) return s;
      continue;
    }
    Ptr<ResourceClaim> claim = data->claims[index];
    if (IsReservedForPod(pod, *claim)) continue;
    const std::optional<AllocationResult>& allocation =
        index < data->allocations.size() ? data->allocations[index] : std::nullopt;
    Result<Ptr<ResourceClaim>> stored = BindClaim(pod, claim, allocation, *writer);
    if (!stored.ok()) {
      if (allocation) assumed_.Forget(claim->metadata.uid);
      return Status::Error(stored.error().message);
    }
    assumed_.Written(*stored);
    data->claims[index] = *stored;
    if ((*stored)->status.allocation && HasBindingConditions(*(*stored)->status.allocation))
      wait_for_binding = true;
  }
  if (!wait_for_binding || !features_.binding_conditions) return Status::Success();
  // Devices with bindingConditions: wait until their drivers report them ready, at most
  // bindingTimeout (the binding cycle's thread waits, as kube-scheduler's PreBind does).
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(args_.binding_timeout_ms);
  for (;;) {
    bool ready = true;
    for (Ptr<ResourceClaim>& claim : data->claims) {
      if (dra) {
        if (auto latest = dra->GetResourceClaim(claim->metadata.namespace_, claim->metadata.name))
          claim = assumed_.Resolve(latest);
      }
      Result<bool> met = BindingConditionsMet(*claim);
      if (!met.ok()) return Status::Error(met.error().message);
      ready = ready && *met;
    }
    if (ready) return Status::Success();
    if (std::chrono::steady_clock::now() >= deadline)
      return Status::Error(
          "waiting for resource driver to report the devices ready: binding "
          "timeout");
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
}

}  // namespace berth::dynamicresources
