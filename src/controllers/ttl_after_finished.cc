#include "controllers/ttl_after_finished.h"

#include <fmt/format.h>

#include "controllers/job_util.h"

namespace berth::controllers {

TtlAfterFinishedController::TtlAfterFinishedController(client::RestClient* rest,
                                                       SharedInformer* jobs,
                                                       ControllerOptions options)
    : rest_(rest),
      jobs_(jobs),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  jobs_->AddHandlers(EnqueueOnEvents(&queue_));
}

TtlAfterFinishedController::~TtlAfterFinishedController() { Stop(); }

void TtlAfterFinishedController::Start() { workers_.Start(options_.workers); }

void TtlAfterFinishedController::Stop() { workers_.Stop(); }

std::optional<Duration> TtlAfterFinishedController::Remaining(const Json& job) const {
  const Json& ttl = Member(Member(job, "spec"), "ttlSecondsAfterFinished");
  if (!ttl.is_number_integer() || HasDeletionTimestamp(job)) return std::nullopt;
  auto finished = JobFinishTime(job);
  if (!finished) return std::nullopt;
  const TimePoint expire = TimePoint(std::chrono::seconds(*finished + ttl.get<int64_t>()));
  return expire - options_.clock->Now();
}

VoidResult TtlAfterFinishedController::Sync(const std::string& key) {
  auto obj = jobs_->Get(key);
  if (!obj) return {};
  auto left = Remaining(DocOf(*obj));
  if (!left) return {};
  if (*left > Duration::zero()) {
    queue_.AddAfter(key, *left);
    return {};
  }
  const auto [ns, name] = SplitKey(key);
  const std::string path = fmt::format("/apis/batch/v1/namespaces/{}/jobs/{}", ns, name);
  // The cache may be stale: the ttl or the Job itself may have changed.
  auto fresh = rest_->Get(path);
  if (!fresh.ok()) return fresh.error().code == ErrorCode::kNotFound ? VoidResult{} : fresh.error();
  left = Remaining(*fresh);
  if (!left) return {};
  if (*left > Duration::zero()) {
    queue_.AddAfter(key, *left);
    return {};
  }
  const Json options = {{"apiVersion", "v1"},
                        {"kind", "DeleteOptions"},
                        {"propagationPolicy", "Background"},
                        {"preconditions", {{"uid", UidOf(*fresh)}}}};
  auto r = rest_->Delete(path, options);
  if (!r.ok() && r.error().code != ErrorCode::kNotFound && r.error().code != ErrorCode::kConflict)
    return r.error();
  if (r.ok() && options_.log) {
    options_.log(fmt::format("ttl-after-finished-controller: deleted Job {}", key));
  }
  return {};
}

}  // namespace berth::controllers
