// The pods of SimulatedKubelets: started, finished, restarted and deleted as a kubelet would.
#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "kubelet/json_fields.h"
#include "kubelet/kubelets_impl.h"

namespace berth::kubelet {

using Impl = SimulatedKubelets::Impl;
using Json = nlohmann::json;

namespace {

// As the kubelet's status manager: conditions merge by type, so conditions others set (the
// scheduler's DisruptionTarget) stay; container statuses are replaced whole.
constexpr const char* kStatusPatch = "application/strategic-merge-patch+json";

const Json& Doc(const Pod& pod) {
  static const Json kEmpty = Json::object();
  return pod.raw ? *pod.raw : kEmpty;
}

std::string Annotation(const Pod& pod, std::string_view name) {
  auto it = pod.metadata.annotations.find(std::string(name));
  return it == pod.metadata.annotations.end() ? std::string() : it->second;
}

// The run time the annotation asks for; none when absent or not a non-negative number.
std::optional<Duration> RunTime(const Pod& pod) {
  const std::string text = Annotation(pod, kRunSecondsAnnotation);
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double seconds = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(seconds) || seconds < 0) {
    return std::nullopt;
  }
  return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(seconds));
}

int ExitCode(const Pod& pod) {
  const std::string text = Annotation(pod, kExitCodeAnnotation);
  return text.empty() ? 0 : std::atoi(text.c_str());
}

TimePoint FromSeconds(int64_t s) { return TimePoint(std::chrono::seconds(s)); }

}  // namespace

std::string Impl::PodPath(const Pod& pod) const {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", pod.metadata.namespace_, pod.metadata.name);
}

void Impl::OnPod(const std::shared_ptr<const Pod>& pod) {
  const std::string& node_name = pod->spec.node_name;
  if (node_name.empty()) return;  // not bound: nothing for a kubelet yet
  const std::string key = pod->Key();
  auto it = pods.find(key);
  if (it != pods.end() && it->second.pod->metadata.uid != pod->metadata.uid) {
    OnPodGone(it->second.pod);  // deleted and created again meanwhile
    it = pods.end();
  }
  if (it == pods.end()) {
    PodState st;
    const Json& status = Member(Doc(*pod), "status");
    if (pod->status.phase == "Succeeded" || pod->status.phase == "Failed") {
      st.phase = PodState::kDone;
    } else if (pod->status.phase == "Running") {
      // Running before this process started (a restart): taken up where it is.
      st.phase = PodState::kRunning;
      st.where.pod_ip = StringMember(status, "podIP");
      st.where.host_ip = StringMember(status, "hostIP");
      st.where.started = pod->status.start_time;
      st.run.started = pod->status.start_time;
      const Json& containers = Member(status, "containerStatuses");
      if (containers.is_array() && !containers.empty()) {
        st.run.restart_count = Member(containers[0], "restartCount").is_number_integer()
                                   ? containers[0]["restartCount"].get<int>()
                                   : 0;
        auto started = ParseTimestamp(
            StringMember(Member(Member(containers[0], "state"), "running"), "startedAt"));
        if (started.ok()) st.run.started = *started;
      }
      // What it was running with, as its status reports it.
      st.allocated = SpecResources(*pod);
      for (const ContainerResourceStatus& c : pod->status.container_resources) {
        auto a = st.allocated.find(c.name);
        if (a == st.allocated.end()) continue;
        if (c.allocated) a->second.requests = *c.allocated;
      }
    }
    it = pods.emplace(key, std::move(st)).first;
    pods_by_node[node_name].insert(key);
  }
  it->second.pod = pod;
  NodeState* node = FindNode(node_name);
  if (!node) return;  // not simulated, or not seen yet: OnNode takes it up
  Advance(key, it->second, *node);
}

void Impl::Advance(const std::string& key, PodState& st, NodeState& node) {
  const Pod& pod = *st.pod;
  const TimePoint now = clock->Now();
  // An adopted pod's IP is the node's to keep.
  if (st.phase == PodState::kRunning && !st.owns_ip && !st.where.pod_ip.empty() &&
      !pod.spec.host_network && node.ips) {
    node.ips->MarkUsed(st.where.pod_ip);
    st.owns_ip = true;
  }
  if (pod.metadata.deletion_timestamp) {
    if (st.phase == PodState::kTerminating) return;
    // Stopping the containers takes the grace period (deletionTimestamp is its end), capped.
    st.phase = PodState::kTerminating;
    ++terminating;
    TimePoint at = std::min(FromSeconds(*pod.metadata.deletion_timestamp),
                            now + options.termination_grace_cap);
    st.token = Schedule(std::max(at, now), TaskKind::kDeletePod, key);
    return;
  }
  if (st.phase == PodState::kWaiting && claim_waiters.count(key)) {
    // Past its start delay, waiting for its claims: a change of the pod (its claims'
    // statuses) is looked at now.
    st.token = Schedule(now, TaskKind::kStartPod, key);
  } else if (st.phase == PodState::kWaiting && st.token == 0) {
    st.token = Schedule(now + options.pod_start_delay, TaskKind::kStartPod, key);
  } else if (st.phase == PodState::kRunning && st.token == 0) {
    ScheduleFinish(key, st);
  }
  if (st.phase == PodState::kRunning) TryResize(st, node);
}

void Impl::ScheduleFinish(const std::string& key, PodState& st) {
  auto run = RunTime(*st.pod);
  if (!run) return;
  st.token = Schedule(FromSeconds(st.run.started) + *run, TaskKind::kFinishPod, key);
}

void Impl::ReleaseIp(PodState& st) {
  if (!st.owns_ip) return;
  st.owns_ip = false;
  if (NodeState* node = FindNode(st.pod->spec.node_name); node && node->ips) {
    node->ips->Release(st.where.pod_ip);
  }
}

void Impl::OnPodGone(const std::shared_ptr<const Pod>& pod) {
  const std::string key = pod->Key();
  auto it = pods.find(key);
  if (it == pods.end() || it->second.pod->metadata.uid != pod->metadata.uid) return;
  ReleaseIp(it->second);
  claim_waiters.erase(key);
  if (it->second.phase == PodState::kTerminating) --terminating;
  if (auto bound = pods_by_node.find(pod->spec.node_name); bound != pods_by_node.end()) {
    bound->second.erase(key);
    if (bound->second.empty()) pods_by_node.erase(bound);
  }
  pods.erase(it);
  RetryDeferredResizes(pod->spec.node_name);
}

void Impl::StartPod(const std::string& key, PodState& st) {
  st.token = 0;
  NodeState* node = FindNode(st.pod->spec.node_name);
  if (!node) return;  // gone meanwhile: started when it comes back
  const Pod& pod = *st.pod;
  if (!ClaimsReady(pod)) {
    WaitForClaims(key, st, *node);
    return;
  }
  claim_waiters.erase(key);
  st.where.host_ip = node->internal_ip;
  st.where.started = NowSeconds();
  st.run = ContainerRun{.started = st.where.started};
  if (pod.spec.host_network) {
    st.where.pod_ip = node->internal_ip;
  } else if (!st.owns_ip) {
    auto ip = node->ips ? node->ips->Allocate() : std::nullopt;
    if (!ip) Log(fmt::format("no pod IP left on node {} for pod {}", node->name, key));
    st.where.pod_ip = ip.value_or("");
    st.owns_ip = ip.has_value();
  }
  st.phase = PodState::kRunning;
  st.allocated = SpecResources(pod);
  bool images_changed = false;
  for (const Container& c : pod.spec.init_containers)
    images_changed |= AddImage(node->images, c.image);
  for (const Container& c : pod.spec.containers) images_changed |= AddImage(node->images, c.image);
  if (images_changed) {
    node->images_dirty = true;
    NodeStatusChanged(*node);
  }
  ScheduleFinish(key, st);
  {
    std::lock_guard lock(stats_mu);
    ++counters.pod_status_writes;
  }
  const uint64_t token = st.token;
  Queue("PATCH", PodPath(pod) + "/status",
        Json{{"status", RunningStatus(pod, st.where, st.run, st.allocated)}}.dump(), kStatusPatch,
        [this, key, token](const VoidResult& r) {
          auto it = pods.find(key);
          if (r.ok() || it == pods.end() || it->second.token != token) return;
          if (r.error().code == ErrorCode::kNotFound) return;  // gone: its DELETED event follows
          // Not written: started again later, as the kubelet retries a status it could not post.
          ReleaseIp(it->second);
          it->second.phase = PodState::kWaiting;
          it->second.token = Schedule(clock->Now() + options.retry_delay, TaskKind::kStartPod, key);
        });
}

void Impl::FinishPod(const std::string& key, PodState& st) {
  const Pod& pod = *st.pod;
  const int exit_code = ExitCode(pod);
  const std::string policy = StringMember(Member(Doc(pod), "spec"), "restartPolicy");
  const int64_t now = NowSeconds();
  st.token = 0;
  Json status;
  if (policy == "Never" || (policy == "OnFailure" && exit_code == 0)) {
    status = FinishedStatus(pod, st.where, st.run, exit_code, now);
    st.phase = PodState::kDone;
    ReleaseIp(st);
  } else {
    // Always, or OnFailure after a failure: the container starts again in the same pod (the
    // kubelet's crash-loop back-off is left out).
    st.run.last_started = st.run.started;
    st.run.last_finished = now;
    st.run.last_exit_code = exit_code;
    st.run.started = now;
    ++st.run.restart_count;
    status = RunningStatus(pod, st.where, st.run, st.allocated);
    // The next run lasts its full time from now: `started` is whole seconds, and a run shorter
    // than a second counted from it would end at once, over and over.
    if (auto run = RunTime(pod))
      st.token = Schedule(clock->Now() + *run, TaskKind::kFinishPod, key);
  }
  {
    std::lock_guard lock(stats_mu);
    ++counters.pod_status_writes;
  }
  const uint64_t token = st.token;
  Queue("PATCH", PodPath(pod) + "/status", Json{{"status", std::move(status)}}.dump(), kStatusPatch,
        [this, key, token](const VoidResult& r) {
          auto it = pods.find(key);
          if (r.ok() || it == pods.end() || it->second.token != token) return;
          if (r.error().code == ErrorCode::kNotFound) return;
          it->second.token =
              Schedule(clock->Now() + options.retry_delay, TaskKind::kFinishPod, key);
        });
}

void Impl::DeletePod(const std::string& key, PodState& st) {
  // The containers have stopped: the kubelet confirms the deletion with no grace, for this
  // pod only (its uid), so a pod created again under the name is left alone.
  const Json options_body = {{"apiVersion", "v1"},
                             {"kind", "DeleteOptions"},
                             {"gracePeriodSeconds", 0},
                             {"preconditions", {{"uid", st.pod->metadata.uid}}}};
  {
    std::lock_guard lock(stats_mu);
    ++counters.pod_deletions;
  }
  const uint64_t token = st.token;
  Queue("DELETE", PodPath(*st.pod), options_body.dump(), "application/json",
        [this, key, token](const VoidResult& r) {
          auto it = pods.find(key);
          if (r.ok() || it == pods.end() || it->second.token != token) return;
          const ErrorCode code = r.error().code;
          if (code == ErrorCode::kNotFound || code == ErrorCode::kConflict) return;
          it->second.token =
              Schedule(clock->Now() + options.retry_delay, TaskKind::kDeletePod, key);
        });
}

}  // namespace berth::kubelet
