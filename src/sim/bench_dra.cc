#include "sim/bench_dra.h"

#include <fmt/format.h>

#include <memory>
#include <utility>

#include "api/codec.h"
#include "berth/api/resource_claims.h"
#include "cel/dra.h"
#include "dra/allocated_tracker.h"
#include "dra/allocator.h"
#include "dra/pool_cache.h"

namespace berth::sim::internal {
namespace {

// A group's `count` (a non-negative integer) and its `template`, an object of kind T.
template <class T>
Result<T> DecodeCountAndTemplate(const nlohmann::json& j, const std::string& w, const char* kind,
                                 int* count) {
  if (!j.is_object() || !j.contains("count") || !j["count"].is_number_integer() ||
      j["count"].get<int>() < 0)
    return Error{fmt::format("{}.count: required non-negative integer", w)};
  *count = j["count"].get<int>();
  if (!j.contains("template")) return Error{fmt::format("{}.template: required", w)};
  auto obj = DecodeObject(j["template"], w + ".template");
  if (!obj.ok()) return obj.error();
  const auto* typed = std::get_if<std::shared_ptr<const T>>(&*obj);
  if (!typed) return Error{fmt::format("{}.template: must be a {}", w, kind)};
  return **typed;
}

Result<Workload::ClaimGroup> DecodeClaimGroup(const nlohmann::json& j, const std::string& w) {
  Workload::ClaimGroup g;
  auto claim = DecodeCountAndTemplate<ResourceClaim>(j, w, "ResourceClaim", &g.count);
  if (!claim.ok()) return claim.error();
  g.template_claim = std::move(claim).value();
  if (g.template_claim.metadata.namespace_.empty())
    g.template_claim.metadata.namespace_ = "default";
  if (j.contains("allocate")) {
    if (!j["allocate"].is_boolean()) return Error{fmt::format("{}.allocate: must be a boolean", w)};
    g.allocate = j["allocate"].get<bool>();
  }
  return g;
}

Result<Workload::SliceGroup> DecodeSliceGroup(const nlohmann::json& j, const std::string& w) {
  Workload::SliceGroup g;
  auto slice = DecodeCountAndTemplate<ResourceSlice>(j, w, "ResourceSlice", &g.count);
  if (!slice.ok()) return slice.error();
  g.template_slice = std::move(slice).value();
  if (j.contains("indexAttribute")) {
    if (!j["indexAttribute"].is_string() || j["indexAttribute"].get<std::string>().empty())
      return Error{fmt::format("{}.indexAttribute: must be a non-empty string", w)};
    g.index_attribute = j["indexAttribute"].get<std::string>();
  }
  return g;
}

Result<Workload::SteadyState> DecodeSteadyState(const nlohmann::json& j, const std::string& w) {
  Workload::SteadyState s;
  if (!j.is_object()) return Error{fmt::format("{}: must be a map", w)};
  for (const auto& [key, value] : j.items()) {
    if (key == "durationSeconds") {
      if (!value.is_number() || value.get<double>() <= 0)
        return Error{fmt::format("{}.durationSeconds: must be a positive number", w)};
      s.duration_seconds = value.get<double>();
    } else if (key == "pods") {
      if (!value.is_number_integer() || value.get<int>() <= 0)
        return Error{fmt::format("{}.pods: must be a positive integer", w)};
      s.pods = value.get<int>();
    } else {
      return Error{fmt::format("{}.{}: unknown field (durationSeconds, pods)", w, key)};
    }
  }
  if (s.duration_seconds <= 0 && s.pods <= 0)
    return Error{fmt::format("{}: durationSeconds or pods required", w)};
  return s;
}

// Allocates `claim` on the first node from `*cursor` on where it fits, and moves the cursor
// there: the claims of one group are alike, so a node that had no room for the claim before
// has none for this one.
Result<bool> AllocateOne(const std::vector<Ptr<Node>>& nodes, size_t* cursor,
                         const dra::Allocator& allocator, ResourceClaim& claim) {
  auto shared = std::make_shared<const ResourceClaim>(claim);
  for (size_t k = *cursor; k < nodes.size(); ++k) {
    auto r = allocator.Allocate(*nodes[k], {shared});
    if (!r.ok() && !dra::IsFailedAllocationOnNode(r.error())) return r.error();
    if (!r.ok() || !*r) continue;
    claim.status.allocation = std::move((*r)->front());
    *cursor = k;
    return true;
  }
  return false;
}

}  // namespace

VoidResult DecodeDraFields(const nlohmann::json& w, const std::string& where, Workload* out) {
  if (w.contains("claims")) {
    if (!w["claims"].is_array()) return Error{where + ".claims: must be a list"};
    for (size_t k = 0; k < w["claims"].size(); ++k) {
      auto g = DecodeClaimGroup(w["claims"][k], fmt::format("{}.claims[{}]", where, k));
      if (!g.ok()) return g.error();
      out->claims.push_back(std::move(g).value());
    }
  }
  if (w.contains("resourceSlices")) {
    if (!w["resourceSlices"].is_array()) return Error{where + ".resourceSlices: must be a list"};
    for (size_t k = 0; k < w["resourceSlices"].size(); ++k) {
      auto g =
          DecodeSliceGroup(w["resourceSlices"][k], fmt::format("{}.resourceSlices[{}]", where, k));
      if (!g.ok()) return g.error();
      out->resource_slices.push_back(std::move(g).value());
    }
  }
  if (w.contains("steadyState")) {
    auto s = DecodeSteadyState(w["steadyState"], where + ".steadyState");
    if (!s.ok()) return s.error();
    for (const auto& g : out->measure_pods)
      if (g.namespace_count > 0 || g.count <= 0)
        return Error{where +
                     ".steadyState: measured groups need a positive count and no "
                     "namespaceSets"};
    out->steady_state = *s;
  }
  return {};
}

void AddSlices(const Workload& w, InMemoryCluster& cluster) {
  for (const auto& g : w.resource_slices) {
    for (int i = 0; i < g.count; ++i) {
      auto slice = std::make_shared<ResourceSlice>(g.template_slice);
      slice->metadata.name = fmt::format("{}-{}", g.template_slice.metadata.name, i);
      slice->metadata.uid = slice->metadata.name;
      slice->spec.pool.name = fmt::format("{}-{}", g.template_slice.spec.pool.name, i);
      if (!g.index_attribute.empty())
        for (Device& d : slice->spec.devices) d.attributes[g.index_attribute] = {.int_value = i};
      cluster.AddResourceSlice(std::move(slice));
    }
  }
}

VoidResult AddClaims(const Workload& w, InMemoryCluster& cluster) {
  // The nodes in the order the harness made them.
  std::vector<Ptr<Node>> nodes;
  for (const auto& extra : w.extra_nodes) nodes.push_back(cluster.GetNode(extra.metadata.name));
  for (int i = 0; i < w.nodes; ++i) nodes.push_back(cluster.GetNode(fmt::format("node-{}", i)));
  const dra::Features features;
  dra::PoolCache pools(features);
  auto slices = pools.For(cluster.ListResourceSlices());
  cel::dra::SelectorCache selectors(64);
  dra::AllocatedStateTracker held;
  for (const auto& c : cluster.ListResourceClaims()) held.Set(c->metadata.uid, c);
  auto classes = [&](std::string_view name) { return cluster.GetDeviceClass(name); };
  for (const auto& g : w.claims) {
    size_t cursor = 0;
    for (int i = 0; i < g.count; ++i) {
      auto claim = std::make_shared<ResourceClaim>(g.template_claim);
      claim->metadata.name = fmt::format("{}-{}", g.template_claim.metadata.name, i);
      claim->metadata.uid =
          fmt::format("claim-{}-{}", claim->metadata.namespace_, claim->metadata.name);
      if (g.allocate) {
        Result<bool> placed = false;
        {
          // The allocator reads the state of this moment and is gone before the state changes
          // (the tracker would otherwise copy the state for it).
          dra::Allocator allocator(features, held.State(), classes, slices, &selectors);
          placed = AllocateOne(nodes, &cursor, allocator, *claim);
        }
        if (!placed.ok()) return placed.error();
        if (!*placed)
          return Error{fmt::format("{}: claim {}/{} fits no node", w.name,
                                   claim->metadata.namespace_, claim->metadata.name)};
        held.Set(claim->metadata.uid, claim);
      }
      cluster.AddResourceClaim(std::move(claim));
    }
  }
  return {};
}

std::shared_ptr<Pod> StampPod(const PodGroup& g, const std::string& uid_suffix,
                              const std::string& ns, int set, int index) {
  auto p = std::make_shared<Pod>(g.template_pod);
  if (g.vary.Any()) VaryPod(g.vary, index, p.get());
  p->metadata.name = fmt::format("{}-{}", g.name_prefix, index);
  p->metadata.namespace_ = ns;
  p->metadata.uid = g.namespace_count > 0
                        ? fmt::format("{}{}-{}-{}", g.name_prefix, uid_suffix, set, index)
                        : fmt::format("{}{}-{}", g.name_prefix, uid_suffix, index);
  return p;
}

SteadyStateDriver::SteadyStateDriver(const Workload& w, InMemoryCluster& cluster)
    : w_(w), cluster_(cluster), next_index_(w.measure_pods.size(), 0) {}

void SteadyStateDriver::Create(size_t group) {
  const PodGroup& g = w_.measure_pods[group];
  const std::string& ns = g.template_pod.metadata.namespace_;
  auto p = StampPod(g, "-m", ns.empty() ? std::string("default") : ns, 0, next_index_[group]++);
  in_flight_.push_back({group, p->metadata.namespace_, p->metadata.name});
  ++created_;
  cluster_.AddPod(std::move(p));
}

void SteadyStateDriver::Start() {
  start_ = std::chrono::steady_clock::now();
  for (size_t group = 0; group < w_.measure_pods.size(); ++group)
    for (int i = 0; i < w_.measure_pods[group].count; ++i) Create(group);
}

bool SteadyStateDriver::AfterCycle() {
  const Workload::SteadyState& s = *w_.steady_state;
  for (size_t k = 0; k < in_flight_.size();) {
    auto pod = cluster_.GetPod(in_flight_[k].ns, in_flight_[k].name);
    if (!pod || pod->spec.node_name.empty()) {
      ++k;
      continue;
    }
    ++scheduled_;
    const size_t group = in_flight_[k].group;
    in_flight_.erase(in_flight_.begin() + static_cast<long>(k));
    cluster_.RemovePod(pod->metadata.namespace_, pod->metadata.name);
    // Only the claims made for this pod from templates go with it; a shared claim stays.
    for (const PodResourceClaim& entry : PodResourceClaimsOf(*pod)) {
      if (!entry.resource_claim_template_name) continue;
      for (const auto& [name, claim] : PodResourceClaimStatusesOf(*pod))
        if (name == entry.name) cluster_.RemoveResourceClaim(pod->metadata.namespace_, claim);
    }
    if (s.pods > 0 && scheduled_ >= s.pods) return false;
    Create(group);
  }
  if (s.duration_seconds <= 0) return true;
  return std::chrono::steady_clock::now() - start_ <
         std::chrono::duration<double>(s.duration_seconds);
}

}  // namespace berth::sim::internal
