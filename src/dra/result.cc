// Assembly of a claim's status.allocation once devices are found.
#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "dra/internal.h"

namespace berth::dra::internal {
namespace {

bool SameRequirement(const NodeSelectorRequirement& a, const NodeSelectorRequirement& b) {
  if (a.key != b.key || a.op != b.op) return false;
  return std::set<std::string>(a.values.begin(), a.values.end()) ==
         std::set<std::string>(b.values.begin(), b.values.end());
}

void AddNew(const std::vector<NodeSelectorRequirement>& from,
            std::vector<NodeSelectorRequirement>& to) {
  for (const auto& r : from) {
    if (std::none_of(to.begin(), to.end(),
                     [&](const NodeSelectorRequirement& e) { return SameRequirement(e, r); }))
      to.push_back(r);
  }
}

// The nodes the allocation is usable from: the node itself when a device is local to it (or
// binds to it), the union of the slices' one-term selectors, or everywhere (nullopt).
Result<std::optional<NodeSelector>> NodeSelectorFor(const std::vector<DeviceResult>& devices,
                                                    const std::string& node_name) {
  NodeSelectorTerm term;
  for (const DeviceResult& d : devices) {
    const std::optional<std::string>* name;
    const std::optional<NodeSelector>* selector;
    if (d.slice->spec.per_device_node_selection) {
      name = &d.device->node_name;
      selector = &d.device->node_selector;
    } else {
      name = &d.slice->spec.node_name;
      selector = &d.slice->spec.node_selector;
    }
    if ((*name && !(*name)->empty()) || d.device->binds_to_node) {
      NodeSelector only;
      only.terms.push_back(NodeSelectorTerm{{}, {{"metadata.name", "In", {node_name}}}});
      return std::optional<NodeSelector>(std::move(only));
    }
    if (*selector) {
      const auto& terms = (*selector)->terms;
      if (terms.size() == 1) {
        AddNew(terms[0].match_fields, term.match_fields);
        AddNew(terms[0].match_expressions, term.match_expressions);
      } else if (terms.size() > 1) {
        return Error{"unsupported ResourceSlice.NodeSelector with " + std::to_string(terms.size()) +
                     " terms"};
      }
    }
  }
  if (term.match_fields.empty() && term.match_expressions.empty())
    return std::optional<NodeSelector>();
  NodeSelector ns;
  ns.terms.push_back(std::move(term));
  return std::optional<NodeSelector>(std::move(ns));
}

void AddConfigs(const ResourceClaim& claim, const std::vector<ChosenRequest>& chosen,
                AllocationResult& out) {
  // Each class's configuration is added once, naming every request that uses the class.
  std::vector<std::pair<std::string, std::pair<size_t, size_t>>> class_ranges;
  for (const ChosenRequest& c : chosen) {
    if (c.device_class == nullptr) continue;
    const std::string& cls = c.device_class->metadata.name;
    auto it = std::find_if(class_ranges.begin(), class_ranges.end(),
                           [&](const auto& e) { return e.first == cls; });
    if (it != class_ranges.end()) {
      for (size_t i = it->second.first; i < it->second.second; ++i)
        out.config[i].requests.push_back(c.Name());
      continue;
    }
    const size_t start = out.config.size();
    for (const DeviceClassConfiguration& cfg : c.device_class->spec.config) {
      out.config.push_back(DeviceAllocationConfiguration{"FromClass", {c.Name()}, cfg.opaque});
    }
    class_ranges.push_back({cls, {start, out.config.size()}});
  }
  const auto& requests = claim.spec.devices.requests;
  for (const DeviceClaimConfiguration& cfg : claim.spec.devices.config) {
    auto from_claim = [&] {
      out.config.push_back(DeviceAllocationConfiguration{"FromClaim", cfg.requests, cfg.opaque});
    };
    if (cfg.requests.empty()) {
      from_claim();
      continue;
    }
    auto named = [&](const std::string& n) {
      return std::find(cfg.requests.begin(), cfg.requests.end(), n) != cfg.requests.end();
    };
    for (size_t i = 0; i < requests.size(); ++i) {
      if (named(requests[i].name)) {
        from_claim();
        continue;
      }
      if (i < chosen.size() && chosen[i].subrequest >= 0 && named(chosen[i].Name())) from_claim();
    }
  }
}

}  // namespace

std::string ChosenRequest::Name() const {
  if (subrequest < 0) return request->name;
  return request->name + "/" + request->first_available[subrequest].name;
}

Result<AllocationResult> BuildAllocation(const ResourceClaim& claim,
                                         const std::vector<DeviceResult>& devices,
                                         const std::vector<ChosenRequest>& chosen, const Node& node,
                                         bool binding_conditions) {
  AllocationResult out;
  out.results.reserve(devices.size());
  for (const DeviceResult& d : devices) {
    DeviceRequestAllocationResult& r = out.results.emplace_back();
    r.request = d.RequestName();
    r.driver = d.id.driver;
    r.pool = d.id.pool;
    r.device = d.id.device;
    if (d.admin_access) r.admin_access = true;
    if (d.spec != nullptr) r.tolerations = d.spec->tolerations;
    r.share_id = d.share_id;
    r.consumed_capacity = d.consumed_capacity;
    if (binding_conditions) {
      r.binding_conditions = d.device->binding_conditions;
      r.binding_failure_conditions = d.device->binding_failure_conditions;
    }
  }
  AddConfigs(claim, chosen, out);
  auto ns = NodeSelectorFor(devices, node.metadata.name);
  if (!ns.ok()) {
    return Error{"create NodeSelector for claim " + claim.metadata.name + ": " +
                 ns.error().message};
  }
  out.node_selector = std::move(*ns);
  return out;
}

}  // namespace berth::dra::internal
