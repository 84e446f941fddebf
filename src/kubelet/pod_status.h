// The pod statuses a simulated kubelet reports, as the kubelet's status manager writes them:
// a started pod (Running, every container running and ready), a finished one (Succeeded or
// Failed, containers terminated) and a restarted container. Each is the `status` of a JSON
// merge patch for pods/status; its lists replace the stored ones whole.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "berth/api/objects.h"

namespace berth::kubelet {

// Pod annotations the simulated kubelets read.
// How long the pod's containers run before they exit (seconds, a decimal number). Without it
// they run until the pod is deleted.
inline constexpr std::string_view kRunSecondsAnnotation = "berth.dev/run-seconds";
// The exit code they exit with (default 0): 0 ends a Never/OnFailure pod Succeeded, any other
// Failed.
inline constexpr std::string_view kExitCodeAnnotation = "berth.dev/exit-code";

// Where and when a pod runs.
struct PodPlacement {
  std::string host_ip;
  std::string pod_ip;
  int64_t started = 0;  // seconds since the epoch: startTime and the containers' startedAt
};

// Guaranteed, Burstable or BestEffort, from the containers' requests and limits (as
// v1qos.GetPodQOS).
std::string QosClass(const Pod& pod);

// A stable made-up digest of an image ("sha256:<64 hex>") and the size a node reports for it:
// between 20 and 520 MiB, derived from the name, so that the same image has the same size on
// every node.
std::string ImageDigest(std::string_view image);
int64_t ImageSizeBytes(std::string_view image);

// A container's identity: the image as reported ("docker.io/library/nginx:latest" for
// "nginx"), its imageID and a containerID stable for the pod, container and restart.
std::string ReportedImage(std::string_view image);
std::string ImageId(std::string_view image);
std::string ContainerId(std::string_view pod_uid, std::string_view container, int restart);

// One run of the pod's containers: when it started, and for a restart, how the run before
// it ended (lastState).
struct ContainerRun {
  int64_t started = 0;
  int restart_count = 0;
  int64_t last_started = 0, last_finished = 0;
  int last_exit_code = 0;
};

// The resources actuated for a pod's containers, by container name (in-place resize). A
// container missing here runs with what its spec asks.
using AllocatedResources = std::map<std::string, ResourceRequirements>;

// What each running container (and running sidecar) has from its spec: its requests and limits.
AllocatedResources SpecResources(const Pod& pod);

// The status of a pod whose containers are all running and ready. Each container reports the
// resources actuated for it (`allocatedResources` and `resources`), as a kubelet that resizes
// in place does.
nlohmann::json RunningStatus(const Pod& pod, const PodPlacement& where, const ContainerRun& run,
                             const AllocatedResources& allocated = {});

// The status of a pod whose containers exited with `exit_code` at `finished`: phase Succeeded
// (0) or Failed, containers terminated (Completed / Error), Ready false.
nlohmann::json FinishedStatus(const Pod& pod, const PodPlacement& where, const ContainerRun& run,
                              int exit_code, int64_t finished);

// The status of a bound pod whose containers cannot be created yet (its resource claims are
// not prepared): Pending, every container waiting with reason ContainerCreating, not ready.
nlohmann::json ContainerCreatingStatus(const Pod& pod, const PodPlacement& where);

}  // namespace berth::kubelet
