// The inside of SimulatedKubelets (simulated_kubelets.h), shared by its three files: the
// plumbing (events in, the queue of due work, batched writes out: simulated_kubelets.cc),
// the nodes (leases, status, pod CIDRs: node_work.cc) and the pods (pod_work.cc).
//
// Everything below `events` is touched by the worker only (the thread, or RunOnce's caller).
#pragma once

#include <map>
#include <optional>
#include <queue>
#include <random>
#include <set>
#include <unordered_map>

#include "api/codec.h"
#include "client/informer.h"
#include "kubelet/node_devices.h"
#include "kubelet/node_status.h"
#include "kubelet/pod_status.h"
#include "kubelet/simulated_kubelets.h"

namespace berth::kubelet {

struct SimulatedKubelets::Impl {
  Impl(client::RestClient* rest, const Clock* clock, SimulatedKubeletOptions options);

  // ---- events from the informers (any thread)
  struct Event {
    enum Kind { kNode, kNodeGone, kPod, kPodGone, kSlice, kSliceGone, kClaim, kClaimGone } kind;
    Object object;
  };
  void Push(Event::Kind kind, const Object& object);

  // ---- due work (worker)
  enum class TaskKind { kLease, kNodeStatus, kPodCidr, kStartPod, kFinishPod, kDeletePod, kSlices };
  struct Task {
    TimePoint due;
    uint64_t seq;
    TaskKind kind;
    std::string key;  // node name or pod namespace/name
    uint64_t token;   // the task is stale unless its object still holds this token
    bool operator>(const Task& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };
  // Schedules a task and returns its token.
  uint64_t Schedule(TimePoint due, TaskKind kind, const std::string& key);
  void Execute(const Task& task);

  // ---- writes (worker): sent together at the end of a round
  struct Write {
    std::string method, path, body, content_type;
    std::function<void(const VoidResult&)> done;
  };
  void Queue(std::string method, std::string path, std::string body, std::string content_type,
             std::function<void(const VoidResult&)> done);
  size_t Flush();
  size_t RunOnce();
  void RunThread();

  // ---- nodes (node_work.cc)
  struct NodeState {
    std::string name, uid, internal_ip, ready_since;
    std::optional<Ipv4Net> cidr;
    std::optional<PodIpPool> ips;
    NodeImageMap images;
    bool lease_created = false;
    bool needs_registration = false;
    nlohmann::json registration = nlohmann::json::object();  // the status fields it lacks
    bool images_dirty = false;
    // status.declaredFeatures as the kubelet declares it, and whether the node's differs.
    std::vector<std::string> declared_features;
    bool features_dirty = false;
    // Annotated kStoppedAnnotation: no lease, no status, pods left as they are.
    bool stopped = false;
    uint64_t lease_token = 0, status_token = 0, cidr_token = 0, slices_token = 0;
    ResourceList allocatable;  // status.allocatable as last seen: resizes are checked against it
    // The drivers of options.node_devices whose devices the node offers (by index).
    std::vector<size_t> offered;
  };
  void OnNode(const std::shared_ptr<const Node>& node);
  void OnNodeGone(const std::string& name);
  bool Selected(const Node& node) const;
  void RenewLease(NodeState& node);
  void PostNodeStatus(NodeState& node);
  void PostPodCidr(NodeState& node);
  void NodeStatusChanged(NodeState& node);
  // Applies the node's stopped annotation; true when it changed.
  bool UpdateStopped(NodeState& state, const Node& node);
  // Compares the features the node should declare with its status; true when they differ.
  bool UpdateDeclaredFeatures(NodeState& state, const Node& node);

  // ---- pods (pod_work.cc)
  struct PodState {
    std::shared_ptr<const Pod> pod;
    enum Phase { kWaiting, kRunning, kDone, kTerminating } phase = kWaiting;
    PodPlacement where;
    ContainerRun run;
    bool owns_ip = false;            // where.pod_ip came from the node's pool
    bool reported_creating = false;  // its ContainerCreating status was written
    uint64_t token = 0;              // of the one task pending for the pod
    // The resources actuated for each running container (by name): what its status reports
    // as allocated, until a resize of the spec is admitted (pod_resize.cc).
    AllocatedResources allocated;
    std::string resize_pending;  // the PodResizePending reason and message reported, or empty
  };
  void OnPod(const std::shared_ptr<const Pod>& pod);
  void OnPodGone(const std::shared_ptr<const Pod>& pod);
  // Schedules what comes next for a pod whose node is simulated and known.
  void Advance(const std::string& key, PodState& pod, NodeState& node);
  void StartPod(const std::string& key, PodState& pod);
  void FinishPod(const std::string& key, PodState& pod);
  void DeletePod(const std::string& key, PodState& pod);
  void ReleaseIp(PodState& pod);
  void ScheduleFinish(const std::string& key, PodState& pod);
  // In-place resize (pod_resize.cc): admits a running pod's changed container resources when
  // its node has room, as the kubelet's allocation manager does, or reports PodResizePending.
  void TryResize(PodState& pod, const NodeState& node);
  // Retries the deferred resizes on a node after room was freed there.
  void RetryDeferredResizes(const std::string& node_name);

  // ---- devices (device_work.cc): ResourceSlices of the nodes, claims of the pods
  void OnSlice(const nlohmann::json& slice, bool gone);
  void OnClaim(const nlohmann::json& claim, bool gone);
  // Which drivers' devices the node offers; schedules the slices' sync when that changed.
  void UpdateOffered(NodeState& node, const Node& obj);
  void SyncSlices(NodeState& node);
  // Once the slices' informer has listed and its events are handled: every node's slices are
  // synced.
  void SlicesSynced();
  void DeleteSlices(const std::string& node);
  // Whether every resource claim of the pod is allocated and reserved for it (the kubelet's
  // NodePrepareResources would succeed).
  bool ClaimsReady(const Pod& pod) const;
  // Leaves the pod Pending (containers ContainerCreating) until its claims are ready.
  void WaitForClaims(const std::string& key, PodState& pod, NodeState& node);

  std::string PodPath(const Pod& pod) const;
  int64_t NowSeconds() const;
  std::string NowMicro() const;
  void Log(const std::string& message) const;
  NodeState* FindNode(const std::string& name);

  // Owned when made by ForKubeconfig.
  std::unique_ptr<client::RestClient> owned_rest;
  std::unique_ptr<Clock> owned_clock;
  client::RestClient* rest;
  const Clock* clock;
  SimulatedKubeletOptions options;

  std::unique_ptr<client::Informer> node_informer, pod_informer, slice_informer, claim_informer;
  mutable std::mutex mu;
  std::condition_variable cv;
  std::vector<Event> events;
  bool stopping = false;
  std::thread thread;
  mutable std::mutex stats_mu;
  Stats counters;

  // Due work by time: node Leases apart from the rest, as a kubelet renews its lease whatever
  // else it is doing (RunOnce takes every due renewal first in each round).
  using TaskQueue = std::priority_queue<Task, std::vector<Task>, std::greater<Task>>;
  TaskQueue due, lease_due;
  // The earliest due work of either queue.
  std::optional<TimePoint> NextDue() const;
  uint64_t next_seq = 0;
  std::vector<Write> writes;
  std::unordered_map<std::string, NodeState> nodes;
  std::unordered_map<std::string, PodState> pods;
  size_t terminating = 0;    // pods in kTerminating
  size_t stopped_nodes = 0;  // nodes whose `stopped` is set
  // Pods by node name, also for nodes not (yet) known: they start when their node arrives.
  std::unordered_map<std::string, std::set<std::string>> pods_by_node;
  std::optional<PodCidrAllocator> cidrs;
  // The ResourceSlices the simulated kubelets wrote, by node name and slice name.
  std::unordered_map<std::string, std::map<std::string, nlohmann::json>> slices_by_node;
  bool slices_synced = false;
  // ResourceClaims by "namespace/name", and the pods waiting for theirs.
  std::unordered_map<std::string, nlohmann::json> claims;
  std::set<std::string> claim_waiters;
  uint32_t next_node_ip = 0;  // for nodes that report no InternalIP
  std::mt19937_64 random;
};

}  // namespace berth::kubelet
