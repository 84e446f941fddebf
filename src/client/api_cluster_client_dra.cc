// ApiClusterClient's resource.k8s.io side: DraListers over the DRA informers, the claim status
// writer, and the informers' events for a DraEventHandler.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "api/device_taint_rule.h"
#include "client/api_cluster_client.h"
#include "client/claim_answer.h"

namespace berth::client {
namespace {

DraEventObject ToDraObject(const Object& o) {
  if (auto p = std::get_if<Ptr<ResourceClaim>>(&o)) return *p;
  if (auto p = std::get_if<Ptr<ResourceSlice>>(&o)) return *p;
  if (auto p = std::get_if<Ptr<DeviceClass>>(&o)) return *p;
  return std::monostate{};
}

Ptr<ResourceClaim> ClaimOf(const Object& o) {
  auto p = std::get_if<Ptr<ResourceClaim>>(&o);
  return p ? *p : nullptr;
}

template <class T>
std::vector<Ptr<T>> ListOf(const std::vector<std::unique_ptr<Informer>>& informers, int k) {
  if (informers.empty()) return {};
  return informers[k]->ListTyped<T>();
}

template <class T>
Ptr<T> GetOf(const std::vector<std::unique_ptr<Informer>>& informers, int k,
             const std::string& key) {
  if (informers.empty()) return nullptr;
  auto o = informers[k]->Get(key);
  if (!o) return nullptr;
  auto p = std::get_if<Ptr<T>>(&*o);
  return p ? *p : nullptr;
}

}  // namespace

InformerHandlers ApiClusterClient::DraInformerHandlers(DraEventResource resource) {
  InformerHandlers h;
  auto* dra = dynamic_cast<DraEventHandler*>(handler_);
  // The claim feed is kept before the handler hears of the change, so that a plugin reading
  // the feed from the scheduling cycle the event starts sees it.
  ClaimChangeLog* log = resource == DraEventResource::kResourceClaim ? &claim_log_ : nullptr;
  if (!dra && !log) return h;
  h.on_add = [dra, log, resource](const Object& o) {
    if (log) log->Put(ClaimOf(o));
    if (dra) dra->OnDraEvent({resource, kAdd}, {}, ToDraObject(o));
  };
  h.on_update = [dra, log, resource](const Object& a, const Object& b) {
    if (log) log->Put(ClaimOf(b));
    if (dra) dra->OnDraEvent({resource, kUpdateOther}, ToDraObject(a), ToDraObject(b));
  };
  h.on_delete = [dra, log, resource](const Object& o) {
    if (log)
      if (Ptr<ResourceClaim> c = ClaimOf(o)) log->Erase(c->metadata.namespace_, c->metadata.name);
    if (dra) dra->OnDraEvent({resource, kDelete}, ToDraObject(o), {});
  };
  return h;
}

namespace {

// Reports tainted slices' changes as the slice events they are for the scheduler.
void SendSliceChanges(DraEventHandler* dra, const std::vector<TaintedSlices::Change>& changes) {
  if (!dra) return;
  for (const TaintedSlices::Change& c : changes) {
    DraEventObject before, after;
    if (c.old_slice) before = c.old_slice;
    if (c.new_slice) after = c.new_slice;
    const uint32_t action = !c.old_slice ? kAdd : !c.new_slice ? kDelete : kUpdateOther;
    dra->OnDraEvent({DraEventResource::kResourceSlice, action}, before, after);
  }
}

Ptr<ResourceSlice> SliceOf(const Object& o) {
  auto p = std::get_if<Ptr<ResourceSlice>>(&o);
  return p ? *p : nullptr;
}

// The rule in an informer's object (kept as its document), or null when it does not decode:
// the API server validated it, so that is a server newer than this client.
std::optional<DeviceTaintRule> RuleOf(const Object& o) {
  auto u = std::get_if<std::shared_ptr<const UnknownObject>>(&o);
  if (!u || !(*u)->raw) return std::nullopt;
  auto rule = DecodeDeviceTaintRule(*(*u)->raw, "DeviceTaintRule " + (*u)->name);
  if (!rule.ok()) return std::nullopt;
  return std::move(rule).value();
}

}  // namespace

InformerHandlers ApiClusterClient::SliceInformerHandlers() {
  InformerHandlers h;
  auto* dra = dynamic_cast<DraEventHandler*>(handler_);
  auto put = [this, dra](const Object& o) {
    Ptr<ResourceSlice> slice = SliceOf(o);
    if (!slice) return;
    TaintedSlices::Change change = slices_.PutSlice(slice);
    ++slice_generation_;
    SendSliceChanges(dra, {change});
  };
  h.on_add = put;
  h.on_update = [put](const Object&, const Object& b) { put(b); };
  h.on_delete = [this, dra](const Object& o) {
    Ptr<ResourceSlice> slice = SliceOf(o);
    if (!slice) return;
    TaintedSlices::Change change = slices_.RemoveSlice(slice->metadata.name);
    ++slice_generation_;
    if (change.old_slice) SendSliceChanges(dra, {change});
  };
  return h;
}

InformerHandlers ApiClusterClient::TaintRuleInformerHandlers() {
  InformerHandlers h;
  auto* dra = dynamic_cast<DraEventHandler*>(handler_);
  auto put = [this, dra](const Object& o) {
    std::optional<DeviceTaintRule> rule = RuleOf(o);
    if (!rule) return;
    std::vector<TaintedSlices::Change> changes = slices_.PutRule(std::move(*rule));
    if (changes.empty()) return;
    ++slice_generation_;
    SendSliceChanges(dra, changes);
  };
  h.on_add = put;
  h.on_update = [put](const Object&, const Object& b) { put(b); };
  h.on_delete = [this, dra](const Object& o) {
    auto u = std::get_if<std::shared_ptr<const UnknownObject>>(&o);
    if (!u) return;
    std::vector<TaintedSlices::Change> changes = slices_.RemoveRule((*u)->name);
    if (changes.empty()) return;
    ++slice_generation_;
    SendSliceChanges(dra, changes);
  };
  return h;
}

ClaimChanges ApiClusterClient::ClaimChangesSince(uint64_t cursor) const {
  return claim_log_.ClaimChangesSince(cursor);
}

std::vector<Ptr<ResourceSlice>> ApiClusterClient::ListResourceSlices() const {
  return slices_.List();
}
Ptr<ResourceClaim> ApiClusterClient::GetResourceClaim(std::string_view ns,
                                                      std::string_view name) const {
  return GetOf<ResourceClaim>(informers_, kResourceClaims,
                              std::string(ns) + "/" + std::string(name));
}
std::vector<Ptr<ResourceClaim>> ApiClusterClient::ListResourceClaims() const {
  return ListOf<ResourceClaim>(informers_, kResourceClaims);
}
Ptr<DeviceClass> ApiClusterClient::GetDeviceClass(std::string_view name) const {
  return GetOf<DeviceClass>(informers_, kDeviceClasses, std::string(name));
}
std::vector<Ptr<DeviceClass>> ApiClusterClient::ListDeviceClasses() const {
  return ListOf<DeviceClass>(informers_, kDeviceClasses);
}

Result<Ptr<ResourceClaim>> ApiClusterClient::UpdateResourceClaimStatus(const ResourceClaim& claim) {
  nlohmann::json body = EncodeObject(std::make_shared<const ResourceClaim>(claim));
  body["apiVersion"] = "resource.k8s.io/v1";
  body["kind"] = "ResourceClaim";
  // A status without an allocation or consumers is written as such (the typed fields are the
  // truth; the document may still hold the old ones).
  nlohmann::json& status = body["status"];
  if (!status.is_object()) status = nlohmann::json::object();  // a claim without a status yet
  if (!claim.status.allocation) status.erase("allocation");
  if (claim.status.reserved_for.empty()) status.erase("reservedFor");
  const std::string path =
      fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims/{}/status",
                  claim.metadata.namespace_, claim.metadata.name);
  return ClaimFromAnswer(rest_->Put(path, body), path);
}

}  // namespace berth::client
