// Encoding of the resource.k8s.io/v1 kinds. The typed fields are written over the object's raw
// document; lists (requests, devices, results...) are written whole from the typed values.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "api/codec_internal.h"
#include "berth/api/resource_claims.h"

namespace berth::codec {
namespace {

using nlohmann::json;

void SetStrList(json& obj, const char* key, const std::vector<std::string>& v) {
  if (v.empty()) {
    obj.erase(key);
  } else {
    obj[key] = v;
  }
}

template <class T, class Fn>
void SetArray(json& obj, const char* key, const std::vector<T>& items, Fn&& write) {
  if (items.empty()) {
    obj.erase(key);
    return;
  }
  json arr = json::array();
  for (const T& item : items) {
    json e = json::object();
    write(e, item);
    arr.push_back(std::move(e));
  }
  obj[key] = std::move(arr);
}

json Quantities(const FlatMap<std::string, Quantity>& m) {
  json out = json::object();
  for (const auto& [k, q] : m) out[k] = q.String();
  return out;
}

json CountersJson(const Counters& m) {
  json out = json::object();
  for (const auto& [k, q] : m) out[k] = json{{"value", q.String()}};
  return out;
}

json Start(const RawObject& raw, const char* kind) {
  json doc = raw && raw->is_object() ? *raw : json::object();
  if (!doc.contains("apiVersion")) doc["apiVersion"] = "resource.k8s.io/v1";
  if (!doc.contains("kind")) doc["kind"] = kind;
  return doc;
}

void WriteSelectors(json& obj, const std::vector<DeviceSelector>& s) {
  SetArray(obj, "selectors", s, [](json& e, const DeviceSelector& x) {
    e["cel"] = json{{"expression", x.cel_expression}};
  });
}

void WriteOpaque(json& e, const OpaqueDeviceConfiguration& o) {
  json& op = Obj(e, "opaque");
  op["driver"] = o.driver;
  if (o.parameters) {
    op["parameters"] = *o.parameters;
  } else {
    op.erase("parameters");
  }
}

void WriteTolerations(json& obj, const std::vector<DeviceToleration>& t) {
  SetArray(obj, "tolerations", t, [](json& e, const DeviceToleration& x) {
    SetStr(e, "key", x.key);
    SetStr(e, "operator", x.op);
    SetStr(e, "value", x.value);
    SetStr(e, "effect", x.effect);
    if (x.toleration_seconds) e["tolerationSeconds"] = *x.toleration_seconds;
  });
}

void WriteExact(json& e, const ExactDeviceRequest& q, bool sub) {
  e["deviceClassName"] = q.device_class_name;
  WriteSelectors(e, q.selectors);
  SetStr(e, "allocationMode", q.allocation_mode);
  if (q.allocation_mode != kAllocationModeAll) {
    e["count"] = q.count;
  } else {
    e.erase("count");
  }
  if (!sub && q.admin_access) e["adminAccess"] = true;
  WriteTolerations(e, q.tolerations);
  if (!q.capacity_requests.empty())
    e["capacity"] = json{{"requests", Quantities(q.capacity_requests)}};
}

void WriteClaimSpec(json& spec, const ResourceClaimSpec& s) {
  json& d = Obj(spec, "devices");
  SetArray(d, "requests", s.requests, [](json& e, const DeviceRequest& q) {
    e["name"] = q.name;
    if (q.exactly) WriteExact(Obj(e, "exactly"), *q.exactly, false);
    SetArray(e, "firstAvailable", q.first_available, [](json& f, const DeviceSubRequest& sub) {
      f["name"] = sub.name;
      WriteExact(f, sub.request, true);
    });
  });
  SetArray(d, "constraints", s.constraints, [](json& e, const DeviceConstraint& c) {
    SetStrList(e, "requests", c.requests);
    if (c.match_attribute) e["matchAttribute"] = *c.match_attribute;
    if (c.distinct_attribute) e["distinctAttribute"] = *c.distinct_attribute;
  });
  SetArray(d, "config", s.config, [](json& e, const DeviceClaimConfiguration& c) {
    SetStrList(e, "requests", c.requests);
    WriteOpaque(e, c.opaque);
  });
}

json NodeSelectorJson(const NodeSelector& s) {
  json out = json::object();
  WriteNodeSelectorDoc(out, s);
  return out;
}

void WriteAllocation(json& a, const AllocationResult& r) {
  json& d = Obj(a, "devices");
  SetArray(d, "results", r.results, [](json& e, const DeviceRequestAllocationResult& x) {
    e["request"] = x.request;
    e["driver"] = x.driver;
    e["pool"] = x.pool;
    e["device"] = x.device;
    if (x.admin_access) e["adminAccess"] = *x.admin_access;
    WriteTolerations(e, x.tolerations);
    SetStrList(e, "bindingConditions", x.binding_conditions);
    SetStrList(e, "bindingFailureConditions", x.binding_failure_conditions);
    if (x.share_id) e["shareID"] = *x.share_id;
    if (!x.consumed_capacity.empty()) e["consumedCapacity"] = Quantities(x.consumed_capacity);
  });
  SetArray(d, "config", r.config, [](json& e, const DeviceAllocationConfiguration& c) {
    e["source"] = c.source;
    SetStrList(e, "requests", c.requests);
    WriteOpaque(e, c.opaque);
  });
  if (r.node_selector) {
    a["nodeSelector"] = NodeSelectorJson(*r.node_selector);
  } else {
    a.erase("nodeSelector");
  }
  if (r.allocation_timestamp != 0) {
    a["allocationTimestamp"] = FormatTimestamp(r.allocation_timestamp);
  } else {
    a.erase("allocationTimestamp");
  }
}

json AttributeJson(const DeviceAttribute& a) {
  if (a.int_value) return json{{"int", *a.int_value}};
  if (a.bool_value) return json{{"bool", *a.bool_value}};
  if (a.string_value) return json{{"string", *a.string_value}};
  if (a.version_value) return json{{"version", *a.version_value}};
  return json::object();
}

json CapacityJson(const DeviceCapacity& c) {
  json out = json{{"value", c.value.String()}};
  if (c.request_policy) {
    json p = json::object();
    const auto& pol = *c.request_policy;
    if (pol.default_value) p["default"] = pol.default_value->String();
    if (!pol.valid_values.empty()) {
      json v = json::array();
      for (const auto& q : pol.valid_values) v.push_back(q.String());
      p["validValues"] = std::move(v);
    }
    if (pol.valid_range) {
      json r = json{{"min", pol.valid_range->min.String()}};
      if (pol.valid_range->max) r["max"] = pol.valid_range->max->String();
      if (pol.valid_range->step) r["step"] = pol.valid_range->step->String();
      p["validRange"] = std::move(r);
    }
    out["requestPolicy"] = std::move(p);
  }
  return out;
}

void WriteDevice(json& e, const Device& d) {
  e["name"] = d.name;
  if (!d.attributes.empty()) {
    json a = json::object();
    for (const auto& [k, v] : d.attributes) a[k] = AttributeJson(v);
    e["attributes"] = std::move(a);
  }
  if (!d.capacity.empty()) {
    json c = json::object();
    for (const auto& [k, v] : d.capacity) c[k] = CapacityJson(v);
    e["capacity"] = std::move(c);
  }
  SetArray(e, "consumesCounters", d.consumes_counters,
           [](json& c, const DeviceCounterConsumption& x) {
             c["counterSet"] = x.counter_set;
             c["counters"] = CountersJson(x.counters);
           });
  if (d.node_name) e["nodeName"] = *d.node_name;
  if (d.node_selector) e["nodeSelector"] = NodeSelectorJson(*d.node_selector);
  if (d.all_nodes) e["allNodes"] = true;
  SetArray(e, "taints", d.taints, [](json& t, const DeviceTaint& x) {
    t["key"] = x.key;
    SetStr(t, "value", x.value);
    t["effect"] = x.effect;
    if (x.time_added != 0) t["timeAdded"] = FormatTimestamp(x.time_added);
  });
  if (d.binds_to_node) e["bindsToNode"] = true;
  SetStrList(e, "bindingConditions", d.binding_conditions);
  SetStrList(e, "bindingFailureConditions", d.binding_failure_conditions);
  if (d.allow_multiple_allocations) e["allowMultipleAllocations"] = true;
}

}  // namespace

nlohmann::json EncodeDeviceClass(const DeviceClass& o) {
  json doc = Start(o.raw, "DeviceClass");
  WriteObjectMeta(doc, o.metadata);
  json& s = Obj(doc, "spec");
  WriteSelectors(s, o.spec.selectors);
  SetArray(s, "config", o.spec.config,
           [](json& e, const DeviceClassConfiguration& c) { WriteOpaque(e, c.opaque); });
  if (o.spec.extended_resource_name) {
    s["extendedResourceName"] = *o.spec.extended_resource_name;
  } else {
    s.erase("extendedResourceName");
  }
  return doc;
}

nlohmann::json EncodeResourceClaim(const ResourceClaim& o) {
  json doc = Start(o.raw, "ResourceClaim");
  WriteObjectMeta(doc, o.metadata);
  WriteClaimSpec(Obj(doc, "spec"), o.spec.devices);
  json& st = Obj(doc, "status");
  if (o.status.allocation) {
    WriteAllocation(Obj(st, "allocation"), *o.status.allocation);
  } else {
    st.erase("allocation");
  }
  SetArray(st, "reservedFor", o.status.reserved_for,
           [](json& e, const ResourceClaimConsumerReference& r) {
             SetStr(e, "apiGroup", r.api_group);
             e["resource"] = r.resource;
             e["name"] = r.name;
             e["uid"] = r.uid;
           });
  // status.devices carries driver-written conditions and data the typed view leaves out, so
  // the document's own list stays unless the typed list no longer matches it in length.
  if (o.status.devices.empty()) {
    st.erase("devices");
  } else if (!st.contains("devices") || !st["devices"].is_array() ||
             st["devices"].size() != o.status.devices.size()) {
    SetArray(st, "devices", o.status.devices, [](json& e, const AllocatedDeviceStatus& d) {
      e["driver"] = d.driver;
      e["pool"] = d.pool;
      e["device"] = d.device;
      if (d.share_id) e["shareID"] = *d.share_id;
    });
  }
  if (st.empty()) doc.erase("status");
  return doc;
}

nlohmann::json EncodeResourceClaimTemplate(const ResourceClaimTemplate& o) {
  json doc = Start(o.raw, "ResourceClaimTemplate");
  WriteObjectMeta(doc, o.metadata);
  json& s = Obj(doc, "spec");
  json inner_meta = json::object();
  WriteObjectMeta(inner_meta, o.spec.metadata);
  if (inner_meta["metadata"].empty()) {
    s.erase("metadata");
  } else {
    s["metadata"] = std::move(inner_meta["metadata"]);
  }
  WriteClaimSpec(Obj(s, "spec"), o.spec.devices);
  return doc;
}

nlohmann::json EncodeResourceSlice(const ResourceSlice& o) {
  json doc = Start(o.raw, "ResourceSlice");
  WriteObjectMeta(doc, o.metadata);
  json& s = Obj(doc, "spec");
  const auto& sp = o.spec;
  s["driver"] = sp.driver;
  s["pool"] = json{{"name", sp.pool.name},
                   {"generation", sp.pool.generation},
                   {"resourceSliceCount", sp.pool.resource_slice_count}};
  s.erase("nodeName");
  s.erase("nodeSelector");
  s.erase("allNodes");
  s.erase("perDeviceNodeSelection");
  if (sp.node_name) s["nodeName"] = *sp.node_name;
  if (sp.node_selector) s["nodeSelector"] = NodeSelectorJson(*sp.node_selector);
  if (sp.all_nodes) s["allNodes"] = true;
  if (sp.per_device_node_selection) s["perDeviceNodeSelection"] = true;
  SetArray(s, "devices", sp.devices, WriteDevice);
  SetArray(s, "sharedCounters", sp.shared_counters, [](json& e, const CounterSet& c) {
    e["name"] = c.name;
    e["counters"] = CountersJson(c.counters);
  });
  return doc;
}

}  // namespace berth::codec
