// Dynamic Resource Allocation on the simulated nodes: each node publishes the ResourceSlices of
// the drivers --node-devices gives it (as a DRA driver's resourceslice controller does), and
// a pod with resource claims starts only once every claim is allocated and reserved for it
// (as the kubelet's NodePrepareResources waits for), the claim of its status's
// extendedResourceClaimStatus (extended resources backed by DRA) included.
#include <fmt/format.h>

#include <algorithm>

#include "kubelet/json_fields.h"
#include "kubelet/kubelets_impl.h"

namespace berth::kubelet {

using Impl = SimulatedKubelets::Impl;
using Json = nlohmann::json;

namespace {

constexpr const char* kSlices = "/apis/resource.k8s.io/v1/resourceslices";

bool Ours(const Json& slice) {
  return StringMember(Member(Member(slice, "metadata"), "labels"), kSimulatedSliceLabel) == "true";
}

std::string OwnerUid(const Json& slice) {
  const Json& refs = Member(Member(slice, "metadata"), "ownerReferences");
  if (!refs.is_array() || refs.empty()) return "";
  return StringMember(refs[0], "uid");
}

// The name of the claim a pod's spec.resourceClaims entry refers to; "" when the claim is not
// needed (recorded without a name); nullopt when it is not known yet (not generated).
std::optional<std::string> ClaimNameOf(const Json& pod, const Json& pod_claim) {
  const std::string named = StringMember(pod_claim, "resourceClaimName");
  if (!named.empty()) return named;
  const std::string name = StringMember(pod_claim, "name");
  for (const Json& s : Member(Member(pod, "status"), "resourceClaimStatuses")) {
    if (StringMember(s, "name") == name) return StringMember(s, "resourceClaimName");
  }
  return std::nullopt;
}

}  // namespace

void Impl::OnSlice(const Json& slice, bool gone) {
  if (!Ours(slice)) return;
  const std::string node = StringMember(Member(slice, "spec"), "nodeName");
  const std::string name = StringMember(Member(slice, "metadata"), "name");
  auto& by_name = slices_by_node[node];
  if (gone) {
    by_name.erase(name);
    if (by_name.empty()) slices_by_node.erase(node);
  } else {
    by_name[name] = slice;
  }
  // A slice changed or deleted by someone else is put back as the description says.
  if (NodeState* n = FindNode(node))
    n->slices_token = Schedule(clock->Now(), TaskKind::kSlices, node);
}

void Impl::UpdateOffered(NodeState& node, const Node& obj) {
  std::vector<size_t> offered;
  for (size_t i = 0; i < options.node_devices.size(); ++i)
    if (Offers(options.node_devices[i], obj)) offered.push_back(i);
  if (offered == node.offered && node.slices_token != 0) return;
  node.offered = std::move(offered);
  node.slices_token = Schedule(clock->Now(), TaskKind::kSlices, node.name);
}

void Impl::SyncSlices(NodeState& node) {
  const std::string name = node.name;
  // What exists is not known yet: every node is looked at once it is (SlicesSynced).
  if (!slices_synced) return;
  static const std::map<std::string, Json> kNone;
  auto found = slices_by_node.find(name);
  const auto& existing = found == slices_by_node.end() ? kNone : found->second;
  const uint64_t token = node.slices_token;
  auto retry = [this, name, token](const VoidResult& r) {
    if (r.ok()) return;
    const ErrorCode code = r.error().code;
    // Already there, gone or changed meanwhile: the informer's event brings the next sync.
    if (code == ErrorCode::kAlreadyExists || code == ErrorCode::kNotFound ||
        code == ErrorCode::kConflict)
      return;
    NodeState* n = FindNode(name);
    if (!n || n->slices_token != token) return;
    n->slices_token = Schedule(clock->Now() + options.retry_delay, TaskKind::kSlices, name);
  };
  std::set<std::string> wanted;
  for (size_t i : node.offered) {
    const DriverDevices& d = options.node_devices[i];
    std::vector<Json> slices = ResourceSlicesFor(d, name, node.uid, 1);
    bool stale = false, seen = false;
    int64_t generation = 0;
    for (const Json& slice : slices) {
      const std::string slice_name = StringMember(slice["metadata"], "name");
      wanted.insert(slice_name);
      auto it = existing.find(slice_name);
      if (it == existing.end()) {
        stale = true;
        continue;
      }
      seen = true;
      const Json& g = Member(Member(Member(it->second, "spec"), "pool"), "generation");
      if (g.is_number_integer()) generation = std::max(generation, g.get<int64_t>());
      const Json& meta = Member(it->second, "metadata");
      stale = stale ||
              StringMember(Member(meta, "annotations"), kSliceDigestAnnotation) != d.digest ||
              OwnerUid(it->second) != node.uid;
    }
    if (!stale) continue;
    // A changed pool is written whole at its next generation, so that schedulers drop what
    // they saw of the old one.
    if (seen) slices = ResourceSlicesFor(d, name, node.uid, generation + 1);
    for (Json& slice : slices) {
      const std::string slice_name = StringMember(slice["metadata"], "name");
      auto it = existing.find(slice_name);
      if (it == existing.end()) {
        Queue("POST", kSlices, slice.dump(), "application/json", retry);
        continue;
      }
      slice["metadata"]["resourceVersion"] =
          StringMember(Member(it->second, "metadata"), "resourceVersion");
      Queue("PUT", fmt::format("{}/{}", kSlices, slice_name), slice.dump(), "application/json",
            retry);
    }
  }
  for (const auto& [slice_name, slice] : existing) {
    if (wanted.count(slice_name)) continue;
    Queue("DELETE", fmt::format("{}/{}", kSlices, slice_name), "", "application/json", retry);
  }
}

void Impl::SlicesSynced() {
  if (slices_synced) return;
  slices_synced = true;
  const TimePoint now = clock->Now();
  for (auto& [name, node] : nodes) node.slices_token = Schedule(now, TaskKind::kSlices, name);
}

void Impl::DeleteSlices(const std::string& node) {
  auto found = slices_by_node.find(node);
  if (found == slices_by_node.end()) return;
  // Owned by the Node, so the garbage collector would delete them too; a kubelet's node that
  // stops being simulated takes its devices with it.
  for (const auto& [slice_name, slice] : found->second) {
    Queue("DELETE", fmt::format("{}/{}", kSlices, slice_name), "", "application/json", nullptr);
  }
}

void Impl::OnClaim(const Json& claim, bool gone) {
  const Json& meta = Member(claim, "metadata");
  const std::string ns = StringMember(meta, "namespace");
  const std::string key = ns + "/" + StringMember(meta, "name");
  if (gone) {
    claims.erase(key);
  } else {
    claims[key] = claim;
  }
  // The pods waiting in the claim's namespace look again.
  const TimePoint now = clock->Now();
  for (const std::string& pod_key : claim_waiters) {
    if (pod_key.compare(0, ns.size() + 1, ns + "/") != 0) continue;
    auto it = pods.find(pod_key);
    if (it == pods.end() || it->second.phase != PodState::kWaiting) continue;
    it->second.token = Schedule(now, TaskKind::kStartPod, pod_key);
  }
}

bool Impl::ClaimsReady(const Pod& pod) const {
  if (!pod.raw) return true;
  auto allocated_for_pod = [&](const std::string& name) {
    auto it = claims.find(pod.metadata.namespace_ + "/" + name);
    if (it == claims.end()) return false;
    const Json& status = Member(it->second, "status");
    if (Member(status, "allocation").is_null()) return false;
    const Json& reserved = Member(status, "reservedFor");
    return reserved.is_array() && std::any_of(reserved.begin(), reserved.end(), [&](const Json& r) {
             return StringMember(r, "uid") == pod.metadata.uid;
           });
  };
  // The claim the scheduler made for extended resources backed by DRA.
  const std::string extended = StringMember(
      Member(Member(*pod.raw, "status"), "extendedResourceClaimStatus"), "resourceClaimName");
  if (!extended.empty() && !allocated_for_pod(extended)) return false;
  const Json& pod_claims = Member(Member(*pod.raw, "spec"), "resourceClaims");
  if (!pod_claims.is_array()) return true;
  for (const Json& c : pod_claims) {
    auto name = ClaimNameOf(*pod.raw, c);
    if (!name) return false;      // not generated yet
    if (name->empty()) continue;  // not needed
    if (!allocated_for_pod(*name)) return false;
  }
  return true;
}

void Impl::WaitForClaims(const std::string& key, PodState& st, NodeState& node) {
  claim_waiters.insert(key);
  if (st.reported_creating) return;
  st.reported_creating = true;
  st.where.host_ip = node.internal_ip;
  st.where.started = NowSeconds();
  {
    std::lock_guard lock(stats_mu);
    ++counters.pod_status_writes;
  }
  Queue("PATCH", PodPath(*st.pod) + "/status",
        Json{{"status", ContainerCreatingStatus(*st.pod, st.where)}}.dump(),
        "application/strategic-merge-patch+json", [this, key](const VoidResult& r) {
          auto it = pods.find(key);
          if (r.ok() || it == pods.end()) return;
          it->second.reported_creating = false;  // written with the next look
        });
}

}  // namespace berth::kubelet
