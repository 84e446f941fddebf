// The devices simulated nodes offer for Dynamic Resource Allocation (`--node-devices FILE`):
// what a DRA driver on each node would publish as a ResourceSlice (resource.k8s.io/v1).
//
// The file holds one YAML document per driver ("---" between them):
//
//   driver: gpu.example.com        # required, the driver's (and pool's) name
//   nodeSelector:                  # optional LabelSelector (matchLabels, matchExpressions):
//     matchLabels: {gpu: "true"}   #   the nodes that get these devices; absent: every node
//   sharedCounters:                # optional, as ResourceSlice spec.sharedCounters
//   - name: gpu-0-counters
//     counters: {memory: 80Gi}     #   a counter's value may be given as a bare quantity
//   devices:
//   - name: gpu                    # with `count: N`: gpu-0 ... gpu-<N-1>
//     count: 4
//     attributes:                  # bool, int and string from the YAML value, or typed:
//       model: A100                #   {bool: ..}, {int: ..}, {string: ..}, {version: ..}
//       driverVersion: {version: 1.2.3}
//     capacity:                    # a bare quantity, or {value: .., requestPolicy: ..}
//       memory: 80Gi
//     consumesCounters:            # optional, as the device's consumesCounters
//     - counterSet: gpu-0-counters
//       counters: {memory: 10Gi}
//
// A device stamped with `count` gets the int attribute `index` (its number) unless it names
// one, and "{i}" in any of its strings becomes its number. Other device fields (taints,
// bindsToNode, allowMultipleAllocations, ...) are copied as they are. A driver has at most 128
// devices, 64 when one has taints or consumes counters (the limits of one slice).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"
#include "berth/api/selectors.h"

namespace berth::kubelet {

// Label of the ResourceSlices the simulated kubelets write (the ones they update and delete).
inline constexpr const char* kSimulatedSliceLabel = "berth.dev/simulated-kubelet";
// Annotation with a digest of the description a slice was written from: a slice whose digest
// differs is rewritten (the server may add defaults, so specs are not compared).
inline constexpr const char* kSliceDigestAnnotation = "berth.dev/devices-digest";

struct DriverDevices {
  std::string driver;
  std::optional<CompiledSelector> node_selector;     // none: every simulated node
  nlohmann::json shared_counters;                    // null or the spec.sharedCounters array
  nlohmann::json devices = nlohmann::json::array();  // the spec.devices array
  std::string digest;                                // of driver, counters and devices
};

// Parses the `--node-devices` file's text; `source` names it in errors.
Result<std::vector<DriverDevices>> ParseNodeDevices(std::string_view text, std::string_view source);
Result<std::vector<DriverDevices>> LoadNodeDevices(const std::string& path);

// Whether `node` gets the driver's devices.
bool Offers(const DriverDevices& d, const Node& node);

// A slice's name: "<node>-<driver, dots as dashes>-<5 characters>" for the devices and
// "<node>-<driver, dots as dashes>-counters-<5 characters>" for the shared counters, the
// characters derived from node, driver and part: stable, so that a restart finds them.
std::string ResourceSliceName(const std::string& node, const std::string& driver,
                              bool counters = false);

// The ResourceSlices node `node` (uid `node_uid`) publishes for `d`, all of pool `node` at the
// given generation and owned by the Node: one with the devices, and when `d` has shared
// counters a second one with them (resource.k8s.io/v1 allows only one of devices and
// sharedCounters in a slice); the pool's resourceSliceCount is their number.
std::vector<nlohmann::json> ResourceSlicesFor(const DriverDevices& d, const std::string& node,
                                              const std::string& node_uid, int64_t generation);

}  // namespace berth::kubelet
