// ApiClusterClient as a DynamicResourcesWriter: DynamicResources' PreBind marks the claims it
// allocates with the delete-protection finalizer, creates the claim for a pod's extended
// resources backed by DRA and records it in the pod's status; a claim of a failed attempt is
// deleted.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/codec.h"
#include "client/api_cluster_client.h"
#include "client/claim_answer.h"

namespace berth::client {
namespace {

std::string ClaimsPath(std::string_view ns) {
  return fmt::format("/apis/resource.k8s.io/v1/namespaces/{}/resourceclaims", ns);
}

}  // namespace

Result<Ptr<ResourceClaim>> ApiClusterClient::CreateResourceClaim(
    const ResourceClaim& claim, std::string_view generate_name,
    const std::vector<std::string>& finalizers) {
  ResourceClaim copy = claim;
  copy.status = {};
  copy.raw = nullptr;
  nlohmann::json body = EncodeObject(std::make_shared<const ResourceClaim>(std::move(copy)));
  body["apiVersion"] = "resource.k8s.io/v1";
  body["kind"] = "ResourceClaim";
  body.erase("status");
  nlohmann::json& meta = body["metadata"];
  for (const char* field : {"name", "uid", "resourceVersion", "creationTimestamp"})
    meta.erase(field);
  meta["generateName"] = std::string(generate_name);
  if (!finalizers.empty()) meta["finalizers"] = finalizers;
  const std::string path = ClaimsPath(claim.metadata.namespace_);
  return ClaimFromAnswer(rest_->Post(path, body), path);
}

Result<Ptr<ResourceClaim>> ApiClusterClient::AddResourceClaimFinalizer(const ResourceClaim& claim,
                                                                       std::string_view finalizer) {
  // A strategic merge patch adds to metadata.finalizers without rewriting the others, which the
  // informers' copies may not carry; the uid guards against a claim recreated under the name.
  nlohmann::json patch = {
      {"metadata", {{"uid", claim.metadata.uid}, {"finalizers", {std::string(finalizer)}}}}};
  if (claim.metadata.uid.empty()) patch["metadata"].erase("uid");
  const std::string path = ClaimsPath(claim.metadata.namespace_) + "/" + claim.metadata.name;
  return ClaimFromAnswer(rest_->Patch(path, patch, "application/strategic-merge-patch+json"), path);
}

VoidResult ApiClusterClient::DeleteResourceClaim(const ResourceClaim& claim) {
  const std::string path = ClaimsPath(claim.metadata.namespace_) + "/" + claim.metadata.name;
  // The scheduler's finalizer goes first, so that the deletion completes at once.
  for (int attempt = 0; attempt < 5; ++attempt) {
    Result<nlohmann::json> current = rest_->Get(path);
    if (!current.ok()) {
      if (current.error().code == ErrorCode::kNotFound) return {};
      return current.error();
    }
    auto& finalizers = (*current)["metadata"]["finalizers"];
    if (!finalizers.is_array()) break;
    const auto before = finalizers.size();
    finalizers.erase(std::remove(finalizers.begin(), finalizers.end(),
                                 "resource.kubernetes.io/delete-protection"),
                     finalizers.end());
    if (finalizers.size() == before) break;
    Result<nlohmann::json> put = rest_->Put(path, *current);
    if (put.ok()) break;
    if (put.error().code == ErrorCode::kNotFound) return {};
    if (put.error().code != ErrorCode::kConflict) return put.error();
  }
  Result<nlohmann::json> r = rest_->Delete(path);
  if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();
  return {};
}

VoidResult ApiClusterClient::SetPodExtendedResourceClaimStatus(const Pod& pod,
                                                               const nlohmann::json& status) {
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods/{}/status",
                                       pod.metadata.namespace_, pod.metadata.name);
  nlohmann::json patch = {{"status", {{"extendedResourceClaimStatus", status}}}};
  Result<nlohmann::json> r = rest_->Patch(path, patch, "application/merge-patch+json");
  if (!r.ok()) return r.error();
  return {};
}

}  // namespace berth::client
