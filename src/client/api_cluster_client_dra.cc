// ApiClusterClient's resource.k8s.io side: DraListers over the DRA informers, the claim status
// writer, and the informers' events for a DraEventHandler.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "api/codec.h"
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
  std::atomic<uint64_t>* slices =
      resource == DraEventResource::kResourceSlice ? &slice_generation_ : nullptr;
  if (!dra && !log && !slices) return h;
  h.on_add = [dra, log, slices, resource](const Object& o) {
    if (log) log->Put(ClaimOf(o));
    if (slices) ++*slices;
    if (dra) dra->OnDraEvent({resource, kAdd}, {}, ToDraObject(o));
  };
  h.on_update = [dra, log, slices, resource](const Object& a, const Object& b) {
    if (log) log->Put(ClaimOf(b));
    if (slices) ++*slices;
    if (dra) dra->OnDraEvent({resource, kUpdateOther}, ToDraObject(a), ToDraObject(b));
  };
  h.on_delete = [dra, log, slices, resource](const Object& o) {
    if (log)
      if (Ptr<ResourceClaim> c = ClaimOf(o)) log->Erase(c->metadata.namespace_, c->metadata.name);
    if (slices) ++*slices;
    if (dra) dra->OnDraEvent({resource, kDelete}, ToDraObject(o), {});
  };
  return h;
}

ClaimChanges ApiClusterClient::ClaimChangesSince(uint64_t cursor) const {
  return claim_log_.ClaimChangesSince(cursor);
}

std::vector<Ptr<ResourceSlice>> ApiClusterClient::ListResourceSlices() const {
  return ListOf<ResourceSlice>(informers_, kResourceSlices);
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
