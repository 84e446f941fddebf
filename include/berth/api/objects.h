// Typed views of the Kubernetes objects the scheduler reads.
//
// Each object keeps the document it was decoded from (`raw`), so fields Berth does not model
// survive a decode/encode round trip unchanged; the typed fields are what the scheduler reads and
// what the encoder writes back over the raw document. Objects are shared as
// std::shared_ptr<const T>: once built they are immutable, and an update is a new object.
// Decoding lives in src/api/codec.h.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/boxed.h"
#include "berth/api/compact_vector.h"
#include "berth/api/flat_map.h"
#include "berth/api/quantity.h"
#include "berth/export.h"

namespace berth {

// Flat sorted maps: see flat_map.h for how they differ from std::map (an insertion invalidates
// references into the map).
using Labels = FlatMap<std::string, std::string>;
using ResourceList = FlatMap<std::string, Quantity>;
// The document an object was decoded from; null for objects built in code.
using RawObject = std::shared_ptr<const nlohmann::json>;

// Seconds since the Unix epoch; 0 = unset.
using UnixTime = int64_t;

struct BERTH_EXPORT OwnerReference {
  std::string api_version, kind, name, uid;
  bool controller = false;
  friend bool operator==(const OwnerReference&, const OwnerReference&) = default;
};

struct BERTH_EXPORT ObjectMeta {
  std::string name;
  std::string namespace_;
  std::string uid;
  std::string resource_version;
  Labels labels;
  Labels annotations;
  UnixTime creation_timestamp = 0;
  std::optional<UnixTime> deletion_timestamp;
  CompactVector<OwnerReference> owner_references;
};

// ---------------------------------------------------------------- selectors

struct BERTH_EXPORT LabelSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist
  std::vector<std::string> values;
  friend bool operator==(const LabelSelectorRequirement&,
                         const LabelSelectorRequirement&) = default;
};

struct BERTH_EXPORT LabelSelector {
  Labels match_labels;
  std::vector<LabelSelectorRequirement> match_expressions;
  friend bool operator==(const LabelSelector&, const LabelSelector&) = default;
};

struct BERTH_EXPORT NodeSelectorRequirement {
  std::string key;
  std::string op;  // In, NotIn, Exists, DoesNotExist, Gt, Lt
  std::vector<std::string> values;
  friend bool operator==(const NodeSelectorRequirement&, const NodeSelectorRequirement&) = default;
};

struct BERTH_EXPORT NodeSelectorTerm {
  std::vector<NodeSelectorRequirement> match_expressions;
  std::vector<NodeSelectorRequirement> match_fields;
  friend bool operator==(const NodeSelectorTerm&, const NodeSelectorTerm&) = default;
};

struct BERTH_EXPORT NodeSelector {
  std::vector<NodeSelectorTerm> terms;
  friend bool operator==(const NodeSelector&, const NodeSelector&) = default;
};

struct BERTH_EXPORT PreferredSchedulingTerm {
  int32_t weight = 0;
  NodeSelectorTerm preference;
  friend bool operator==(const PreferredSchedulingTerm&, const PreferredSchedulingTerm&) = default;
};

struct BERTH_EXPORT NodeAffinity {
  std::optional<NodeSelector> required;
  std::vector<PreferredSchedulingTerm> preferred;
  friend bool operator==(const NodeAffinity&, const NodeAffinity&) = default;
};

struct BERTH_EXPORT PodAffinityTerm {
  std::optional<LabelSelector> label_selector;
  std::vector<std::string> namespaces;
  std::string topology_key;
  std::optional<LabelSelector> namespace_selector;
  std::vector<std::string> match_label_keys;
  std::vector<std::string> mismatch_label_keys;
  friend bool operator==(const PodAffinityTerm&, const PodAffinityTerm&) = default;
};

struct BERTH_EXPORT WeightedPodAffinityTerm {
  int32_t weight = 0;
  PodAffinityTerm term;
  friend bool operator==(const WeightedPodAffinityTerm&, const WeightedPodAffinityTerm&) = default;
};

struct BERTH_EXPORT PodAffinity {
  std::vector<PodAffinityTerm> required;
  std::vector<WeightedPodAffinityTerm> preferred;
  friend bool operator==(const PodAffinity&, const PodAffinity&) = default;
};

struct BERTH_EXPORT Affinity {
  std::optional<NodeAffinity> node_affinity;
  std::optional<PodAffinity> pod_affinity;
  std::optional<PodAffinity> pod_anti_affinity;
  friend bool operator==(const Affinity&, const Affinity&) = default;
};

// ---------------------------------------------------------------- taints

struct BERTH_EXPORT Taint {
  std::string key, value, effect;  // effect: NoSchedule, PreferNoSchedule, NoExecute
  friend bool operator==(const Taint&, const Taint&) = default;
};

struct BERTH_EXPORT Toleration {
  std::string key, op, value, effect;  // op: Exists or Equal ("" = Equal)
  std::optional<int64_t> toleration_seconds;
  friend bool operator==(const Toleration&, const Toleration&) = default;
};

// ---------------------------------------------------------------- pods

struct BERTH_EXPORT ContainerPort {
  std::string name;
  int32_t container_port = 0;
  int32_t host_port = 0;
  std::string protocol = "TCP";
  std::string host_ip;
  friend bool operator==(const ContainerPort&, const ContainerPort&) = default;
};

struct BERTH_EXPORT ResourceRequirements {
  ResourceList requests;
  ResourceList limits;
  friend bool operator==(const ResourceRequirements&, const ResourceRequirements&) = default;
};

struct BERTH_EXPORT Container {
  std::string name;
  std::string image;
  ResourceRequirements resources;
  CompactVector<ContainerPort> ports;
  Boxed<std::string> restart_policy;  // "Always" marks a sidecar init container
  friend bool operator==(const Container&, const Container&) = default;
};

struct BERTH_EXPORT TopologySpreadConstraint {
  int32_t max_skew = 0;
  std::string topology_key;
  std::string when_unsatisfiable;  // DoNotSchedule, ScheduleAnyway
  std::optional<LabelSelector> label_selector;
  std::optional<int32_t> min_domains;
  std::optional<std::string> node_affinity_policy;  // Honor, Ignore
  std::optional<std::string> node_taints_policy;    // Honor, Ignore
  std::vector<std::string> match_label_keys;
  friend bool operator==(const TopologySpreadConstraint&,
                         const TopologySpreadConstraint&) = default;
};

struct BERTH_EXPORT Volume {
  std::string name;
  // Exactly one source is set; the scheduler models these.
  struct Pvc {
    std::string claim_name;
    bool read_only = false;
    friend bool operator==(const Pvc&, const Pvc&) = default;
  };
  struct GcePd {
    std::string pd_name;
    bool read_only = false;
    friend bool operator==(const GcePd&, const GcePd&) = default;
  };
  struct AwsEbs {
    std::string volume_id;
    bool read_only = false;
    friend bool operator==(const AwsEbs&, const AwsEbs&) = default;
  };
  struct Rbd {
    std::vector<std::string> monitors;
    std::string pool = "rbd", image;
    bool read_only = false;
    friend bool operator==(const Rbd&, const Rbd&) = default;
  };
  struct Iscsi {
    std::string target_portal, iqn;
    int32_t lun = 0;
    bool read_only = false;
    friend bool operator==(const Iscsi&, const Iscsi&) = default;
  };
  struct Csi {
    std::string driver;
    friend bool operator==(const Csi&, const Csi&) = default;
  };
  std::optional<Pvc> persistent_volume_claim;
  std::optional<GcePd> gce_persistent_disk;
  std::optional<AwsEbs> aws_elastic_block_store;
  std::optional<Rbd> rbd;
  std::optional<Iscsi> iscsi;
  std::optional<Csi> csi;
  bool ephemeral = false;  // generic ephemeral volume: claim "<pod>-<volume>"
  friend bool operator==(const Volume&, const Volume&) = default;
};

struct BERTH_EXPORT PodCondition {
  std::string type, status, reason, message;
};

// PodSpec and the types in it compare member by member, so the scheduler can tell that two
// pods ask for the same thing (it reuses per-node results across such pods).
struct BERTH_EXPORT PodSpec {
  std::string node_name;
  std::string scheduler_name = "default-scheduler";
  std::optional<int32_t> priority;
  std::string priority_class_name;
  Boxed<std::string> preemption_policy;  // PreemptLowerPriority, Never
  CompactVector<Container> containers;
  CompactVector<Container> init_containers;
  ResourceList overhead;
  // spec.resources: pod-level requests and limits (cpu, memory, hugepages-*), which replace the
  // containers' sum for those resources. Out of line: most pods have none.
  Boxed<ResourceRequirements> resources;
  Labels node_selector;
  Boxed<Affinity> affinity;  // out of line: most pods have none
  CompactVector<Toleration> tolerations;
  CompactVector<TopologySpreadConstraint> topology_spread_constraints;
  CompactVector<Volume> volumes;
  CompactVector<std::string> scheduling_gates;
  // spec.schedulingGroup.podGroupName: the scheduling.k8s.io PodGroup the pod belongs to
  // (Workload API, GangScheduling). Out of line: most pods have none.
  Boxed<std::string> scheduling_group;
  bool host_network = false;
  friend bool operator==(const PodSpec&, const PodSpec&) = default;
};

// What the kubelet reports of one container's resources after an in-place resize:
// status.(init)containerStatuses[].allocatedResources and .resources.requests.
struct BERTH_EXPORT ContainerResourceStatus {
  std::string name;
  std::optional<ResourceList> allocated;  // allocatedResources
  std::optional<ResourceList> requests;   // resources.requests (what is actuated)
  friend bool operator==(const ContainerResourceStatus&, const ContainerResourceStatus&) = default;
};

struct BERTH_EXPORT PodStatus {
  std::string phase;
  std::string nominated_node_name;
  UnixTime start_time = 0;
  CompactVector<PodCondition> conditions;
  // Only the container statuses that report resources (running pods resized in place).
  CompactVector<ContainerResourceStatus> container_resources;
};

struct BERTH_EXPORT Pod {
  ObjectMeta metadata;
  PodSpec spec;
  PodStatus status;
  RawObject raw;

  int32_t Priority() const { return spec.priority.value_or(0); }
  std::string Key() const { return metadata.namespace_ + "/" + metadata.name; }
};

// ---------------------------------------------------------------- nodes

struct BERTH_EXPORT ContainerImage {
  std::vector<std::string> names;
  int64_t size_bytes = 0;
};

struct BERTH_EXPORT Node {
  ObjectMeta metadata;
  struct Spec {
    bool unschedulable = false;
    CompactVector<Taint> taints;
  } spec;
  struct Status {
    ResourceList capacity;
    ResourceList allocatable;
    CompactVector<ContainerImage> images;
  } status;
  RawObject raw;
};

// ---------------------------------------------------------------- other objects

struct BERTH_EXPORT Namespace {
  ObjectMeta metadata;
  RawObject raw;
};

// Service, ReplicationController, ReplicaSet, StatefulSet: the scheduler reads only the selector.
struct BERTH_EXPORT Service {
  ObjectMeta metadata;
  Labels selector;
  RawObject raw;
};

struct BERTH_EXPORT ReplicationController {
  ObjectMeta metadata;
  Labels selector;
  RawObject raw;
};

struct BERTH_EXPORT ReplicaSet {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;
  RawObject raw;
};

struct BERTH_EXPORT StatefulSet {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;
  RawObject raw;
};

struct BERTH_EXPORT PersistentVolume {
  ObjectMeta metadata;
  struct Spec {
    ResourceList capacity;
    std::vector<std::string> access_modes;
    std::string storage_class_name;
    std::optional<NodeSelector> node_affinity;  // spec.nodeAffinity.required
    struct ClaimRef {
      std::string namespace_, name, uid;
    };
    std::optional<ClaimRef> claim_ref;
    std::string volume_mode;                    // Filesystem (default) or Block
    std::string csi_driver, csi_volume_handle;  // spec.csi
    std::string gce_pd_name, aws_volume_id;     // in-tree sources (volume-limit accounting)
  } spec;
  struct Status {
    std::string phase;
  } status;
  RawObject raw;
};

struct BERTH_EXPORT PersistentVolumeClaim {
  ObjectMeta metadata;
  struct Spec {
    std::vector<std::string> access_modes;
    std::optional<std::string> storage_class_name;
    std::string volume_name;
    std::string volume_mode;
    ResourceList requests;  // spec.resources.requests
    std::optional<LabelSelector> selector;
  } spec;
  struct Status {
    std::string phase;
  } status;
  RawObject raw;
};

struct BERTH_EXPORT TopologySelectorRequirement {
  std::string key;
  std::vector<std::string> values;
};

struct BERTH_EXPORT StorageClass {
  ObjectMeta metadata;
  std::string provisioner;
  std::optional<std::string> volume_binding_mode;  // Immediate, WaitForFirstConsumer
  // allowedTopologies: each term's requirements are ANDed, terms are ORed.
  std::vector<std::vector<TopologySelectorRequirement>> allowed_topologies;
  RawObject raw;
};

struct BERTH_EXPORT CSINode {
  ObjectMeta metadata;
  struct Driver {
    std::string name, node_id;
    std::optional<int32_t> allocatable_count;
    std::vector<std::string> topology_keys;
  };
  std::vector<Driver> drivers;
  RawObject raw;
};

struct BERTH_EXPORT PodDisruptionBudget {
  ObjectMeta metadata;
  std::optional<LabelSelector> selector;
  int32_t disruptions_allowed = 0;                          // status.disruptionsAllowed
  std::map<std::string, bool, std::less<>> disrupted_pods;  // status.disruptedPods (names)
  RawObject raw;
};

struct BERTH_EXPORT PriorityClass {
  ObjectMeta metadata;
  int32_t value = 0;
  bool global_default = false;
  std::optional<std::string> preemption_policy;
  RawObject raw;
};

// ---------------------------------------------------------------- gangs

// The label naming a pod's PodGroup (scheduling.x-k8s.io/v1alpha1) in its namespace.
inline constexpr const char* kPodGroupLabel = "scheduling.x-k8s.io/pod-group";

// scheduler-plugins' PodGroup (scheduling.x-k8s.io/v1alpha1, namespaced), read by Coscheduling:
// pods labelled kPodGroupLabel with its name are scheduled all or nothing.
struct BERTH_EXPORT PodGroup {
  ObjectMeta metadata;
  struct Spec {
    int32_t min_member = 0;                           // spec.minMember
    std::optional<ResourceList> min_resources;        // spec.minResources
    std::optional<int32_t> schedule_timeout_seconds;  // spec.scheduleTimeoutSeconds
  } spec;
  struct Status {
    // Pending, PreScheduling, Scheduling, Scheduled, Running, Finished, Failed, Unknown.
    std::string phase;
    std::string occupied_by;
    int32_t scheduled = 0, running = 0, succeeded = 0, failed = 0;
    UnixTime schedule_start_time = 0;
  } status;
  RawObject raw;
};

// The core PodGroup of the Workload API (scheduling.k8s.io, namespaced), read by
// GangScheduling: pods name it in spec.schedulingGroup.podGroupName.
struct BERTH_EXPORT SchedulingPodGroup {
  ObjectMeta metadata;
  // spec.schedulingPolicy: gang (with gang.minCount) or basic.
  bool gang = false;
  int32_t min_count = 0;  // spec.schedulingPolicy.gang.minCount
  RawObject raw;
};

}  // namespace berth
