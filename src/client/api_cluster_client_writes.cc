// ApiClusterClient's writes (ClusterWriter): bindings through the write combiner, deletions,
// pod status patches, volume bindings, and the events it queues for EventLoop.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <thread>

#include "api/json_text.h"
#include "client/api_cluster_client.h"
#include "client/api_cluster_client_internal.h"
#include "client/micro_time.h"

namespace berth::client {

using Json = nlohmann::json;

namespace internal {

void BackOff(std::chrono::milliseconds* wait) {
  static thread_local std::mt19937 rng{std::random_device{}()};
  const auto w = wait->count();
  std::this_thread::sleep_for(
      std::chrono::milliseconds(w / 2 + std::uniform_int_distribution<long>(0, w)(rng)));
  *wait = std::min(*wait * 2, std::chrono::milliseconds(1000));
}

std::string PodPath(const Pod& pod) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", pod.metadata.namespace_, pod.metadata.name);
}

}  // namespace internal

using internal::BackOff;
using internal::kEventBatch;
using internal::kMaxQueuedEvents;
using internal::kUnknownOutcomeBudget;
using internal::OutcomeUnknown;
using internal::PodPath;

VoidResult ApiClusterClient::Bind(const Pod& pod, std::string_view node_name) {
  // Written without a document: a binding is sent for every pod.
  std::string binding;
  binding.reserve(200);
  binding.append(R"({"apiVersion":"v1","kind":"Binding","metadata":{"name":)");
  AppendJsonString(pod.metadata.name, &binding);
  binding.append(R"(,"namespace":)");
  AppendJsonString(pod.metadata.namespace_, &binding);
  binding.append(R"(,"uid":)");
  AppendJsonString(pod.metadata.uid, &binding);
  binding.append(R"(},"target":{"apiVersion":"v1","kind":"Node","name":)");
  AppendJsonString(node_name, &binding);
  binding.append("}}");
  // A POST whose answer was lost (a cut connection, a timeout) may have bound the pod, and a
  // repeated one (here, or the HTTP client's resend on a fresh connection) is then refused
  // with 409. The server binds only an unbound pod, so sending the binding again is safe; a 409
  // is settled by the pod itself: bound to this node means an earlier attempt landed (success,
  // reported once), anything else is a real Conflict.
  const std::string path = PodPath(pod) + "/binding";
  auto wait = std::chrono::milliseconds(100);
  const auto give_up = std::chrono::steady_clock::now() + kUnknownOutcomeBudget;
  for (int attempt = 0;; ++attempt) {
    // The first attempt goes with the other binding threads' (WriteCombiner). A retry, and a
    // first attempt turned away for now (429) or never sent, take the one-request path, which
    // retries those itself.
    VoidRequestResult r =
        attempt == 0 ? bindings_.Send(path, binding) : rest_->SendEncoded("POST", path, binding);
    if (attempt == 0 && !r.ok() &&
        (r.error().code == ErrorCode::kTooManyRequests || r.error().never_sent)) {
      r = rest_->SendEncoded("POST", path, binding);
    }
    if (r.ok()) return {};
    if (r.error().code == ErrorCode::kConflict) {
      // The read that settles it can be cut as well: it is retried within the same budget, or
      // an earlier attempt that did bind would be reported as a conflict.
      for (;;) {
        auto live = rest_->Get(PodPath(pod));
        if (live.ok()) {
          if (!live->is_object()) return r.error();
          const Json& meta = (*live)["metadata"];
          const Json& spec = (*live)["spec"];
          const bool same_pod =
              pod.metadata.uid.empty() || meta.value("uid", "") == pod.metadata.uid;
          if (same_pod && spec.is_object() && spec.value("nodeName", "") == node_name) return {};
          return r.error();
        }
        if (!OutcomeUnknown(live.error()) || std::chrono::steady_clock::now() > give_up)
          return r.error();
        BackOff(&wait);
      }
    }
    if (!OutcomeUnknown(r.error()) || std::chrono::steady_clock::now() > give_up) return r.error();
    if (log_)
      log_(fmt::format("binding {} to {} is retried: {}", pod.Key(), node_name, r.error().message));
    BackOff(&wait);
  }
}

VoidResult ApiClusterClient::DeletePod(const Pod& pod,
                                       std::function<void(const Error&)> on_failure) {
  // Queued: the scheduling thread (PostFilter) does not wait for the API server, and victims go
  // in parallel, as upstream's asynchronous preemption. A failure is logged by the writer and
  // reported to the caller, which retries the preemptor at once: no deletion event will come to
  // move it out of the unschedulable pool.
  victim_writer_.Submit("preempting pod " + pod.Key(),
                        [this, victim = pod, on_failure = std::move(on_failure)] {
                          VoidResult r = DeleteVictim(victim);
                          if (!r.ok() && on_failure) on_failure(r.error());
                          return r;
                        });
  return {};
}

void ApiClusterClient::DeletePodThen(const Pod& pod, std::function<void(const Error*)> done) {
  // On the victim writers too: `done` runs on the writer thread that made the calls.
  auto shared_done = std::make_shared<std::function<void(const Error*)>>(std::move(done));
  const bool queued =
      victim_writer_.Submit("preempting pod " + pod.Key(), [this, victim = pod, shared_done] {
        VoidResult r = DeleteVictim(victim);
        if (*shared_done) (*shared_done)(r.ok() ? nullptr : &r.error());
        return r;
      });
  if (!queued && *shared_done) {
    const Error dropped{"the deletion was dropped: too many writes are waiting",
                        ErrorCode::kUnavailable};
    (*shared_done)(&dropped);
  }
}

VoidResult ApiClusterClient::DeleteVictim(const Pod& pod) {
  // Preemption victims learn why they go before they go (the DisruptionTarget condition).
  Json cond = {{"type", "DisruptionTarget"},
               {"status", "True"},
               {"reason", "PreemptionByScheduler"},
               {"message", fmt::format("{}: preempting to accommodate a higher priority pod",
                                       reporting_name_)},
               {"lastTransitionTime",
                FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count())}};
  auto patched = rest_->Patch(PodPath(pod) + "/status", Json{{"status", {{"conditions", {cond}}}}},
                              "application/strategic-merge-patch+json");
  if (!patched.ok() && patched.error().code == ErrorCode::kNotFound) return {};  // already gone
  if (!patched.ok() && log_)
    log_("setting DisruptionTarget on " + pod.Key() + ": " + patched.error().message);
  Json opts = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
  if (!pod.metadata.uid.empty()) opts["preconditions"] = {{"uid", pod.metadata.uid}};
  auto r = rest_->Delete(PodPath(pod), opts);
  if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();  // gone is as good
  return {};
}

VoidResult ApiClusterClient::SetNominatedNodeName(const Pod& pod, std::string_view node_name) {
  Json patch = {
      {"status", {{"nominatedNodeName", node_name.empty() ? Json(nullptr) : Json(node_name)}}}};
  // Status patches go through the status writer: the scheduler does not wait for them (a
  // failure is logged), as kube-scheduler's asynchronous API calls.
  QueueStatusPatch(pod, "setting nominatedNodeName of pod", std::move(patch),
                   "application/merge-patch+json");
  return {};
}

VoidResult ApiClusterClient::SetPodScheduledCondition(const Pod& pod, const PodCondition& cond) {
  Json c = {{"type", cond.type},
            {"status", cond.status},
            {"lastProbeTime", nullptr},
            {"lastTransitionTime",
             FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                 std::chrono::system_clock::now().time_since_epoch())
                                 .count())}};
  if (!cond.reason.empty()) c["reason"] = cond.reason;
  if (!cond.message.empty()) c["message"] = cond.message;
  Json patch = {
      {"status", {{"$setElementOrder/conditions", {{{"type", cond.type}}}}, {"conditions", {c}}}}};
  QueueStatusPatch(pod, "updating the PodScheduled condition of pod", std::move(patch),
                   "application/strategic-merge-patch+json");
  return {};
}

void ApiClusterClient::AnnotatePod(const Pod& pod,
                                   const std::map<std::string, std::string>& annotations) {
  Ptr<Pod> live = GetPod(pod.metadata.namespace_, pod.metadata.name);
  if (!live) return;
  Json changed = Json::object();
  for (const auto& [k, v] : annotations) {
    auto it = live->metadata.annotations.find(k);
    if (it == live->metadata.annotations.end() || it->second != v) changed[k] = v;
  }
  if (changed.empty()) return;
  QueueStatusPatch(*live, "recording the scheduling decision on pod",
                   Json{{"metadata", {{"annotations", std::move(changed)}}}},
                   "application/merge-patch+json", "");
}

void ApiClusterClient::QueueStatusPatch(const Pod& pod, std::string_view what, Json patch,
                                        std::string content_type, std::string_view subresource) {
  std::string path = PodPath(pod) + std::string(subresource);
  status_writer_.Submit(std::string(what) + " " + pod.Key(),
                        [this, path, patch = std::move(patch), content_type]() -> VoidResult {
                          auto r = rest_->Send("PATCH", path, patch, content_type);
                          // A pod deleted meanwhile needs no status.
                          if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();
                          return {};
                        });
}

VoidResult ApiClusterClient::BindVolume(const PersistentVolumeClaim& pvc,
                                        std::string_view pv_name) {
  Json pv_patch = {
      {"spec",
       {{"claimRef",
         {{"kind", "PersistentVolumeClaim"},
          {"apiVersion", "v1"},
          {"namespace", pvc.metadata.namespace_},
          {"name", pvc.metadata.name},
          {"uid", pvc.metadata.uid}}}}},
      // The scheduler chose the volume, as upstream's binder records it.
      {"metadata", {{"annotations", {{"pv.kubernetes.io/bound-by-controller", "yes"}}}}}};
  auto r = rest_->Patch(fmt::format("/api/v1/persistentvolumes/{}", pv_name), pv_patch,
                        "application/merge-patch+json");
  if (!r.ok()) return r.error();
  Json pvc_patch = {{"spec", {{"volumeName", pv_name}}},
                    {"metadata",
                     {{"annotations",
                       {{"pv.kubernetes.io/bind-completed", "yes"},
                        {"pv.kubernetes.io/bound-by-controller", "yes"}}}}}};
  auto r2 = rest_->Patch(fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims/{}",
                                     pvc.metadata.namespace_, pvc.metadata.name),
                         pvc_patch, "application/merge-patch+json");
  if (!r2.ok()) return r2.error();
  return {};
}

VoidResult ApiClusterClient::RequestProvisioning(const PersistentVolumeClaim& pvc,
                                                 std::string_view node_name) {
  Json patch = {
      {"metadata", {{"annotations", {{"volume.kubernetes.io/selected-node", node_name}}}}}};
  auto r = rest_->Patch(fmt::format("/api/v1/namespaces/{}/persistentvolumeclaims/{}",
                                    pvc.metadata.namespace_, pvc.metadata.name),
                        patch, "application/merge-patch+json");
  if (!r.ok()) return r.error();
  return {};
}

void ApiClusterClient::RecordPodEvent(const Pod& pod, std::string_view type,
                                      std::string_view reason, std::string_view action,
                                      std::string message, std::string_view controller) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  if (message.size() > 1024) message.resize(1024);
  PendingEvent ev{fmt::format("{}.{:x}", pod.metadata.name, rng() & 0xffffffffffffULL),
                  pod.metadata.namespace_,
                  std::string(type),
                  std::string(reason),
                  std::string(action),
                  std::string(controller),
                  MicroTimeNow(),
                  std::move(message),
                  pod.metadata.name,
                  pod.metadata.uid,
                  pod.metadata.resource_version};
  bool queued = false;
  size_t depth = 0;    // events waiting, this one included
  size_t dropped = 0;  // to report now
  {
    std::lock_guard lock(events_mu_);
    queued = events_.size() < kMaxQueuedEvents;
    if (queued) {
      events_.push_back(std::move(ev));
      depth = events_.size();
    } else {
      // The API server is not keeping up: drop, as client-go's broadcaster does (it keeps
      // 1,000), and say so at most every ten seconds.
      ++events_dropped_;
      const auto now = std::chrono::steady_clock::now();
      if (now - drops_logged_ >= std::chrono::seconds(10)) {
        dropped = std::exchange(events_dropped_, 0);
        drops_logged_ = now;
      }
    }
  }
  // A writer is woken by the first event (then waits a moment for more) and by a full batch,
  // not by every event.
  if (queued && (depth == 1 || depth == kEventBatch)) {
    events_cv_.notify_one();
  } else if (!queued && dropped > 0 && log_) {
    log_(
        fmt::format("events dropped: {} since the last report ({} wait to be written; the API "
                    "server is not keeping up)",
                    dropped, kMaxQueuedEvents));
  }
}

}  // namespace berth::client
