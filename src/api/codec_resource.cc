// Decoding and encoding of the resource.k8s.io/v1 kinds (DeviceClass, ResourceClaim,
// ResourceClaimTemplate, ResourceSlice) and of a pod's resource claims in its raw document.
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "api/codec_internal.h"
#include "berth/api/resource_claims.h"

namespace berth::codec {
namespace {

using nlohmann::json;

template <class T>
Result<Object> Share(Result<T> r, const RawObject& keep) {
  if (!r.ok()) return r.error();
  T obj = std::move(r).value();
  obj.raw = keep;
  return Object(std::make_shared<const T>(std::move(obj)));
}

void ReadSelectors(Reader& r, const json& j, std::vector<DeviceSelector>& out) {
  r.Each(j, [&](const json& e) {
    DeviceSelector& s = out.emplace_back();
    r.Field(e, "cel", [&](const json& c) {
      r.Field(c, "expression", [&](const json& x) { s.cel_expression = r.Str(x); });
    });
  });
}

void ReadOpaque(Reader& r, const json& j, OpaqueDeviceConfiguration& o) {
  r.Field(j, "opaque", [&](const json& v) {
    r.Field(v, "driver", [&](const json& x) { o.driver = r.Str(x); });
    if (auto* p = r.Find(v, "parameters")) o.parameters = std::make_shared<const json>(*p);
  });
}

FlatMap<std::string, Quantity> ReadQuantities(Reader& r, const json& j) {
  FlatMap<std::string, Quantity> out;
  r.Entries(j, [&](const std::string& k, const json& v) { out[k] = r.Qty(v); });
  return out;
}

// counters: {name: {value: q}}
Counters ReadCounters(Reader& r, const json& j) {
  Counters out;
  r.Entries(j, [&](const std::string& k, const json& v) {
    r.Field(v, "value", [&](const json& x) { out[k] = r.Qty(x); });
  });
  return out;
}

void ReadToleration(Reader& r, const json& j, DeviceToleration& t) {
  r.Field(j, "key", [&](const json& x) { t.key = r.Str(x); });
  r.Field(j, "operator", [&](const json& x) { t.op = r.Str(x); });
  r.Field(j, "value", [&](const json& x) { t.value = r.Str(x); });
  r.Field(j, "effect", [&](const json& x) { t.effect = r.Str(x); });
  r.Field(j, "tolerationSeconds", [&](const json& x) { t.toleration_seconds = r.Int(x); });
}

void ReadTolerations(Reader& r, const json& j, std::vector<DeviceToleration>& out) {
  r.Each(j, [&](const json& e) { ReadToleration(r, e, out.emplace_back()); });
}

void ReadExact(Reader& r, const json& j, ExactDeviceRequest& q) {
  r.Field(j, "deviceClassName", [&](const json& x) { q.device_class_name = r.Str(x); });
  r.Field(j, "selectors", [&](const json& x) { ReadSelectors(r, x, q.selectors); });
  r.Field(j, "allocationMode", [&](const json& x) { q.allocation_mode = r.Str(x); });
  r.Field(j, "count", [&](const json& x) { q.count = r.Int(x); });
  r.Field(j, "adminAccess", [&](const json& x) { q.admin_access = r.Bool(x); });
  r.Field(j, "tolerations", [&](const json& x) { ReadTolerations(r, x, q.tolerations); });
  r.Field(j, "capacity", [&](const json& c) {
    r.Field(c, "requests", [&](const json& x) { q.capacity_requests = ReadQuantities(r, x); });
  });
}

void ReadClaimSpec(Reader& r, const json& spec, ResourceClaimSpec& s) {
  r.Field(spec, "devices", [&](const json& d) {
    r.Field(d, "requests", [&](const json& v) {
      r.Each(v, [&](const json& e) {
        DeviceRequest& q = s.requests.emplace_back();
        r.Field(e, "name", [&](const json& x) { q.name = r.Str(x); });
        r.Field(e, "exactly", [&](const json& x) { ReadExact(r, x, q.exactly.emplace()); });
        r.Field(e, "firstAvailable", [&](const json& x) {
          r.Each(x, [&](const json& f) {
            DeviceSubRequest& sub = q.first_available.emplace_back();
            r.Field(f, "name", [&](const json& y) { sub.name = r.Str(y); });
            ReadExact(r, f, sub.request);
          });
        });
      });
    });
    r.Field(d, "constraints", [&](const json& v) {
      r.Each(v, [&](const json& e) {
        DeviceConstraint& c = s.constraints.emplace_back();
        r.Field(e, "requests", [&](const json& x) { c.requests = r.StrList(x); });
        r.Field(e, "matchAttribute", [&](const json& x) { c.match_attribute = r.Str(x); });
        r.Field(e, "distinctAttribute", [&](const json& x) { c.distinct_attribute = r.Str(x); });
      });
    });
    r.Field(d, "config", [&](const json& v) {
      r.Each(v, [&](const json& e) {
        DeviceClaimConfiguration& c = s.config.emplace_back();
        r.Field(e, "requests", [&](const json& x) { c.requests = r.StrList(x); });
        ReadOpaque(r, e, c.opaque);
      });
    });
  });
}

void ReadAllocation(Reader& r, const json& j, AllocationResult& a) {
  r.Field(j, "devices", [&](const json& d) {
    r.Field(d, "results", [&](const json& v) {
      r.Each(v, [&](const json& e) {
        DeviceRequestAllocationResult& x = a.results.emplace_back();
        r.Field(e, "request", [&](const json& y) { x.request = r.Str(y); });
        r.Field(e, "driver", [&](const json& y) { x.driver = r.Str(y); });
        r.Field(e, "pool", [&](const json& y) { x.pool = r.Str(y); });
        r.Field(e, "device", [&](const json& y) { x.device = r.Str(y); });
        r.Field(e, "adminAccess", [&](const json& y) { x.admin_access = r.Bool(y); });
        r.Field(e, "tolerations", [&](const json& y) { ReadTolerations(r, y, x.tolerations); });
        r.Field(e, "bindingConditions",
                [&](const json& y) { x.binding_conditions = r.StrList(y); });
        r.Field(e, "bindingFailureConditions",
                [&](const json& y) { x.binding_failure_conditions = r.StrList(y); });
        r.Field(e, "shareID", [&](const json& y) { x.share_id = r.Str(y); });
        r.Field(e, "consumedCapacity",
                [&](const json& y) { x.consumed_capacity = ReadQuantities(r, y); });
      });
    });
    r.Field(d, "config", [&](const json& v) {
      r.Each(v, [&](const json& e) {
        DeviceAllocationConfiguration& c = a.config.emplace_back();
        r.Field(e, "source", [&](const json& y) { c.source = r.Str(y); });
        r.Field(e, "requests", [&](const json& y) { c.requests = r.StrList(y); });
        ReadOpaque(r, e, c.opaque);
      });
    });
  });
  r.Field(j, "nodeSelector",
          [&](const json& v) { ReadNodeSelector(r, v, a.node_selector.emplace()); });
  r.Field(j, "allocationTimestamp", [&](const json& v) { a.allocation_timestamp = r.Time(v); });
}

void ReadClaim(Reader& r, const json& doc, ResourceClaim& c) {
  if (c.metadata.namespace_.empty()) c.metadata.namespace_ = "default";
  r.Field(doc, "spec", [&](const json& v) { ReadClaimSpec(r, v, c.spec.devices); });
  r.Field(doc, "status", [&](const json& v) {
    r.Field(v, "allocation",
            [&](const json& x) { ReadAllocation(r, x, c.status.allocation.emplace()); });
    r.Field(v, "reservedFor", [&](const json& x) {
      r.Each(x, [&](const json& e) {
        ResourceClaimConsumerReference& ref = c.status.reserved_for.emplace_back();
        r.Field(e, "apiGroup", [&](const json& y) { ref.api_group = r.Str(y); });
        r.Field(e, "resource", [&](const json& y) { ref.resource = r.Str(y); });
        r.Field(e, "name", [&](const json& y) { ref.name = r.Str(y); });
        r.Field(e, "uid", [&](const json& y) { ref.uid = r.Str(y); });
      });
    });
    r.Field(v, "devices", [&](const json& x) {
      r.Each(x, [&](const json& e) {
        AllocatedDeviceStatus& s = c.status.devices.emplace_back();
        r.Field(e, "driver", [&](const json& y) { s.driver = r.Str(y); });
        r.Field(e, "pool", [&](const json& y) { s.pool = r.Str(y); });
        r.Field(e, "device", [&](const json& y) { s.device = r.Str(y); });
        r.Field(e, "shareID", [&](const json& y) { s.share_id = r.Str(y); });
      });
    });
  });
}

void ReadAttribute(Reader& r, const json& j, DeviceAttribute& a) {
  r.Field(j, "int", [&](const json& x) { a.int_value = r.Int(x); });
  r.Field(j, "bool", [&](const json& x) { a.bool_value = r.Bool(x); });
  r.Field(j, "string", [&](const json& x) { a.string_value = r.Str(x); });
  r.Field(j, "version", [&](const json& x) { a.version_value = r.Str(x); });
}

void ReadCapacity(Reader& r, const json& j, DeviceCapacity& c) {
  r.Field(j, "value", [&](const json& x) { c.value = r.Qty(x); });
  r.Field(j, "requestPolicy", [&](const json& p) {
    CapacityRequestPolicy& pol = c.request_policy.emplace();
    r.Field(p, "default", [&](const json& x) { pol.default_value = r.Qty(x); });
    r.Field(p, "validValues", [&](const json& x) {
      r.Each(x, [&](const json& e) { pol.valid_values.push_back(r.Qty(e)); });
    });
    r.Field(p, "validRange", [&](const json& x) {
      CapacityRequestPolicyRange& rng = pol.valid_range.emplace();
      r.Field(x, "min", [&](const json& y) { rng.min = r.Qty(y); });
      r.Field(x, "max", [&](const json& y) { rng.max = r.Qty(y); });
      r.Field(x, "step", [&](const json& y) { rng.step = r.Qty(y); });
    });
  });
}

void ReadDevice(Reader& r, const json& j, Device& d) {
  r.Field(j, "name", [&](const json& x) { d.name = r.Str(x); });
  r.Field(j, "attributes", [&](const json& x) {
    r.Entries(x,
              [&](const std::string& k, const json& v) { ReadAttribute(r, v, d.attributes[k]); });
  });
  r.Field(j, "capacity", [&](const json& x) {
    r.Entries(x, [&](const std::string& k, const json& v) { ReadCapacity(r, v, d.capacity[k]); });
  });
  r.Field(j, "consumesCounters", [&](const json& x) {
    r.Each(x, [&](const json& e) {
      DeviceCounterConsumption& c = d.consumes_counters.emplace_back();
      r.Field(e, "counterSet", [&](const json& y) { c.counter_set = r.Str(y); });
      r.Field(e, "counters", [&](const json& y) { c.counters = ReadCounters(r, y); });
    });
  });
  r.Field(j, "nodeName", [&](const json& x) { d.node_name = r.Str(x); });
  r.Field(j, "nodeSelector",
          [&](const json& x) { ReadNodeSelector(r, x, d.node_selector.emplace()); });
  r.Field(j, "allNodes", [&](const json& x) { d.all_nodes = r.Bool(x); });
  r.Field(j, "taints", [&](const json& x) {
    r.Each(x, [&](const json& e) {
      DeviceTaint& t = d.taints.emplace_back();
      r.Field(e, "key", [&](const json& y) { t.key = r.Str(y); });
      r.Field(e, "value", [&](const json& y) { t.value = r.Str(y); });
      r.Field(e, "effect", [&](const json& y) { t.effect = r.Str(y); });
      r.Field(e, "timeAdded", [&](const json& y) { t.time_added = r.Time(y); });
    });
  });
  r.Field(j, "bindsToNode", [&](const json& x) { d.binds_to_node = r.Bool(x); });
  r.Field(j, "bindingConditions", [&](const json& x) { d.binding_conditions = r.StrList(x); });
  r.Field(j, "bindingFailureConditions",
          [&](const json& x) { d.binding_failure_conditions = r.StrList(x); });
  r.Field(j, "allowMultipleAllocations",
          [&](const json& x) { d.allow_multiple_allocations = r.Bool(x); });
}

void ReadSlice(Reader& r, const json& doc, ResourceSlice& s) {
  r.Field(doc, "spec", [&](const json& v) {
    auto& sp = s.spec;
    r.Field(v, "driver", [&](const json& x) { sp.driver = r.Str(x); });
    r.Field(v, "pool", [&](const json& p) {
      r.Field(p, "name", [&](const json& x) { sp.pool.name = r.Str(x); });
      r.Field(p, "generation", [&](const json& x) { sp.pool.generation = r.Int(x); });
      r.Field(p, "resourceSliceCount",
              [&](const json& x) { sp.pool.resource_slice_count = r.Int(x); });
    });
    r.Field(v, "nodeName", [&](const json& x) { sp.node_name = r.Str(x); });
    r.Field(v, "nodeSelector",
            [&](const json& x) { ReadNodeSelector(r, x, sp.node_selector.emplace()); });
    r.Field(v, "allNodes", [&](const json& x) { sp.all_nodes = r.Bool(x); });
    r.Field(v, "perDeviceNodeSelection",
            [&](const json& x) { sp.per_device_node_selection = r.Bool(x); });
    r.Field(v, "devices", [&](const json& x) {
      r.Each(x, [&](const json& e) { ReadDevice(r, e, sp.devices.emplace_back()); });
    });
    r.Field(v, "sharedCounters", [&](const json& x) {
      r.Each(x, [&](const json& e) {
        CounterSet& c = sp.shared_counters.emplace_back();
        r.Field(e, "name", [&](const json& y) { c.name = r.Str(y); });
        r.Field(e, "counters", [&](const json& y) { c.counters = ReadCounters(r, y); });
      });
    });
  });
}

}  // namespace

std::optional<Result<Object>> DecodeResourceKind(const std::string& kind, const RawObject& raw,
                                                 const RawObject& keep, std::string_view where) {
  const json& doc = *raw;
  if (kind == "DeviceClass") {
    return Share(DecodeWith<DeviceClass>(doc, where,
                                         [&](Reader& r, DeviceClass& c) {
                                           r.Field(doc, "spec", [&](const json& v) {
                                             auto& s = c.spec;
                                             r.Field(v, "selectors", [&](const json& x) {
                                               ReadSelectors(r, x, s.selectors);
                                             });
                                             r.Field(v, "config", [&](const json& x) {
                                               r.Each(x, [&](const json& e) {
                                                 ReadOpaque(r, e, s.config.emplace_back().opaque);
                                               });
                                             });
                                             r.Field(v, "extendedResourceName", [&](const json& x) {
                                               s.extended_resource_name = r.Str(x);
                                             });
                                           });
                                         }),
                 keep);
  }
  if (kind == "ResourceClaim") {
    return Share(DecodeWith<ResourceClaim>(
                     doc, where, [&](Reader& r, ResourceClaim& c) { ReadClaim(r, doc, c); }),
                 keep);
  }
  if (kind == "ResourceClaimTemplate") {
    return Share(
        DecodeWith<ResourceClaimTemplate>(
            doc, where,
            [&](Reader& r, ResourceClaimTemplate& t) {
              if (t.metadata.namespace_.empty()) t.metadata.namespace_ = "default";
              r.Field(doc, "spec", [&](const json& v) {
                r.Field(v, "metadata", [&](const json& x) { ReadMeta(r, x, t.spec.metadata); });
                r.Field(v, "spec", [&](const json& x) { ReadClaimSpec(r, x, t.spec.devices); });
              });
            }),
        keep);
  }
  if (kind == "ResourceSlice") {
    return Share(DecodeWith<ResourceSlice>(
                     doc, where, [&](Reader& r, ResourceSlice& s) { ReadSlice(r, doc, s); }),
                 keep);
  }
  return std::nullopt;
}

}  // namespace berth::codec
