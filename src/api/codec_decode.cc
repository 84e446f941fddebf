// Typed decoders: JSON documents -> objects.h structs.

#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "api/codec.h"
#include "api/codec_internal.h"

namespace berth::codec {
namespace {

using nlohmann::json;

void ReadOwnerReference(Reader& r, const json& j, OwnerReference& o) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "apiVersion", [&](const json& v) { o.api_version = r.Str(v); });
  r.Field(j, "kind", [&](const json& v) { o.kind = r.Str(v); });
  r.Field(j, "name", [&](const json& v) { o.name = r.Str(v); });
  r.Field(j, "uid", [&](const json& v) { o.uid = r.Str(v); });
  r.Field(j, "controller", [&](const json& v) { o.controller = r.Bool(v); });
}

void ReadLabelSelectorRequirement(Reader& r, const json& j, LabelSelectorRequirement& e) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "key", [&](const json& v) { e.key = r.Str(v); });
  r.Field(j, "operator", [&](const json& v) { e.op = r.Str(v); });
  r.Field(j, "values", [&](const json& v) { e.values = r.StrList(v); });
}

void ReadNodeSelectorRequirement(Reader& r, const json& j, NodeSelectorRequirement& e) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "key", [&](const json& v) { e.key = r.Str(v); });
  r.Field(j, "operator", [&](const json& v) { e.op = r.Str(v); });
  r.Field(j, "values", [&](const json& v) { e.values = r.StrList(v); });
}

void ReadNodeSelectorTerm(Reader& r, const json& j, NodeSelectorTerm& t) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "matchExpressions", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      ReadNodeSelectorRequirement(r, e, t.match_expressions.emplace_back());
    });
  });
  r.Field(j, "matchFields", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      ReadNodeSelectorRequirement(r, e, t.match_fields.emplace_back());
    });
  });
}

void ReadOptionalLabelSelector(Reader& r, const json& j, std::string_view key,
                               std::optional<LabelSelector>& out) {
  r.Field(j, key, [&](const json& v) { ReadLabelSelector(r, v, out.emplace()); });
}

void ReadPodAffinityTerm(Reader& r, const json& j, PodAffinityTerm& t) {
  if (!r.ExpectObject(j)) return;
  ReadOptionalLabelSelector(r, j, "labelSelector", t.label_selector);
  r.Field(j, "namespaces", [&](const json& v) { t.namespaces = r.StrList(v); });
  r.Field(j, "topologyKey", [&](const json& v) { t.topology_key = r.Str(v); });
  ReadOptionalLabelSelector(r, j, "namespaceSelector", t.namespace_selector);
  r.Field(j, "matchLabelKeys", [&](const json& v) { t.match_label_keys = r.StrList(v); });
  r.Field(j, "mismatchLabelKeys", [&](const json& v) { t.mismatch_label_keys = r.StrList(v); });
}

void ReadPodAffinity(Reader& r, const json& j, PodAffinity& a) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "requiredDuringSchedulingIgnoredDuringExecution", [&](const json& v) {
    r.Each(v, [&](const json& e) { ReadPodAffinityTerm(r, e, a.required.emplace_back()); });
  });
  r.Field(j, "preferredDuringSchedulingIgnoredDuringExecution", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      WeightedPodAffinityTerm& w = a.preferred.emplace_back();
      if (!r.ExpectObject(e)) return;
      r.Field(e, "weight", [&](const json& x) { w.weight = r.Int32(x); });
      r.Field(e, "podAffinityTerm", [&](const json& x) { ReadPodAffinityTerm(r, x, w.term); });
    });
  });
}

void ReadAffinity(Reader& r, const json& j, Affinity& a) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "nodeAffinity",
          [&](const json& v) { ReadNodeAffinity(r, v, a.node_affinity.emplace()); });
  r.Field(j, "podAffinity",
          [&](const json& v) { ReadPodAffinity(r, v, a.pod_affinity.emplace()); });
  r.Field(j, "podAntiAffinity",
          [&](const json& v) { ReadPodAffinity(r, v, a.pod_anti_affinity.emplace()); });
}

void ReadToleration(Reader& r, const json& j, Toleration& t) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "key", [&](const json& v) { t.key = r.Str(v); });
  r.Field(j, "operator", [&](const json& v) { t.op = r.Str(v); });
  r.Field(j, "value", [&](const json& v) { t.value = r.Str(v); });
  r.Field(j, "effect", [&](const json& v) { t.effect = r.Str(v); });
  r.Field(j, "tolerationSeconds", [&](const json& v) { t.toleration_seconds = r.Int(v); });
}

void ReadTaint(Reader& r, const json& j, Taint& t) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "key", [&](const json& v) { t.key = r.Str(v); });
  r.Field(j, "value", [&](const json& v) { t.value = r.Str(v); });
  r.Field(j, "effect", [&](const json& v) { t.effect = r.Str(v); });
}

void ReadContainer(Reader& r, const json& j, Container& c) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "name", [&](const json& v) { c.name = r.Str(v); });
  r.Field(j, "image", [&](const json& v) { c.image = r.Str(v); });
  r.Field(j, "resources", [&](const json& v) {
    r.Field(v, "requests", [&](const json& x) { c.resources.requests = r.Resources(x); });
    r.Field(v, "limits", [&](const json& x) { c.resources.limits = r.Resources(x); });
  });
  r.Field(j, "ports", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      ContainerPort& p = c.ports.emplace_back();
      if (!r.ExpectObject(e)) return;
      r.Field(e, "name", [&](const json& x) { p.name = r.Str(x); });
      r.Field(e, "containerPort", [&](const json& x) { p.container_port = r.Int32(x); });
      r.Field(e, "hostPort", [&](const json& x) { p.host_port = r.Int32(x); });
      r.Field(e, "protocol", [&](const json& x) { p.protocol = r.Str(x); });
      r.Field(e, "hostIP", [&](const json& x) { p.host_ip = r.Str(x); });
      if (p.protocol.empty()) p.protocol = "TCP";
    });
  });
  r.Field(j, "restartPolicy", [&](const json& v) { c.restart_policy = r.Str(v); });
}

// Sets an optional volume source to a default value and returns it. Not `emplace()`: Clang
// decides the nested source types are not default-constructible while Volume is incomplete.
template <class T>
T& Engage(std::optional<T>& o) {
  o = T{};
  return *o;
}

void ReadVolume(Reader& r, const json& j, Volume& vol) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "name", [&](const json& v) { vol.name = r.Str(v); });
  r.Field(j, "persistentVolumeClaim", [&](const json& v) {
    auto& s = Engage(vol.persistent_volume_claim);
    r.Field(v, "claimName", [&](const json& x) { s.claim_name = r.Str(x); });
    r.Field(v, "readOnly", [&](const json& x) { s.read_only = r.Bool(x); });
  });
  r.Field(j, "gcePersistentDisk", [&](const json& v) {
    auto& s = Engage(vol.gce_persistent_disk);
    r.Field(v, "pdName", [&](const json& x) { s.pd_name = r.Str(x); });
    r.Field(v, "readOnly", [&](const json& x) { s.read_only = r.Bool(x); });
  });
  r.Field(j, "awsElasticBlockStore", [&](const json& v) {
    auto& s = Engage(vol.aws_elastic_block_store);
    r.Field(v, "volumeID", [&](const json& x) { s.volume_id = r.Str(x); });
    r.Field(v, "readOnly", [&](const json& x) { s.read_only = r.Bool(x); });
  });
  r.Field(j, "rbd", [&](const json& v) {
    auto& s = Engage(vol.rbd);
    r.Field(v, "monitors", [&](const json& x) { s.monitors = r.StrList(x); });
    r.Field(v, "pool", [&](const json& x) { s.pool = r.Str(x); });
    r.Field(v, "image", [&](const json& x) { s.image = r.Str(x); });
    r.Field(v, "readOnly", [&](const json& x) { s.read_only = r.Bool(x); });
    if (s.pool.empty()) s.pool = "rbd";
  });
  r.Field(j, "iscsi", [&](const json& v) {
    auto& s = Engage(vol.iscsi);
    r.Field(v, "targetPortal", [&](const json& x) { s.target_portal = r.Str(x); });
    r.Field(v, "iqn", [&](const json& x) { s.iqn = r.Str(x); });
    r.Field(v, "lun", [&](const json& x) { s.lun = r.Int32(x); });
    r.Field(v, "readOnly", [&](const json& x) { s.read_only = r.Bool(x); });
  });
  r.Field(j, "csi", [&](const json& v) {
    auto& s = Engage(vol.csi);
    r.Field(v, "driver", [&](const json& x) { s.driver = r.Str(x); });
  });
  r.Field(j, "ephemeral", [&](const json& v) {
    if (r.ExpectObject(v)) vol.ephemeral = true;
  });
}

void ReadPodSpec(Reader& r, const json& j, PodSpec& s) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "nodeName", [&](const json& v) { s.node_name = r.Str(v); });
  r.Field(j, "schedulerName", [&](const json& v) {
    std::string name = r.Str(v);
    if (!name.empty()) s.scheduler_name = std::move(name);
  });
  r.Field(j, "priority", [&](const json& v) { s.priority = r.Int32(v); });
  r.Field(j, "priorityClassName", [&](const json& v) { s.priority_class_name = r.Str(v); });
  r.Field(j, "preemptionPolicy", [&](const json& v) { s.preemption_policy = r.Str(v); });
  r.Field(j, "containers", [&](const json& v) {
    if (v.is_array()) s.containers.reserve(v.size());
    r.Each(v, [&](const json& e) { ReadContainer(r, e, s.containers.emplace_back()); });
  });
  r.Field(j, "initContainers", [&](const json& v) {
    r.Each(v, [&](const json& e) { ReadContainer(r, e, s.init_containers.emplace_back()); });
  });
  r.Field(j, "overhead", [&](const json& v) { s.overhead = r.Resources(v); });
  r.Field(j, "resources", [&](const json& v) {
    ResourceRequirements& res = s.resources.emplace();
    r.Field(v, "requests", [&](const json& x) { res.requests = r.Resources(x); });
    r.Field(v, "limits", [&](const json& x) { res.limits = r.Resources(x); });
  });
  r.Field(j, "nodeSelector", [&](const json& v) { s.node_selector = r.StrMap(v); });
  r.Field(j, "affinity", [&](const json& v) { ReadAffinity(r, v, s.affinity.emplace()); });
  r.Field(j, "tolerations", [&](const json& v) {
    r.Each(v, [&](const json& e) { ReadToleration(r, e, s.tolerations.emplace_back()); });
  });
  r.Field(j, "topologySpreadConstraints", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      ReadTopologySpreadConstraint(r, e, s.topology_spread_constraints.emplace_back());
    });
  });
  r.Field(j, "volumes", [&](const json& v) {
    r.Each(v, [&](const json& e) { ReadVolume(r, e, s.volumes.emplace_back()); });
  });
  r.Field(j, "schedulingGates", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      std::string& name = s.scheduling_gates.emplace_back();
      r.Field(e, "name", [&](const json& x) { name = r.Str(x); });
    });
  });
  r.Field(j, "schedulingGroup", [&](const json& v) {
    r.Field(v, "podGroupName", [&](const json& x) { s.scheduling_group = r.Str(x); });
  });
  r.Field(j, "hostNetwork", [&](const json& v) { s.host_network = r.Bool(v); });
}

void ReadPodStatus(Reader& r, const json& j, PodStatus& s) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "phase", [&](const json& v) { s.phase = r.Str(v); });
  r.Field(j, "nominatedNodeName", [&](const json& v) { s.nominated_node_name = r.Str(v); });
  r.Field(j, "startTime", [&](const json& v) { s.start_time = r.Time(v); });
  r.Field(j, "conditions", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      PodCondition& c = s.conditions.emplace_back();
      r.Field(e, "type", [&](const json& x) { c.type = r.Str(x); });
      r.Field(e, "status", [&](const json& x) { c.status = r.Str(x); });
      r.Field(e, "reason", [&](const json& x) { c.reason = r.Str(x); });
      r.Field(e, "message", [&](const json& x) { c.message = r.Str(x); });
    });
  });
  auto container_statuses = [&](const json& v) {
    r.Each(v, [&](const json& e) {
      if (!e.is_object() || (!e.contains("allocatedResources") && !e.contains("resources"))) return;
      ContainerResourceStatus& c = s.container_resources.emplace_back();
      r.Field(e, "name", [&](const json& x) { c.name = r.Str(x); });
      r.Field(e, "allocatedResources", [&](const json& x) { c.allocated = r.Resources(x); });
      r.Field(e, "resources", [&](const json& x) {
        r.Field(x, "requests", [&](const json& q) { c.requests = r.Resources(q); });
      });
    });
  };
  r.Field(j, "containerStatuses", container_statuses);
  r.Field(j, "initContainerStatuses", container_statuses);
}

// Namespaced objects read from files without a namespace land in "default", as kubectl does.
void DefaultNamespace(ObjectMeta& m) {
  if (m.namespace_.empty()) m.namespace_ = "default";
}

Result<Pod> DecodePodImpl(const json& doc, std::string_view where) {
  return DecodeWith<Pod>(doc, where, [&](Reader& r, Pod& p) {
    DefaultNamespace(p.metadata);
    r.Field(doc, "spec", [&](const json& v) { ReadPodSpec(r, v, p.spec); });
    r.Field(doc, "status", [&](const json& v) { ReadPodStatus(r, v, p.status); });
  });
}

Result<Node> DecodeNodeImpl(const json& doc, std::string_view where) {
  return DecodeWith<Node>(doc, where, [&](Reader& r, Node& n) {
    r.Field(doc, "spec", [&](const json& v) {
      r.Field(v, "unschedulable", [&](const json& x) { n.spec.unschedulable = r.Bool(x); });
      r.Field(v, "taints", [&](const json& x) {
        r.Each(x, [&](const json& e) { ReadTaint(r, e, n.spec.taints.emplace_back()); });
      });
    });
    r.Field(doc, "status", [&](const json& v) {
      r.Field(v, "capacity", [&](const json& x) { n.status.capacity = r.Resources(x); });
      r.Field(v, "allocatable", [&](const json& x) { n.status.allocatable = r.Resources(x); });
      r.Field(v, "images", [&](const json& x) {
        r.Each(x, [&](const json& e) {
          ContainerImage& img = n.status.images.emplace_back();
          r.Field(e, "names", [&](const json& y) { img.names = r.StrList(y); });
          r.Field(e, "sizeBytes", [&](const json& y) { img.size_bytes = r.Int(y); });
        });
      });
    });
  });
}

// scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1).
void ReadPodGroup(Reader& r, const json& doc, PodGroup& g) {
  DefaultNamespace(g.metadata);
  r.Field(doc, "spec", [&](const json& v) {
    r.Field(v, "minMember", [&](const json& x) { g.spec.min_member = r.Int32(x); });
    r.Field(v, "minResources", [&](const json& x) { g.spec.min_resources = r.Resources(x); });
    r.Field(v, "scheduleTimeoutSeconds",
            [&](const json& x) { g.spec.schedule_timeout_seconds = r.Int32(x); });
  });
  r.Field(doc, "status", [&](const json& v) {
    auto& st = g.status;
    r.Field(v, "phase", [&](const json& x) { st.phase = r.Str(x); });
    r.Field(v, "occupiedBy", [&](const json& x) { st.occupied_by = r.Str(x); });
    r.Field(v, "scheduled", [&](const json& x) { st.scheduled = r.Int32(x); });
    r.Field(v, "running", [&](const json& x) { st.running = r.Int32(x); });
    r.Field(v, "succeeded", [&](const json& x) { st.succeeded = r.Int32(x); });
    r.Field(v, "failed", [&](const json& x) { st.failed = r.Int32(x); });
    r.Field(v, "scheduleStartTime", [&](const json& x) { st.schedule_start_time = r.Time(x); });
  });
}

// The Workload API's PodGroup (scheduling.k8s.io): spec.schedulingPolicy.{gang,basic}.
void ReadSchedulingPodGroup(Reader& r, const json& doc, SchedulingPodGroup& g) {
  DefaultNamespace(g.metadata);
  r.Field(doc, "spec", [&](const json& v) {
    r.Field(v, "schedulingPolicy", [&](const json& p) {
      r.Field(p, "gang", [&](const json& x) {
        g.gang = true;
        r.Field(x, "minCount", [&](const json& y) { g.min_count = r.Int32(y); });
      });
    });
  });
}

template <class T>
Result<Object> Share(Result<T> r, const RawObject& raw) {
  if (!r.ok()) return r.error();
  T obj = std::move(r).value();
  obj.raw = raw;
  return Object(std::make_shared<const T>(std::move(obj)));
}

void ReadPersistentVolume(Reader& r, const json& doc, PersistentVolume& pv) {
  auto& s = pv.spec;
  r.Field(doc, "spec", [&](const json& v) {
    r.Field(v, "capacity", [&](const json& x) { s.capacity = r.Resources(x); });
    r.Field(v, "accessModes", [&](const json& x) { s.access_modes = r.StrList(x); });
    r.Field(v, "storageClassName", [&](const json& x) { s.storage_class_name = r.Str(x); });
    r.Field(v, "nodeAffinity", [&](const json& x) {
      r.Field(x, "required",
              [&](const json& y) { ReadNodeSelector(r, y, s.node_affinity.emplace()); });
    });
    r.Field(v, "claimRef", [&](const json& x) {
      auto& c = s.claim_ref.emplace();
      r.Field(x, "namespace", [&](const json& y) { c.namespace_ = r.Str(y); });
      r.Field(x, "name", [&](const json& y) { c.name = r.Str(y); });
      r.Field(x, "uid", [&](const json& y) { c.uid = r.Str(y); });
    });
    r.Field(v, "volumeMode", [&](const json& x) { s.volume_mode = r.Str(x); });
    r.Field(v, "csi", [&](const json& x) {
      r.Field(x, "driver", [&](const json& y) { s.csi_driver = r.Str(y); });
      r.Field(x, "volumeHandle", [&](const json& y) { s.csi_volume_handle = r.Str(y); });
    });
    r.Field(v, "gcePersistentDisk", [&](const json& x) {
      r.Field(x, "pdName", [&](const json& y) { s.gce_pd_name = r.Str(y); });
    });
    r.Field(v, "awsElasticBlockStore", [&](const json& x) {
      r.Field(x, "volumeID", [&](const json& y) { s.aws_volume_id = r.Str(y); });
    });
  });
  r.Field(doc, "status", [&](const json& v) {
    r.Field(v, "phase", [&](const json& x) { pv.status.phase = r.Str(x); });
  });
}

void ReadPersistentVolumeClaim(Reader& r, const json& doc, PersistentVolumeClaim& pvc) {
  DefaultNamespace(pvc.metadata);
  auto& s = pvc.spec;
  r.Field(doc, "spec", [&](const json& v) {
    r.Field(v, "accessModes", [&](const json& x) { s.access_modes = r.StrList(x); });
    r.Field(v, "storageClassName", [&](const json& x) { s.storage_class_name = r.Str(x); });
    r.Field(v, "volumeName", [&](const json& x) { s.volume_name = r.Str(x); });
    r.Field(v, "volumeMode", [&](const json& x) { s.volume_mode = r.Str(x); });
    r.Field(v, "resources", [&](const json& x) {
      r.Field(x, "requests", [&](const json& y) { s.requests = r.Resources(y); });
    });
    ReadOptionalLabelSelector(r, v, "selector", s.selector);
  });
  r.Field(doc, "status", [&](const json& v) {
    r.Field(v, "phase", [&](const json& x) { pvc.status.phase = r.Str(x); });
  });
}

void ReadStorageClass(Reader& r, const json& doc, StorageClass& sc) {
  r.Field(doc, "provisioner", [&](const json& v) { sc.provisioner = r.Str(v); });
  r.Field(doc, "volumeBindingMode", [&](const json& v) { sc.volume_binding_mode = r.Str(v); });
  r.Field(doc, "allowedTopologies", [&](const json& v) {
    r.Each(v, [&](const json& term) {
      auto& reqs = sc.allowed_topologies.emplace_back();
      r.Field(term, "matchLabelExpressions", [&](const json& x) {
        r.Each(x, [&](const json& e) {
          auto& req = reqs.emplace_back();
          r.Field(e, "key", [&](const json& y) { req.key = r.Str(y); });
          r.Field(e, "values", [&](const json& y) { req.values = r.StrList(y); });
        });
      });
    });
  });
}

void ReadCSINode(Reader& r, const json& doc, CSINode& n) {
  r.Field(doc, "spec", [&](const json& v) {
    r.Field(v, "drivers", [&](const json& x) {
      r.Each(x, [&](const json& e) {
        auto& d = n.drivers.emplace_back();
        r.Field(e, "name", [&](const json& y) { d.name = r.Str(y); });
        r.Field(e, "nodeID", [&](const json& y) { d.node_id = r.Str(y); });
        r.Field(e, "allocatable", [&](const json& y) {
          r.Field(y, "count", [&](const json& z) { d.allocatable_count = r.Int32(z); });
        });
        r.Field(e, "topologyKeys", [&](const json& y) { d.topology_keys = r.StrList(y); });
      });
    });
  });
}

void ReadPodDisruptionBudget(Reader& r, const json& doc, PodDisruptionBudget& pdb) {
  DefaultNamespace(pdb.metadata);
  r.Field(doc, "spec",
          [&](const json& v) { ReadOptionalLabelSelector(r, v, "selector", pdb.selector); });
  r.Field(doc, "status", [&](const json& v) {
    r.Field(v, "disruptionsAllowed", [&](const json& x) { pdb.disruptions_allowed = r.Int32(x); });
    r.Field(v, "disruptedPods", [&](const json& x) {
      r.Entries(x, [&](const std::string& name, const json&) { pdb.disrupted_pods[name] = true; });
    });
  });
}

void ReadPriorityClass(Reader& r, const json& doc, PriorityClass& pc) {
  r.Field(doc, "value", [&](const json& v) { pc.value = r.Int32(v); });
  r.Field(doc, "globalDefault", [&](const json& v) { pc.global_default = r.Bool(v); });
  r.Field(doc, "preemptionPolicy", [&](const json& v) { pc.preemption_policy = r.Str(v); });
}

// The two PodGroup APIs share a kind: the coscheduling plugin's (scheduling.x-k8s.io) and
// the scheduling.k8s.io one; another group's PodGroup is not known.
std::optional<Result<Object>> DecodePodGroup(const json& doc, const RawObject& keep,
                                             std::string_view where) {
  std::string api_version;
  if (auto it = doc.find("apiVersion"); it != doc.end() && it->is_string())
    api_version = it->get<std::string>();
  if (api_version.starts_with("scheduling.x-k8s.io/"))
    return Share(
        DecodeWith<PodGroup>(doc, where, [&](Reader& r, PodGroup& g) { ReadPodGroup(r, doc, g); }),
        keep);
  if (api_version.starts_with("scheduling.k8s.io/"))
    return Share(DecodeWith<SchedulingPodGroup>(
                     doc, where,
                     [&](Reader& r, SchedulingPodGroup& g) { ReadSchedulingPodGroup(r, doc, g); }),
                 keep);
  return std::nullopt;
}

// An object of a kind Berth does not model: its kind, apiVersion and name, and the document.
Object Unknown(const std::string& kind, const RawObject& raw) {
  const json& doc = *raw;
  UnknownObject u;
  u.kind = kind;
  if (doc.is_object()) {
    if (auto it = doc.find("apiVersion"); it != doc.end() && it->is_string()) {
      u.api_version = it->get<std::string>();
    }
    if (auto m = doc.find("metadata"); m != doc.end() && m->is_object()) {
      if (auto n = m->find("name"); n != m->end() && n->is_string()) u.name = n->get<std::string>();
    }
  }
  u.raw = raw;
  return Object(std::make_shared<const UnknownObject>(std::move(u)));
}

// `keep`: what the object keeps as its `raw` (the document, or nothing).
// A dispatch table by kind, one short branch per kind.
Result<Object> DecodeKnown(const std::string& kind, const RawObject& raw, const RawObject& keep,
                           std::string_view where) {
  const json& doc = *raw;
  if (kind == "Pod") return Share(DecodePodImpl(doc, where), keep);
  if (kind == "Node") return Share(DecodeNodeImpl(doc, where), keep);
  if (kind == "Namespace") {
    return Share(DecodeWith<Namespace>(doc, where, [](Reader&, Namespace&) {}), keep);
  }
  if (kind == "Service") {
    return Share(DecodeWith<Service>(doc, where,
                                     [&](Reader& r, Service& s) {
                                       DefaultNamespace(s.metadata);
                                       r.Field(doc, "spec", [&](const json& v) {
                                         r.Field(v, "selector",
                                                 [&](const json& x) { s.selector = r.StrMap(x); });
                                       });
                                     }),
                 keep);
  }
  if (kind == "ReplicationController") {
    return Share(DecodeWith<ReplicationController>(doc, where,
                                                   [&](Reader& r, ReplicationController& s) {
                                                     DefaultNamespace(s.metadata);
                                                     r.Field(doc, "spec", [&](const json& v) {
                                                       r.Field(v, "selector", [&](const json& x) {
                                                         s.selector = r.StrMap(x);
                                                       });
                                                     });
                                                   }),
                 keep);
  }
  if (kind == "ReplicaSet") {
    return Share(DecodeWith<ReplicaSet>(doc, where,
                                        [&](Reader& r, ReplicaSet& s) {
                                          DefaultNamespace(s.metadata);
                                          r.Field(doc, "spec", [&](const json& v) {
                                            ReadOptionalLabelSelector(r, v, "selector", s.selector);
                                          });
                                        }),
                 keep);
  }
  if (kind == "StatefulSet") {
    return Share(DecodeWith<StatefulSet>(doc, where,
                                         [&](Reader& r, StatefulSet& s) {
                                           DefaultNamespace(s.metadata);
                                           r.Field(doc, "spec", [&](const json& v) {
                                             ReadOptionalLabelSelector(r, v, "selector",
                                                                       s.selector);
                                           });
                                         }),
                 keep);
  }
  if (kind == "PersistentVolume")
    return Share(
        DecodeWith<PersistentVolume>(
            doc, where, [&](Reader& r, PersistentVolume& pv) { ReadPersistentVolume(r, doc, pv); }),
        keep);
  if (kind == "PersistentVolumeClaim")
    return Share(DecodeWith<PersistentVolumeClaim>(doc, where,
                                                   [&](Reader& r, PersistentVolumeClaim& pvc) {
                                                     ReadPersistentVolumeClaim(r, doc, pvc);
                                                   }),
                 keep);
  if (kind == "StorageClass")
    return Share(
        DecodeWith<StorageClass>(
            doc, where, [&](Reader& r, StorageClass& sc) { ReadStorageClass(r, doc, sc); }),
        keep);
  if (kind == "CSINode")
    return Share(
        DecodeWith<CSINode>(doc, where, [&](Reader& r, CSINode& n) { ReadCSINode(r, doc, n); }),
        keep);
  if (kind == "PodDisruptionBudget")
    return Share(DecodeWith<PodDisruptionBudget>(doc, where,
                                                 [&](Reader& r, PodDisruptionBudget& pdb) {
                                                   ReadPodDisruptionBudget(r, doc, pdb);
                                                 }),
                 keep);
  if (kind == "PriorityClass")
    return Share(
        DecodeWith<PriorityClass>(
            doc, where, [&](Reader& r, PriorityClass& pc) { ReadPriorityClass(r, doc, pc); }),
        keep);
  if (kind == "PodGroup") {
    if (auto o = DecodePodGroup(doc, keep, where)) return std::move(*o);
  }
  if (auto o = DecodeResourceKind(kind, raw, keep, where)) return std::move(*o);
  return Unknown(kind, raw);
}

}  // namespace

void ReadMeta(Reader& r, const json& j, ObjectMeta& m) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "name", [&](const json& v) { m.name = r.Str(v); });
  r.Field(j, "namespace", [&](const json& v) { m.namespace_ = r.Str(v); });
  r.Field(j, "uid", [&](const json& v) { m.uid = r.Str(v); });
  r.Field(j, "resourceVersion", [&](const json& v) { m.resource_version = r.Str(v); });
  r.Field(j, "labels", [&](const json& v) { m.labels = r.StrMap(v); });
  r.Field(j, "annotations", [&](const json& v) { m.annotations = r.StrMap(v); });
  r.Field(j, "creationTimestamp", [&](const json& v) { m.creation_timestamp = r.Time(v); });
  r.Field(j, "deletionTimestamp", [&](const json& v) { m.deletion_timestamp = r.Time(v); });
  r.Field(j, "ownerReferences", [&](const json& v) {
    r.Each(v, [&](const json& e) { ReadOwnerReference(r, e, m.owner_references.emplace_back()); });
  });
}

void ReadLabelSelector(Reader& r, const json& j, LabelSelector& s) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "matchLabels", [&](const json& v) { s.match_labels = r.StrMap(v); });
  r.Field(j, "matchExpressions", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      ReadLabelSelectorRequirement(r, e, s.match_expressions.emplace_back());
    });
  });
}

void ReadNodeSelector(Reader& r, const json& j, NodeSelector& s) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "nodeSelectorTerms", [&](const json& v) {
    r.Each(v, [&](const json& e) { ReadNodeSelectorTerm(r, e, s.terms.emplace_back()); });
  });
}

void ReadNodeAffinity(Reader& r, const json& j, NodeAffinity& a) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "requiredDuringSchedulingIgnoredDuringExecution",
          [&](const json& v) { ReadNodeSelector(r, v, a.required.emplace()); });
  r.Field(j, "preferredDuringSchedulingIgnoredDuringExecution", [&](const json& v) {
    r.Each(v, [&](const json& e) {
      PreferredSchedulingTerm& t = a.preferred.emplace_back();
      if (!r.ExpectObject(e)) return;
      r.Field(e, "weight", [&](const json& x) { t.weight = r.Int32(x); });
      r.Field(e, "preference", [&](const json& x) { ReadNodeSelectorTerm(r, x, t.preference); });
    });
  });
}

void ReadTopologySpreadConstraint(Reader& r, const json& j, TopologySpreadConstraint& c) {
  if (!r.ExpectObject(j)) return;
  r.Field(j, "maxSkew", [&](const json& v) { c.max_skew = r.Int32(v); });
  r.Field(j, "topologyKey", [&](const json& v) { c.topology_key = r.Str(v); });
  r.Field(j, "whenUnsatisfiable", [&](const json& v) { c.when_unsatisfiable = r.Str(v); });
  ReadOptionalLabelSelector(r, j, "labelSelector", c.label_selector);
  r.Field(j, "minDomains", [&](const json& v) { c.min_domains = r.Int32(v); });
  r.Field(j, "nodeAffinityPolicy", [&](const json& v) { c.node_affinity_policy = r.Str(v); });
  r.Field(j, "nodeTaintsPolicy", [&](const json& v) { c.node_taints_policy = r.Str(v); });
  r.Field(j, "matchLabelKeys", [&](const json& v) { c.match_label_keys = r.StrList(v); });
}

std::string Describe(const json& doc) {
  if (!doc.is_object()) return {};
  std::string kind, ns, name;
  if (auto it = doc.find("kind"); it != doc.end() && it->is_string()) kind = it->get<std::string>();
  if (auto m = doc.find("metadata"); m != doc.end() && m->is_object()) {
    if (auto n = m->find("name"); n != m->end() && n->is_string()) name = n->get<std::string>();
    if (auto n = m->find("namespace"); n != m->end() && n->is_string()) ns = n->get<std::string>();
  }
  if (kind.empty() && name.empty()) return {};
  std::string out = kind.empty() ? "object" : kind;
  if (!name.empty()) out += " " + (ns.empty() ? name : ns + "/" + name);
  return out;
}

Result<Object> DecodeObjectShared(const RawObject& raw, std::string_view where, bool keep_raw) {
  return DecodeObjectStoring(raw, where, keep_raw ? raw : nullptr);
}

Result<Object> DecodeObjectStoring(const RawObject& raw, std::string_view where, RawObject stored) {
  const json& doc = *raw;
  if (!doc.is_object()) {
    std::string msg(where);
    if (!msg.empty()) msg += ": ";
    return Error{msg + "expected an object (a map with kind and metadata)"};
  }
  auto it = doc.find("kind");
  if (it == doc.end() || !it->is_string() || it->get_ref<const std::string&>().empty()) {
    Reader r(std::string(where), "");
    r.Describing(&doc);
    r.Fail("kind: missing or not a string");
    return r.error();
  }
  return DecodeKnown(it->get<std::string>(), raw, std::move(stored), where);
}

Result<Pod> DecodePodDoc(const json& doc, std::string_view where) {
  auto r = DecodePodImpl(doc, where);
  if (r.ok()) r->raw = std::make_shared<const json>(doc);
  return r;
}

Result<Node> DecodeNodeDoc(const json& doc, std::string_view where) {
  auto r = DecodeNodeImpl(doc, where);
  if (r.ok()) r->raw = std::make_shared<const json>(doc);
  return r;
}

}  // namespace berth::codec
