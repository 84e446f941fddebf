#include "kubelet/pod_status.h"

#include <fmt/format.h>

#include "api/codec.h"

namespace berth::kubelet {

namespace {

using Json = nlohmann::json;

uint64_t Fnv1a(std::string_view text, uint64_t seed) {
  uint64_t h = 14695981039346656037ull ^ seed;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

bool HasCpuOrMemory(const ResourceList& list) {
  return list.find("cpu") != list.end() || list.find("memory") != list.end();
}

Json Condition(const char* type, bool status, const std::string& at, const char* reason = nullptr,
               const std::string& message = "") {
  Json c = {{"type", type},
            {"status", status ? "True" : "False"},
            {"lastProbeTime", nullptr},
            {"lastTransitionTime", at}};
  if (reason) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

// PodScheduled keeps the time the scheduler's condition gave it (the status carries no time
// in the typed pod, so the start time stands in when the condition is not there yet).
Json ScheduledCondition(const std::string& at) { return Condition("PodScheduled", true, at); }

Json ContainerBase(const Pod& pod, const Container& c, int restart) {
  return {{"name", c.name},
          {"image", ReportedImage(c.image)},
          {"imageID", ImageId(c.image)},
          {"containerID", ContainerId(pod.metadata.uid, c.name, restart)},
          {"restartCount", restart}};
}

void AddResources(const Container& c, const AllocatedResources& allocated, Json& status);

// Init containers ran to completion before the others started (sidecars, restartPolicy
// Always, keep running).
Json InitContainerStatuses(const Pod& pod, const ContainerRun& run, bool running,
                           const AllocatedResources& allocated = {}) {
  Json out = Json::array();
  const std::string at = FormatTimestamp(run.started);
  for (const Container& c : pod.spec.init_containers) {
    Json s = ContainerBase(pod, c, 0);
    s["restartCount"] = 0;
    const bool sidecar = c.restart_policy && *c.restart_policy == "Always";
    if (sidecar && running) {
      s["state"] = {{"running", {{"startedAt", at}}}};
      s["ready"] = true;
      s["started"] = true;
      AddResources(c, allocated, s);
    } else {
      s["state"] = {{"terminated",
                     {{"exitCode", 0},
                      {"reason", "Completed"},
                      {"startedAt", at},
                      {"finishedAt", at},
                      {"containerID", s["containerID"]}}}};
      s["ready"] = !sidecar;
      s["started"] = false;
    }
    s["lastState"] = Json::object();
    out.push_back(std::move(s));
  }
  return out;
}

Json Placement(const PodPlacement& where, Json status) {
  status["hostIP"] = where.host_ip;
  status["hostIPs"] = Json::array({{{"ip", where.host_ip}}});
  if (!where.pod_ip.empty()) {
    status["podIP"] = where.pod_ip;
    status["podIPs"] = Json::array({{{"ip", where.pod_ip}}});
  }
  status["startTime"] = FormatTimestamp(where.started);
  return status;
}

Json LastState(const ContainerRun& run, const std::string& container_id) {
  if (run.restart_count == 0) return Json::object();
  return {{"terminated",
           {{"exitCode", run.last_exit_code},
            {"reason", run.last_exit_code == 0 ? "Completed" : "Error"},
            {"startedAt", FormatTimestamp(run.last_started)},
            {"finishedAt", FormatTimestamp(run.last_finished)},
            {"containerID", container_id}}}};
}

}  // namespace

std::string QosClass(const Pod& pod) {
  bool any = false, guaranteed = true;
  auto visit = [&](const Container& c) {
    const auto& req = c.resources.requests;
    const auto& lim = c.resources.limits;
    any = any || HasCpuOrMemory(req) || HasCpuOrMemory(lim);
    for (const char* name : {"cpu", "memory"}) {
      auto l = lim.find(name);
      if (l == lim.end()) {
        guaranteed = false;
        continue;
      }
      // A request left out defaults to the limit.
      auto r = req.find(name);
      if (r != req.end() && r->second.MilliValue() != l->second.MilliValue()) guaranteed = false;
    }
  };
  for (const Container& c : pod.spec.init_containers) visit(c);
  for (const Container& c : pod.spec.containers) visit(c);
  if (!any) return "BestEffort";
  return guaranteed ? "Guaranteed" : "Burstable";
}

std::string ImageDigest(std::string_view image) {
  std::string hex;
  for (uint64_t seed = 0; seed < 4; ++seed) hex += fmt::format("{:016x}", Fnv1a(image, seed));
  return "sha256:" + hex;
}

int64_t ImageSizeBytes(std::string_view image) {
  constexpr int64_t kMiB = 1024 * 1024;
  return (20 + static_cast<int64_t>(Fnv1a(image, 99) % 501)) * kMiB;
}

std::string ReportedImage(std::string_view image) {
  std::string name(image);
  const size_t slash = name.find('/');
  if (slash == std::string::npos) {
    name = "docker.io/library/" + name;
  } else {
    const std::string first = name.substr(0, slash);
    if (first.find('.') == std::string::npos && first.find(':') == std::string::npos &&
        first != "localhost") {
      name = "docker.io/" + name;
    }
  }
  const size_t last_slash = name.rfind('/');
  const size_t colon = name.rfind(':');
  const bool tagged = colon != std::string::npos && colon > last_slash;
  if (!tagged && name.find('@') == std::string::npos) name += ":latest";
  return name;
}

std::string ImageId(std::string_view image) {
  std::string repo = ReportedImage(image);
  if (size_t at = repo.find('@'); at != std::string::npos) return repo;
  const size_t colon = repo.rfind(':');
  if (colon != std::string::npos && colon > repo.rfind('/')) repo.resize(colon);
  return repo + "@" + ImageDigest(image);
}

std::string ContainerId(std::string_view pod_uid, std::string_view container, int restart) {
  const std::string key = fmt::format("{}/{}/{}", pod_uid, container, restart);
  std::string hex;
  for (uint64_t seed = 10; seed < 14; ++seed) hex += fmt::format("{:016x}", Fnv1a(key, seed));
  return "containerd://" + hex;
}

namespace {

Json ResourceListJson(const ResourceList& list) {
  Json out = Json::object();
  for (const auto& [name, q] : list) out[name] = q.String();
  return out;
}

// allocatedResources and resources of a running container's status.
void AddResources(const Container& c, const AllocatedResources& allocated, Json& status) {
  auto it = allocated.find(c.name);
  const ResourceRequirements& r = it != allocated.end() ? it->second : c.resources;
  if (r.requests.empty() && r.limits.empty()) {
    status["resources"] = Json::object();
    return;
  }
  if (!r.requests.empty()) status["allocatedResources"] = ResourceListJson(r.requests);
  Json res = Json::object();
  if (!r.requests.empty()) res["requests"] = ResourceListJson(r.requests);
  if (!r.limits.empty()) res["limits"] = ResourceListJson(r.limits);
  status["resources"] = std::move(res);
}

}  // namespace

AllocatedResources SpecResources(const Pod& pod) {
  AllocatedResources out;
  for (const Container& c : pod.spec.containers) out[c.name] = c.resources;
  for (const Container& c : pod.spec.init_containers)
    if (c.restart_policy && *c.restart_policy == "Always") out[c.name] = c.resources;
  return out;
}

Json RunningStatus(const Pod& pod, const PodPlacement& where, const ContainerRun& run,
                   const AllocatedResources& allocated) {
  const std::string at = FormatTimestamp(where.started);
  const std::string ready_at = FormatTimestamp(run.started);
  Json containers = Json::array();
  for (const Container& c : pod.spec.containers) {
    Json s = ContainerBase(pod, c, run.restart_count);
    s["state"] = {{"running", {{"startedAt", ready_at}}}};
    s["lastState"] = LastState(run, ContainerId(pod.metadata.uid, c.name, run.restart_count - 1));
    s["ready"] = true;
    s["started"] = true;
    AddResources(c, allocated, s);
    containers.push_back(std::move(s));
  }
  Json status = {{"phase", "Running"},
                 {"conditions",
                  {Condition("PodReadyToStartContainers", true, at),
                   Condition("Initialized", true, at), Condition("Ready", true, ready_at),
                   Condition("ContainersReady", true, ready_at), ScheduledCondition(at)}},
                 {"qosClass", QosClass(pod)},
                 {"containerStatuses", std::move(containers)}};
  if (!pod.spec.init_containers.empty()) {
    status["initContainerStatuses"] = InitContainerStatuses(pod, run, true, allocated);
  }
  return Placement(where, std::move(status));
}

Json FinishedStatus(const Pod& pod, const PodPlacement& where, const ContainerRun& run,
                    int exit_code, int64_t finished) {
  const std::string at = FormatTimestamp(where.started);
  const std::string done = FormatTimestamp(finished);
  const bool ok = exit_code == 0;
  const char* reason = ok ? "Completed" : "Error";
  Json containers = Json::array();
  std::string names;
  for (const Container& c : pod.spec.containers) {
    Json s = ContainerBase(pod, c, run.restart_count);
    s["state"] = {{"terminated",
                   {{"exitCode", exit_code},
                    {"reason", reason},
                    {"startedAt", FormatTimestamp(run.started)},
                    {"finishedAt", done},
                    {"containerID", s["containerID"]}}}};
    s["lastState"] = LastState(run, ContainerId(pod.metadata.uid, c.name, run.restart_count - 1));
    s["ready"] = false;
    s["started"] = false;
    containers.push_back(std::move(s));
    names += (names.empty() ? "" : " ") + c.name;
  }
  // As the kubelet words them: a pod that succeeded is "PodCompleted"; one that failed has
  // containers that are not ready.
  const std::string unready = fmt::format("containers with unready status: [{}]", names);
  Json ready = ok ? Condition("Ready", false, done, "PodCompleted")
                  : Condition("Ready", false, done, "ContainersNotReady", unready);
  Json containers_ready =
      ok ? Condition("ContainersReady", false, done, "PodCompleted")
         : Condition("ContainersReady", false, done, "ContainersNotReady", unready);
  Json status = {{"phase", ok ? "Succeeded" : "Failed"},
                 {"conditions",
                  {Condition("PodReadyToStartContainers", false, done),
                   Condition("Initialized", true, at, ok ? "PodCompleted" : nullptr),
                   std::move(ready), std::move(containers_ready), ScheduledCondition(at)}},
                 {"qosClass", QosClass(pod)},
                 {"containerStatuses", std::move(containers)}};
  if (!pod.spec.init_containers.empty()) {
    status["initContainerStatuses"] = InitContainerStatuses(pod, run, false);
  }
  return Placement(where, std::move(status));
}

}  // namespace berth::kubelet

namespace berth::kubelet {

Json ContainerCreatingStatus(const Pod& pod, const PodPlacement& where) {
  const std::string at = FormatTimestamp(where.started);
  Json containers = Json::array();
  std::string names;
  for (const Container& c : pod.spec.containers) {
    containers.push_back({{"name", c.name},
                          {"image", ReportedImage(c.image)},
                          {"imageID", ""},
                          {"restartCount", 0},
                          {"ready", false},
                          {"started", false},
                          {"state", {{"waiting", {{"reason", "ContainerCreating"}}}}},
                          {"lastState", Json::object()}});
    names += (names.empty() ? "" : " ") + c.name;
  }
  const std::string unready = fmt::format("containers with unready status: [{}]", names);
  Json status = {
      {"phase", "Pending"},
      {"conditions",
       {Condition("PodReadyToStartContainers", false, at), Condition("Initialized", true, at),
        Condition("Ready", false, at, "ContainersNotReady", unready),
        Condition("ContainersReady", false, at, "ContainersNotReady", unready),
        ScheduledCondition(at)}},
      {"qosClass", QosClass(pod)},
      {"containerStatuses", std::move(containers)}};
  return Placement(where, std::move(status));
}

}  // namespace berth::kubelet
