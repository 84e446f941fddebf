// SimulatedKubelets: the kubelets of nodes that have none (KWOK's role). For every simulated
// node it renews the node's Lease in kube-node-lease, heartbeats the node's status, gives the
// node a pod CIDR, and plays the pods bound to it: they start (Running, ready, with a pod IP),
// finish when their run-time annotation says (pod_status.h), and when deleted stay
// Terminating for their grace period (capped) before the kubelet deletes them for good.
//
// It is a client of the API server like any other: informers on nodes and pods, writes over
// HTTP through a RestClient (pipelined in batches). All simulated nodes share one worker
// thread and one queue of due work ordered by time, so thousands of nodes cost one thread.
//
// Threads: Start/Stop from one thread. RunOnce (tests, with run_thread false) from one
// thread. The informers' threads only hand events over.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/clock.h"
#include "client/rest_client.h"
#include "kubelet/node_devices.h"
#include "kubelet/node_status.h"

namespace berth::kubelet {

// A node annotated with this "true" is stopped (`berth node stop`): its kubelet renews no lease,
// posts no status and leaves its pods as they are, as a machine that is down. Removed (or not
// "true"), the kubelet starts again: a new Ready condition, the lease, and the pods' work.
inline constexpr const char* kStoppedAnnotation = "berth.dev/node-stopped";

struct SimulatedKubeletOptions {
  // Which nodes are simulated: every node (`berth up`, where no real kubelet runs), or only
  // nodes annotated `node_annotation: "true"` (a cluster that also has real kubelets).
  bool all_nodes = true;
  std::string node_annotation = "berth.dev/simulated-kubelet";

  // How long a bound pod stays Pending before it runs (the kubelet's sandbox and image pull).
  Duration pod_start_delay = std::chrono::milliseconds(500);
  // A deleted pod stays Terminating for its grace period, but at most this long.
  Duration termination_grace_cap = std::chrono::seconds(1);

  // The kubelet's defaults: a 40 s lease renewed every 10 s (a quarter of its duration); the
  // node status posted at least every 5 minutes (nodeStatusReportFrequency) and at once when
  // it changes (a new image).
  int lease_duration_seconds = 40;
  Duration lease_renew_interval = std::chrono::seconds(10);
  Duration node_status_report_interval = std::chrono::minutes(5);

  // Pod CIDRs for nodes that have none (the node IPAM controller's job): a /node_cidr_prefix
  // per node from cluster_cidr. The default holds 16,384 nodes of 254 pod IPs.
  std::string cluster_cidr = "10.64.0.0/10";
  int node_cidr_prefix = 24;

  // The devices of DRA drivers the nodes offer (`--node-devices`): each simulated node the
  // description selects publishes one ResourceSlice per driver (two with shared counters). Pods
  // with resource claims start only once their claims are allocated and reserved for them, whatever
  // this holds.
  std::vector<DriverDevices> node_devices;

  // Capacity, nodeInfo and addresses written for a node that has no status yet.
  NodeDefaults node_defaults;

  // Writes due within this much of each other go in one pipelined batch.
  Duration batch_window = std::chrono::milliseconds(20);
  // Failed writes are tried again after this long.
  Duration retry_delay = std::chrono::seconds(1);
  // Writes per pipelined batch.
  size_t max_batch = 128;

  // False: no worker thread; the caller drives the work with RunOnce (tests).
  bool run_thread = true;
  uint64_t seed = 1;  // spreads the first heartbeats
  std::function<void(const std::string&)> log;
  // ForKubeconfig: lists and watches served in this process (`berth up`), read by the
  // kubelets' informers instead of HTTP; null: HTTP. Must outlive the kubelets.
  client::LocalListWatch* local_list_watch = nullptr;
};

class SimulatedKubelets {
 public:
  // `rest` and `clock` must outlive this object.
  SimulatedKubelets(client::RestClient* rest, const Clock* clock, SimulatedKubeletOptions options);
  // The kubelets of the cluster a kubeconfig file names, with a client of their own (no
  // client-side rate limit: heartbeats are paced by their intervals) and the wall clock.
  static Result<std::unique_ptr<SimulatedKubelets>> ForKubeconfig(const std::string& kubeconfig,
                                                                  SimulatedKubeletOptions options);
  ~SimulatedKubelets();
  SimulatedKubelets(const SimulatedKubelets&) = delete;
  SimulatedKubelets& operator=(const SimulatedKubelets&) = delete;

  // Starts the informers (and the worker thread, when options.run_thread).
  VoidResult Start();
  void Stop();

  // Both informers have listed.
  bool HasSynced() const;
  // Handles the events received so far and does every piece of work due by clock->Now() (or
  // within the batch window after it). Returns the number of writes sent.
  size_t RunOnce();
  // Waits until an informer hands over an event, or `timeout` passes; true for an event.
  bool WaitForEvent(std::chrono::milliseconds timeout);
  // Events handed over and not yet handled by RunOnce (any thread).
  bool HasPendingEvents() const;
  // When the earliest queued piece of work is due (RunOnce's caller, with run_thread false).
  std::optional<TimePoint> NextDue() const;

  struct Stats {
    uint64_t lease_writes = 0, node_status_writes = 0, pod_status_writes = 0, pod_deletions = 0,
             failed_writes = 0;
    size_t nodes = 0, pods = 0, terminating = 0, stopped_nodes = 0;
  };
  Stats stats() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace berth::kubelet
