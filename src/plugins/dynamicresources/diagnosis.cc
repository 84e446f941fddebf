// DynamicResources as a FilterDiagnosis: why the pod's unallocated claims fit no devices of a
// node, in the allocator's own terms (dra::Allocator::Diagnose), plus one check of its own:
// whether the claims would fit without their constraints.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <map>
#include <string>
#include <vector>

#include "plugins/dynamicresources/dynamicresources.h"

namespace berth::dynamicresources {
namespace {

std::string Plural(int n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

// Which claim holds each exclusively allocated device.
std::map<dra::DeviceId, std::string> Holders(const std::vector<Ptr<ResourceClaim>>& in_use) {
  std::map<dra::DeviceId, std::string> out;
  for (const auto& c : in_use) {
    for (const auto& r : c->status.allocation->results)
      out.emplace(dra::DeviceId{r.driver, r.pool, r.device},
                  c->metadata.namespace_ + "/" + c->metadata.name);
  }
  return out;
}

// The lines for one request that cannot be satisfied alone; empty when it can.
std::vector<std::string> RequestLines(const dra::RequestDiagnosis& r,
                                      const std::map<dra::DeviceId, std::string>& holders) {
  if (r.free >= r.wanted && (r.free > 0 || !r.all)) return {};
  const std::string where =
      r.request.empty() ? r.claim : fmt::format("claim {}, request {}", r.claim, r.request);
  const std::string wants =
      r.all ? std::string("all matching devices") : Plural(r.wanted, "device", "devices");
  if (r.class_match == 0)
    return {fmt::format("{}: no device of the node matches DeviceClass {} ({} considered)", where,
                        r.device_class, Plural(r.considered, "device", "devices"))};
  if (r.request_match == 0)
    return {fmt::format("{}: {} DeviceClass {}, none of them the request's selectors", where,
                        Plural(r.class_match, "device matches", "devices match"), r.device_class)};
  std::vector<std::string> out;
  if (r.capacity_fit < r.request_match)
    out.push_back(
        fmt::format("{}: {} the selectors, {} the node reaches with the capacity requested", where,
                    Plural(r.request_match, "device matches", "devices match"), r.capacity_fit));
  std::string line = fmt::format("{}: wants {}, {} free", where, wants, r.free);
  if (!r.allocated.empty()) {
    std::vector<std::string> taken;
    for (const auto& id : r.allocated) {
      auto it = holders.find(id);
      taken.push_back(it == holders.end() ? id.String()
                                          : fmt::format("{} (claim {})", id.String(), it->second));
    }
    line += fmt::format("; allocated: {}", fmt::join(taken, ", "));
  }
  if (r.counters_exhausted > 0)
    line += fmt::format("; {} whose pool's counters are used up",
                        Plural(r.counters_exhausted, "device", "devices"));
  if (r.tainted > 0)
    line += fmt::format("; {} with a taint the request does not tolerate",
                        Plural(r.tainted, "device", "devices"));
  out.push_back(std::move(line));
  return out;
}

}  // namespace

std::vector<std::string> DynamicResources::Diagnose(const Pod& pod, const Node& node,
                                                    const Status& rejection) const {
  if (rejection.IsSuccess() || !listers()) return {};
  Result<std::vector<Ptr<ResourceClaim>>> claims = PodClaims(pod);
  if (!claims.ok()) return {};
  std::vector<std::shared_ptr<const ResourceClaim>> to_allocate;
  for (const auto& c : *claims)
    if (!c->status.allocation) to_allocate.push_back(c);
  std::vector<ContainerRequestMapping> extended;
  if (auto lines = DiagnoseExtended(pod, node, to_allocate, &extended); !lines.empty())
    return lines;
  if (to_allocate.empty()) return {};
  const std::vector<Ptr<ResourceClaim>> in_use = ClaimsInUse();
  std::shared_ptr<const dra::Allocator> allocator = MakeAllocator();
  Result<dra::Diagnosis> d = allocator->Diagnose(node, to_allocate);
  if (!d.ok()) return {d.error().message};
  if (d->fits) return {};
  std::vector<std::string> out;
  const auto holders = Holders(in_use);
  const std::string extended_claim = pod.metadata.namespace_ + "/" + std::string(kSpecialClaimName);
  for (auto r : d->requests) {
    // The extended resource claim's requests are named after what the containers ask for.
    if (r.claim == extended_claim) {
      if (std::string what = DescribeExtendedRequest(extended, r.request); !what.empty()) {
        r.claim = std::move(what);
        r.request.clear();
      }
    }
    std::vector<std::string> lines = RequestLines(r, holders);
    out.insert(out.end(), lines.begin(), lines.end());
  }
  for (const auto& p : d->invalid_pools) out.push_back("invalid resource pool " + p);
  if (!out.empty()) return out;
  // Every request finds devices alone: try the claims without their constraints.
  bool constrained = false;
  std::vector<std::shared_ptr<const ResourceClaim>> relaxed;
  for (const auto& c : to_allocate) {
    auto copy = std::make_shared<ResourceClaim>(*c);
    constrained |= !copy->spec.devices.constraints.empty();
    copy->spec.devices.constraints.clear();
    relaxed.push_back(std::move(copy));
  }
  auto without = allocator->Allocate(node, relaxed);
  if (constrained && without.ok() && without->has_value())
    return {
        "each request finds free devices, but not ones that meet the claims' constraints "
        "(matchAttribute / distinctAttribute)"};
  return {"each request finds free devices alone, but not all of them together"};
}

}  // namespace berth::dynamicresources
