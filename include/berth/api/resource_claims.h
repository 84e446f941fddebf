// Typed views of the resource.k8s.io/v1 objects of Dynamic Resource Allocation (structured
// parameters): DeviceClass, ResourceClaim, ResourceClaimTemplate and ResourceSlice, and the
// pod's spec.resourceClaims / status.resourceClaimStatuses.
//
// Like the objects of objects.h, each keeps the document it was decoded from (`raw`) and is
// shared as std::shared_ptr<const T>. Optional fields of the API are std::optional here when
// their absence means something different from their zero value. Decoding and encoding live in
// src/api/codec.h (kinds DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice).
//
// A Pod's layout is part of the frozen SDK, so its resource claims are read from `pod.raw` by
// PodResourceClaimsOf() and PodResourceClaimStatusesOf().
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "berth/api/flat_map.h"
#include "berth/api/objects.h"
#include "berth/api/quantity.h"
#include "berth/export.h"

namespace berth {

// ---------------------------------------------------------------- shared pieces

// A CEL selector (selectors[].cel.expression).
struct BERTH_EXPORT DeviceSelector {
  std::string cel_expression;
  friend bool operator==(const DeviceSelector&, const DeviceSelector&) = default;
};

// Opaque, driver-specific configuration (config[].opaque): the parameters stay a JSON document.
struct BERTH_EXPORT OpaqueDeviceConfiguration {
  std::string driver;
  RawObject parameters;  // any JSON value; null when absent
};

// A device attribute's value: exactly one of the four is set.
struct BERTH_EXPORT DeviceAttribute {
  std::optional<int64_t> int_value;
  std::optional<bool> bool_value;
  std::optional<std::string> string_value;
  std::optional<std::string> version_value;  // a semantic version
  friend bool operator==(const DeviceAttribute&, const DeviceAttribute&) = default;
};

// A taint on a device (spec.devices[].taints[]). Effects: NoSchedule, NoExecute, None.
struct BERTH_EXPORT DeviceTaint {
  std::string key, value, effect;
  UnixTime time_added = 0;
  friend bool operator==(const DeviceTaint&, const DeviceTaint&) = default;
};

// A request's toleration of device taints; operator Exists or Equal ("" = Equal).
struct BERTH_EXPORT DeviceToleration {
  std::string key, op, value, effect;
  std::optional<int64_t> toleration_seconds;
  friend bool operator==(const DeviceToleration&, const DeviceToleration&) = default;
};

// ---------------------------------------------------------------- DeviceClass

struct BERTH_EXPORT DeviceClassConfiguration {
  OpaqueDeviceConfiguration opaque;
};

// resource.k8s.io/v1 DeviceClass (cluster-scoped).
struct BERTH_EXPORT DeviceClass {
  ObjectMeta metadata;
  struct Spec {
    std::vector<DeviceSelector> selectors;
    std::vector<DeviceClassConfiguration> config;
    std::optional<std::string> extended_resource_name;
  } spec;
  RawObject raw;
};

// ---------------------------------------------------------------- ResourceClaim

inline constexpr const char* kAllocationModeExactCount = "ExactCount";
inline constexpr const char* kAllocationModeAll = "All";

// spec.devices.requests[].exactly and firstAvailable[] (a subrequest also has a name).
struct BERTH_EXPORT ExactDeviceRequest {
  std::string device_class_name;
  std::vector<DeviceSelector> selectors;
  std::string allocation_mode;  // ExactCount ("" reads as ExactCount) or All
  int64_t count = 1;            // ExactCount only; defaulted to 1
  bool admin_access = false;    // exactly only
  std::vector<DeviceToleration> tolerations;
  // capacity.requests: the amount of each consumable capacity a shared device gives.
  FlatMap<std::string, Quantity> capacity_requests;
};

struct BERTH_EXPORT DeviceSubRequest {
  std::string name;
  ExactDeviceRequest request;  // admin_access is unused
};

struct BERTH_EXPORT DeviceRequest {
  std::string name;
  std::optional<ExactDeviceRequest> exactly;  // exactly one of exactly, first_available
  std::vector<DeviceSubRequest> first_available;
};

struct BERTH_EXPORT DeviceConstraint {
  std::vector<std::string> requests;  // empty: all requests
  std::optional<std::string> match_attribute;
  std::optional<std::string> distinct_attribute;
};

struct BERTH_EXPORT DeviceClaimConfiguration {
  std::vector<std::string> requests;
  OpaqueDeviceConfiguration opaque;
};

struct BERTH_EXPORT ResourceClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<DeviceClaimConfiguration> config;
};

// One allocated device (status.allocation.devices.results[]).
struct BERTH_EXPORT DeviceRequestAllocationResult {
  std::string request;  // the request's name, "request/subrequest" for firstAvailable
  std::string driver, pool, device;
  std::optional<bool> admin_access;
  std::vector<DeviceToleration> tolerations;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  std::optional<std::string> share_id;  // set when the device allows multiple allocations
  FlatMap<std::string, Quantity> consumed_capacity;
};

struct BERTH_EXPORT DeviceAllocationConfiguration {
  std::string source;  // FromClass or FromClaim
  std::vector<std::string> requests;
  OpaqueDeviceConfiguration opaque;
};

// status.allocation
struct BERTH_EXPORT AllocationResult {
  std::vector<DeviceRequestAllocationResult> results;
  std::vector<DeviceAllocationConfiguration> config;
  // The nodes the allocated devices are reachable from; absent: all nodes.
  std::optional<NodeSelector> node_selector;
  UnixTime allocation_timestamp = 0;
};

// status.reservedFor[]
struct BERTH_EXPORT ResourceClaimConsumerReference {
  std::string api_group, resource, name, uid;
  friend bool operator==(const ResourceClaimConsumerReference&,
                         const ResourceClaimConsumerReference&) = default;
};

// status.devices[] (written by drivers; kept for round trips, conditions and data stay raw).
struct BERTH_EXPORT AllocatedDeviceStatus {
  std::string driver, pool, device;
  std::optional<std::string> share_id;
};

// resource.k8s.io/v1 ResourceClaim (namespaced).
struct BERTH_EXPORT ResourceClaim {
  ObjectMeta metadata;
  struct Spec {
    ResourceClaimSpec devices;  // spec.devices
  } spec;
  struct Status {
    std::optional<AllocationResult> allocation;
    std::vector<ResourceClaimConsumerReference> reserved_for;
    std::vector<AllocatedDeviceStatus> devices;
  } status;
  RawObject raw;
};

// resource.k8s.io/v1 ResourceClaimTemplate (namespaced): the claim a pod's
// resourceClaimTemplateName makes from spec.metadata and spec.spec.
struct BERTH_EXPORT ResourceClaimTemplate {
  ObjectMeta metadata;
  struct Spec {
    ObjectMeta metadata;
    ResourceClaimSpec devices;  // spec.spec.devices
  } spec;
  RawObject raw;
};

// ---------------------------------------------------------------- ResourceSlice

struct BERTH_EXPORT CapacityRequestPolicyRange {
  Quantity min;
  std::optional<Quantity> max, step;
};

// How much of a consumable capacity one allocation takes (devices with
// allowMultipleAllocations).
struct BERTH_EXPORT CapacityRequestPolicy {
  std::optional<Quantity> default_value;  // "default"
  std::vector<Quantity> valid_values;
  std::optional<CapacityRequestPolicyRange> valid_range;
};

struct BERTH_EXPORT DeviceCapacity {
  Quantity value;
  std::optional<CapacityRequestPolicy> request_policy;
};

// Counter name -> value.
using Counters = FlatMap<std::string, Quantity>;

struct BERTH_EXPORT CounterSet {
  std::string name;
  Counters counters;
};

struct BERTH_EXPORT DeviceCounterConsumption {
  std::string counter_set;
  Counters counters;
};

struct BERTH_EXPORT Device {
  std::string name;
  FlatMap<std::string, DeviceAttribute> attributes;  // qualified name -> value
  FlatMap<std::string, DeviceCapacity> capacity;     // qualified name -> capacity
  std::vector<DeviceCounterConsumption> consumes_counters;
  // Per-device node selection (the slice's perDeviceNodeSelection): one of the three.
  std::optional<std::string> node_name;
  std::optional<NodeSelector> node_selector;
  bool all_nodes = false;
  std::vector<DeviceTaint> taints;
  bool binds_to_node = false;
  std::vector<std::string> binding_conditions;
  std::vector<std::string> binding_failure_conditions;
  bool allow_multiple_allocations = false;
};

struct BERTH_EXPORT ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 0;
};

// resource.k8s.io/v1 ResourceSlice (cluster-scoped).
struct BERTH_EXPORT ResourceSlice {
  ObjectMeta metadata;
  struct Spec {
    std::string driver;
    ResourcePool pool;
    // Exactly one of node_name, node_selector, all_nodes, per_device_node_selection.
    std::optional<std::string> node_name;
    std::optional<NodeSelector> node_selector;
    bool all_nodes = false;
    bool per_device_node_selection = false;
    std::vector<Device> devices;
    std::vector<CounterSet> shared_counters;
  } spec;
  RawObject raw;
};

// ---------------------------------------------------------------- pods

// One entry of a pod's spec.resourceClaims.
struct BERTH_EXPORT PodResourceClaim {
  std::string name;
  std::optional<std::string> resource_claim_name;
  std::optional<std::string> resource_claim_template_name;
  friend bool operator==(const PodResourceClaim&, const PodResourceClaim&) = default;
};

// The pod's spec.resourceClaims, read from pod.raw (empty without a raw document).
BERTH_EXPORT std::vector<PodResourceClaim> PodResourceClaimsOf(const Pod& pod);
// The pod's status.resourceClaimStatuses as (name, resourceClaimName) pairs, in order; entries
// without a resourceClaimName (no claim was needed) are left out.
BERTH_EXPORT std::vector<std::pair<std::string, std::string>> PodResourceClaimStatusesOf(
    const Pod& pod);
// Writes spec.resourceClaims / status.resourceClaimStatuses into a copy of pod.raw (a fresh
// document when the pod has none), for pods built in code (tests, simulations).
BERTH_EXPORT void SetPodResourceClaims(Pod& pod, const std::vector<PodResourceClaim>& claims);
BERTH_EXPORT void SetPodResourceClaimStatuses(
    Pod& pod, const std::vector<std::pair<std::string, std::string>>& statuses);

}  // namespace berth
