// Encoders: typed fields written over the raw document, so unmodeled fields survive.

#include <string>
#include <utility>
#include <variant>

#include "api/codec.h"
#include "api/codec_internal.h"

namespace berth {
namespace {

using codec::Obj;
using codec::SetStr;
using nlohmann::json;

template <class Optional>
void SetOptStr(json& obj, const char* key, const Optional& v) {
  if (v) {
    obj[key] = *v;
  } else {
    obj.erase(key);
  }
}

// Booleans and integers at their zero value are written only if the document already had them.
void SetBool(json& obj, const char* key, bool v) {
  if (v || obj.contains(key)) obj[key] = v;
}

void SetInt(json& obj, const char* key, int64_t v) {
  if (v != 0 || obj.contains(key)) obj[key] = v;
}

template <class T>
void SetOptInt(json& obj, const char* key, const std::optional<T>& v) {
  if (v) {
    obj[key] = *v;
  } else {
    obj.erase(key);
  }
}

void SetStrList(json& obj, const char* key, const std::vector<std::string>& v) {
  if (v.empty()) {
    obj.erase(key);
  } else {
    obj[key] = v;
  }
}

void SetStrMap(json& obj, const char* key, const Labels& m) {
  if (m.empty()) {
    obj.erase(key);
    return;
  }
  json out = json::object();
  for (const auto& [k, v] : m) out[k] = v;
  obj[key] = std::move(out);
}

void SetTime(json& obj, const char* key, UnixTime t) {
  if (t == 0) {
    obj.erase(key);
  } else {
    obj[key] = FormatTimestamp(t);
  }
}

// Keeps the document's own spelling of a quantity when it still denotes the same amount.
void SetResources(json& obj, const char* key, const ResourceList& list) {
  if (list.empty()) {
    obj.erase(key);
    return;
  }
  json old = obj.contains(key) && obj[key].is_object() ? std::move(obj[key]) : json::object();
  json out = json::object();
  for (const auto& [name, q] : list) {
    auto it = old.find(name);
    if (it != old.end() && it->is_string()) {
      auto parsed = Quantity::Parse(it->get_ref<const std::string&>());
      if (parsed.ok() && parsed.value() == q) {
        out[name] = std::move(*it);
        continue;
      }
    }
    out[name] = q.String();
  }
  obj[key] = std::move(out);
}

// Writes `items` over the list at `key`, element by element, so that unmodeled fields of each
// element survive; an empty list removes the key.
template <class T, class Fn>
void SetList(json& obj, const char* key, const T& items, Fn&& write) {
  if (items.empty()) {
    obj.erase(key);
    return;
  }
  json& arr = obj[key];
  if (!arr.is_array()) arr = json::array();
  while (arr.size() > items.size()) arr.erase(arr.size() - 1);
  while (arr.size() < items.size()) arr.push_back(json::object());
  for (size_t i = 0; i < items.size(); ++i) {
    if (!arr[i].is_object()) arr[i] = json::object();
    write(arr[i], items[i]);
  }
}

void WriteMeta(json& doc, const ObjectMeta& m) {
  json& j = Obj(doc, "metadata");
  SetStr(j, "name", m.name);
  SetStr(j, "namespace", m.namespace_);
  SetStr(j, "uid", m.uid);
  SetStr(j, "resourceVersion", m.resource_version);
  SetStrMap(j, "labels", m.labels);
  SetStrMap(j, "annotations", m.annotations);
  SetTime(j, "creationTimestamp", m.creation_timestamp);
  if (m.deletion_timestamp) {
    j["deletionTimestamp"] = FormatTimestamp(*m.deletion_timestamp);
  } else {
    j.erase("deletionTimestamp");
  }
  SetList(j, "ownerReferences", m.owner_references, [](json& o, const OwnerReference& r) {
    SetStr(o, "apiVersion", r.api_version);
    SetStr(o, "kind", r.kind);
    SetStr(o, "name", r.name);
    SetStr(o, "uid", r.uid);
    SetBool(o, "controller", r.controller);
  });
}

void WriteLabelSelector(json& j, const LabelSelector& s) {
  SetStrMap(j, "matchLabels", s.match_labels);
  SetList(j, "matchExpressions", s.match_expressions,
          [](json& e, const LabelSelectorRequirement& r) {
            e["key"] = r.key;
            e["operator"] = r.op;
            SetStrList(e, "values", r.values);
          });
}

void SetSelector(json& obj, const char* key, const std::optional<LabelSelector>& s) {
  if (!s) {
    obj.erase(key);
    return;
  }
  WriteLabelSelector(Obj(obj, key), *s);
}

void WriteNodeSelectorTerm(json& j, const NodeSelectorTerm& t) {
  auto req = [](json& e, const NodeSelectorRequirement& r) {
    e["key"] = r.key;
    e["operator"] = r.op;
    SetStrList(e, "values", r.values);
  };
  SetList(j, "matchExpressions", t.match_expressions, req);
  SetList(j, "matchFields", t.match_fields, req);
}

void WriteNodeSelector(json& j, const NodeSelector& s) {
  if (s.terms.empty()) {
    j["nodeSelectorTerms"] = json::array();
    return;
  }
  SetList(j, "nodeSelectorTerms", s.terms, WriteNodeSelectorTerm);
}

void WriteNodeAffinity(json& j, const NodeAffinity& a) {
  if (a.required) {
    WriteNodeSelector(Obj(j, "requiredDuringSchedulingIgnoredDuringExecution"), *a.required);
  } else {
    j.erase("requiredDuringSchedulingIgnoredDuringExecution");
  }
  SetList(j, "preferredDuringSchedulingIgnoredDuringExecution", a.preferred,
          [](json& e, const PreferredSchedulingTerm& t) {
            e["weight"] = t.weight;
            WriteNodeSelectorTerm(Obj(e, "preference"), t.preference);
          });
}

void WritePodAffinityTerm(json& j, const PodAffinityTerm& t) {
  SetSelector(j, "labelSelector", t.label_selector);
  SetStrList(j, "namespaces", t.namespaces);
  SetStr(j, "topologyKey", t.topology_key);
  SetSelector(j, "namespaceSelector", t.namespace_selector);
  SetStrList(j, "matchLabelKeys", t.match_label_keys);
  SetStrList(j, "mismatchLabelKeys", t.mismatch_label_keys);
}

void WritePodAffinity(json& j, const PodAffinity& a) {
  SetList(j, "requiredDuringSchedulingIgnoredDuringExecution", a.required, WritePodAffinityTerm);
  SetList(j, "preferredDuringSchedulingIgnoredDuringExecution", a.preferred,
          [](json& e, const WeightedPodAffinityTerm& w) {
            e["weight"] = w.weight;
            WritePodAffinityTerm(Obj(e, "podAffinityTerm"), w.term);
          });
}

template <class T, class Fn>
void SetOptObj(json& obj, const char* key, const std::optional<T>& v, Fn&& write) {
  if (!v) {
    obj.erase(key);
    return;
  }
  write(Obj(obj, key), *v);
}

void WriteTopologySpreadConstraint(json& j, const TopologySpreadConstraint& c) {
  j["maxSkew"] = c.max_skew;
  SetStr(j, "topologyKey", c.topology_key);
  SetStr(j, "whenUnsatisfiable", c.when_unsatisfiable);
  SetSelector(j, "labelSelector", c.label_selector);
  SetOptInt(j, "minDomains", c.min_domains);
  SetOptStr(j, "nodeAffinityPolicy", c.node_affinity_policy);
  SetOptStr(j, "nodeTaintsPolicy", c.node_taints_policy);
  SetStrList(j, "matchLabelKeys", c.match_label_keys);
}

void WriteContainer(json& j, const Container& c) {
  SetStr(j, "name", c.name);
  SetStr(j, "image", c.image);
  if (c.resources.requests.empty() && c.resources.limits.empty()) {
    if (j.contains("resources") && j["resources"].is_object()) {
      j["resources"].erase("requests");
      j["resources"].erase("limits");
    }
  } else {
    json& r = Obj(j, "resources");
    SetResources(r, "requests", c.resources.requests);
    SetResources(r, "limits", c.resources.limits);
  }
  SetList(j, "ports", c.ports, [](json& p, const ContainerPort& port) {
    SetStr(p, "name", port.name);
    SetInt(p, "containerPort", port.container_port);
    SetInt(p, "hostPort", port.host_port);
    if (port.protocol != "TCP" || p.contains("protocol")) p["protocol"] = port.protocol;
    SetStr(p, "hostIP", port.host_ip);
  });
  SetOptStr(j, "restartPolicy", c.restart_policy);
}

void WriteVolume(json& j, const Volume& v) {
  SetStr(j, "name", v.name);
  SetOptObj(j, "persistentVolumeClaim", v.persistent_volume_claim,
            [](json& o, const Volume::Pvc& s) {
              o["claimName"] = s.claim_name;
              SetBool(o, "readOnly", s.read_only);
            });
  SetOptObj(j, "gcePersistentDisk", v.gce_persistent_disk, [](json& o, const Volume::GcePd& s) {
    o["pdName"] = s.pd_name;
    SetBool(o, "readOnly", s.read_only);
  });
  SetOptObj(j, "awsElasticBlockStore", v.aws_elastic_block_store,
            [](json& o, const Volume::AwsEbs& s) {
              o["volumeID"] = s.volume_id;
              SetBool(o, "readOnly", s.read_only);
            });
  SetOptObj(j, "rbd", v.rbd, [](json& o, const Volume::Rbd& s) {
    SetStrList(o, "monitors", s.monitors);
    if (s.pool != "rbd" || o.contains("pool")) o["pool"] = s.pool;
    o["image"] = s.image;
    SetBool(o, "readOnly", s.read_only);
  });
  SetOptObj(j, "iscsi", v.iscsi, [](json& o, const Volume::Iscsi& s) {
    o["targetPortal"] = s.target_portal;
    o["iqn"] = s.iqn;
    o["lun"] = s.lun;
    SetBool(o, "readOnly", s.read_only);
  });
  SetOptObj(j, "csi", v.csi, [](json& o, const Volume::Csi& s) { o["driver"] = s.driver; });
  if (v.ephemeral) {
    Obj(j, "ephemeral");
  } else {
    j.erase("ephemeral");
  }
}

json Start(const RawObject& raw, const char* api_version, const char* kind) {
  json doc = raw && raw->is_object() ? *raw : json::object();
  if (!doc.contains("apiVersion")) doc["apiVersion"] = api_version;
  if (!doc.contains("kind")) doc["kind"] = kind;
  return doc;
}

json EncodeNamespace(const Namespace& o) {
  json doc = Start(o.raw, "v1", "Namespace");
  WriteMeta(doc, o.metadata);
  return doc;
}

json EncodeService(const Service& o) {
  json doc = Start(o.raw, "v1", "Service");
  WriteMeta(doc, o.metadata);
  SetStrMap(Obj(doc, "spec"), "selector", o.selector);
  return doc;
}

json EncodeRC(const ReplicationController& o) {
  json doc = Start(o.raw, "v1", "ReplicationController");
  WriteMeta(doc, o.metadata);
  SetStrMap(Obj(doc, "spec"), "selector", o.selector);
  return doc;
}

json EncodeReplicaSet(const ReplicaSet& o) {
  json doc = Start(o.raw, "apps/v1", "ReplicaSet");
  WriteMeta(doc, o.metadata);
  SetSelector(Obj(doc, "spec"), "selector", o.selector);
  return doc;
}

json EncodeStatefulSet(const StatefulSet& o) {
  json doc = Start(o.raw, "apps/v1", "StatefulSet");
  WriteMeta(doc, o.metadata);
  SetSelector(Obj(doc, "spec"), "selector", o.selector);
  return doc;
}

json EncodePV(const PersistentVolume& o) {
  json doc = Start(o.raw, "v1", "PersistentVolume");
  WriteMeta(doc, o.metadata);
  json& s = Obj(doc, "spec");
  SetResources(s, "capacity", o.spec.capacity);
  SetStrList(s, "accessModes", o.spec.access_modes);
  SetStr(s, "storageClassName", o.spec.storage_class_name);
  if (o.spec.node_affinity) {
    WriteNodeSelector(Obj(Obj(s, "nodeAffinity"), "required"), *o.spec.node_affinity);
  } else if (s.contains("nodeAffinity") && s["nodeAffinity"].is_object()) {
    s["nodeAffinity"].erase("required");
  }
  SetOptObj(s, "claimRef", o.spec.claim_ref,
            [](json& c, const PersistentVolume::Spec::ClaimRef& r) {
              SetStr(c, "namespace", r.namespace_);
              SetStr(c, "name", r.name);
              SetStr(c, "uid", r.uid);
            });
  SetStr(s, "volumeMode", o.spec.volume_mode);
  if (!o.spec.csi_driver.empty() || !o.spec.csi_volume_handle.empty()) {
    json& c = Obj(s, "csi");
    c["driver"] = o.spec.csi_driver;
    c["volumeHandle"] = o.spec.csi_volume_handle;
  }
  if (!o.spec.gce_pd_name.empty()) Obj(s, "gcePersistentDisk")["pdName"] = o.spec.gce_pd_name;
  if (!o.spec.aws_volume_id.empty()) {
    Obj(s, "awsElasticBlockStore")["volumeID"] = o.spec.aws_volume_id;
  }
  SetStr(Obj(doc, "status"), "phase", o.status.phase);
  return doc;
}

json EncodePVC(const PersistentVolumeClaim& o) {
  json doc = Start(o.raw, "v1", "PersistentVolumeClaim");
  WriteMeta(doc, o.metadata);
  json& s = Obj(doc, "spec");
  SetStrList(s, "accessModes", o.spec.access_modes);
  SetOptStr(s, "storageClassName", o.spec.storage_class_name);
  SetStr(s, "volumeName", o.spec.volume_name);
  SetStr(s, "volumeMode", o.spec.volume_mode);
  if (!o.spec.requests.empty() || s.contains("resources")) {
    SetResources(Obj(s, "resources"), "requests", o.spec.requests);
  }
  SetSelector(s, "selector", o.spec.selector);
  SetStr(Obj(doc, "status"), "phase", o.status.phase);
  return doc;
}

json EncodeStorageClass(const StorageClass& o) {
  json doc = Start(o.raw, "storage.k8s.io/v1", "StorageClass");
  WriteMeta(doc, o.metadata);
  SetStr(doc, "provisioner", o.provisioner);
  SetOptStr(doc, "volumeBindingMode", o.volume_binding_mode);
  SetList(doc, "allowedTopologies", o.allowed_topologies,
          [](json& term, const std::vector<TopologySelectorRequirement>& reqs) {
            SetList(term, "matchLabelExpressions", reqs,
                    [](json& e, const TopologySelectorRequirement& r) {
                      e["key"] = r.key;
                      e["values"] = r.values;
                    });
          });
  return doc;
}

json EncodeCSINode(const CSINode& o) {
  json doc = Start(o.raw, "storage.k8s.io/v1", "CSINode");
  WriteMeta(doc, o.metadata);
  json& s = Obj(doc, "spec");
  SetList(s, "drivers", o.drivers, [](json& d, const CSINode::Driver& drv) {
    d["name"] = drv.name;
    d["nodeID"] = drv.node_id;
    if (drv.allocatable_count) {
      Obj(d, "allocatable")["count"] = *drv.allocatable_count;
    } else {
      d.erase("allocatable");
    }
    SetStrList(d, "topologyKeys", drv.topology_keys);
  });
  if (o.drivers.empty()) s["drivers"] = json::array();
  return doc;
}

json EncodePDB(const PodDisruptionBudget& o) {
  json doc = Start(o.raw, "policy/v1", "PodDisruptionBudget");
  WriteMeta(doc, o.metadata);
  SetSelector(Obj(doc, "spec"), "selector", o.selector);
  json& st = Obj(doc, "status");
  st["disruptionsAllowed"] = o.disruptions_allowed;
  if (o.disrupted_pods.empty()) {
    st.erase("disruptedPods");
  } else {
    json old = st.contains("disruptedPods") && st["disruptedPods"].is_object()
                   ? std::move(st["disruptedPods"])
                   : json::object();
    json out = json::object();
    for (const auto& [name, present] : o.disrupted_pods) {
      if (!present) continue;
      auto it = old.find(name);
      out[name] = it != old.end() ? std::move(*it) : json(FormatTimestamp(0));
    }
    st["disruptedPods"] = std::move(out);
  }
  return doc;
}

json EncodePriorityClass(const PriorityClass& o) {
  json doc = Start(o.raw, "scheduling.k8s.io/v1", "PriorityClass");
  WriteMeta(doc, o.metadata);
  doc["value"] = o.value;
  SetBool(doc, "globalDefault", o.global_default);
  SetOptStr(doc, "preemptionPolicy", o.preemption_policy);
  return doc;
}

// Encoders of the gang objects write back only their metadata: the scheduler never changes
// their specs, and their status is written by a controller from a patch of its own.
json EncodePodGroup(const PodGroup& o) {
  json doc = Start(o.raw, "scheduling.x-k8s.io/v1alpha1", "PodGroup");
  WriteMeta(doc, o.metadata);
  json& spec = Obj(doc, "spec");
  spec["minMember"] = o.spec.min_member;
  return doc;
}

json EncodeSchedulingPodGroup(const SchedulingPodGroup& o) {
  json doc = Start(o.raw, "scheduling.k8s.io/v1beta1", "PodGroup");
  WriteMeta(doc, o.metadata);
  return doc;
}

}  // namespace

namespace codec {
void WriteObjectMeta(nlohmann::json& doc, const ObjectMeta& m) { WriteMeta(doc, m); }
void WriteNodeSelectorDoc(nlohmann::json& j, const NodeSelector& s) { WriteNodeSelector(j, s); }
}  // namespace codec

nlohmann::json EncodeNodeAffinity(const NodeAffinity& a) {
  json j = json::object();
  WriteNodeAffinity(j, a);
  return j;
}

nlohmann::json EncodeLabelSelector(const LabelSelector& s) {
  json j = json::object();
  WriteLabelSelector(j, s);
  return j;
}

nlohmann::json EncodeTopologySpreadConstraint(const TopologySpreadConstraint& c) {
  json j = json::object();
  WriteTopologySpreadConstraint(j, c);
  return j;
}

nlohmann::json EncodePod(const Pod& pod) {
  json doc = Start(pod.raw, "v1", "Pod");
  WriteMeta(doc, pod.metadata);
  json& s = Obj(doc, "spec");
  const PodSpec& p = pod.spec;
  SetStr(s, "nodeName", p.node_name);
  SetStr(s, "schedulerName", p.scheduler_name);
  SetOptInt(s, "priority", p.priority);
  SetStr(s, "priorityClassName", p.priority_class_name);
  SetOptStr(s, "preemptionPolicy", p.preemption_policy);
  if (p.containers.empty()) {
    s["containers"] = json::array();
  } else {
    SetList(s, "containers", p.containers, WriteContainer);
  }
  SetList(s, "initContainers", p.init_containers, WriteContainer);
  SetResources(s, "overhead", p.overhead);
  if (p.resources) {
    json& r = Obj(s, "resources");
    SetResources(r, "requests", p.resources->requests);
    SetResources(r, "limits", p.resources->limits);
  }
  SetStrMap(s, "nodeSelector", p.node_selector);
  if (p.affinity) {
    json& a = Obj(s, "affinity");
    SetOptObj(a, "nodeAffinity", p.affinity->node_affinity, WriteNodeAffinity);
    SetOptObj(a, "podAffinity", p.affinity->pod_affinity, WritePodAffinity);
    SetOptObj(a, "podAntiAffinity", p.affinity->pod_anti_affinity, WritePodAffinity);
  } else {
    s.erase("affinity");
  }
  SetList(s, "tolerations", p.tolerations, [](json& t, const Toleration& tol) {
    SetStr(t, "key", tol.key);
    SetStr(t, "operator", tol.op);
    SetStr(t, "value", tol.value);
    SetStr(t, "effect", tol.effect);
    SetOptInt(t, "tolerationSeconds", tol.toleration_seconds);
  });
  SetList(s, "topologySpreadConstraints", p.topology_spread_constraints,
          WriteTopologySpreadConstraint);
  SetList(s, "volumes", p.volumes, WriteVolume);
  SetList(s, "schedulingGates", p.scheduling_gates,
          [](json& g, const std::string& name) { g["name"] = name; });
  if (p.scheduling_group) {
    Obj(s, "schedulingGroup")["podGroupName"] = *p.scheduling_group;
  } else {
    s.erase("schedulingGroup");
  }
  SetBool(s, "hostNetwork", p.host_network);

  json& st = Obj(doc, "status");
  SetStr(st, "phase", pod.status.phase);
  SetStr(st, "nominatedNodeName", pod.status.nominated_node_name);
  SetTime(st, "startTime", pod.status.start_time);
  SetList(st, "conditions", pod.status.conditions, [](json& c, const PodCondition& cond) {
    SetStr(c, "type", cond.type);
    SetStr(c, "status", cond.status);
    SetStr(c, "reason", cond.reason);
    SetStr(c, "message", cond.message);
  });
  if (st.empty()) doc.erase("status");
  return doc;
}

nlohmann::json EncodeNode(const Node& node) {
  json doc = Start(node.raw, "v1", "Node");
  WriteMeta(doc, node.metadata);
  json& s = Obj(doc, "spec");
  SetBool(s, "unschedulable", node.spec.unschedulable);
  SetList(s, "taints", node.spec.taints, [](json& t, const Taint& taint) {
    t["key"] = taint.key;
    SetStr(t, "value", taint.value);
    t["effect"] = taint.effect;
  });
  json& st = Obj(doc, "status");
  SetResources(st, "capacity", node.status.capacity);
  SetResources(st, "allocatable", node.status.allocatable);
  SetList(st, "images", node.status.images, [](json& i, const ContainerImage& img) {
    i["names"] = img.names;
    SetInt(i, "sizeBytes", img.size_bytes);
  });
  return doc;
}

nlohmann::json EncodeObject(const Object& obj) {
  return std::visit(
      [](const auto& o) -> json {
        using T = std::decay_t<decltype(o)>;
        if constexpr (std::is_same_v<T, std::shared_ptr<const UnknownObject>>) {
          return o && o->raw ? *o->raw : json::object();
        } else {
          using V = std::remove_const_t<typename T::element_type>;
          if (!o) return json::object();
          if constexpr (std::is_same_v<V, Pod>) return EncodePod(*o);
          if constexpr (std::is_same_v<V, Node>) return EncodeNode(*o);
          if constexpr (std::is_same_v<V, Namespace>) return EncodeNamespace(*o);
          if constexpr (std::is_same_v<V, Service>) return EncodeService(*o);
          if constexpr (std::is_same_v<V, ReplicationController>) return EncodeRC(*o);
          if constexpr (std::is_same_v<V, ReplicaSet>) return EncodeReplicaSet(*o);
          if constexpr (std::is_same_v<V, StatefulSet>) return EncodeStatefulSet(*o);
          if constexpr (std::is_same_v<V, PersistentVolume>) return EncodePV(*o);
          if constexpr (std::is_same_v<V, PersistentVolumeClaim>) return EncodePVC(*o);
          if constexpr (std::is_same_v<V, StorageClass>) return EncodeStorageClass(*o);
          if constexpr (std::is_same_v<V, CSINode>) return EncodeCSINode(*o);
          if constexpr (std::is_same_v<V, PodDisruptionBudget>) return EncodePDB(*o);
          if constexpr (std::is_same_v<V, PriorityClass>) return EncodePriorityClass(*o);
          if constexpr (std::is_same_v<V, PodGroup>) return EncodePodGroup(*o);
          if constexpr (std::is_same_v<V, SchedulingPodGroup>) return EncodeSchedulingPodGroup(*o);
          if constexpr (std::is_same_v<V, DeviceClass>) return codec::EncodeDeviceClass(*o);
          if constexpr (std::is_same_v<V, ResourceClaim>) return codec::EncodeResourceClaim(*o);
          if constexpr (std::is_same_v<V, ResourceClaimTemplate>)
            return codec::EncodeResourceClaimTemplate(*o);
          if constexpr (std::is_same_v<V, ResourceSlice>) return codec::EncodeResourceSlice(*o);
          return json::object();
        }
      },
      obj);
}

}  // namespace berth
