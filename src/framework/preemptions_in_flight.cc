#include "framework/preemptions_in_flight.h"

#include "framework/async_pod_deleter.h"

namespace berth::preemption {

std::string PreemptionsInFlight::KeyOf(const Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

void PreemptionsInFlight::Start(ClusterWriter& writer, const Pod& preemptor,
                                std::vector<PodInfoPtr> victims,
                                std::function<void(const Error&)> on_failure) {
  if (victims.empty()) return;
  const std::string key = KeyOf(preemptor);
  {
    std::lock_guard lock(mu_);
    running_[key] = Running{};
  }
  auto failure = std::make_shared<std::function<void(const Error&)>>(std::move(on_failure));
  PodInfoPtr last = victims.back();
  victims.pop_back();
  if (victims.empty()) {
    DeleteLast(writer, key, last, failure);
    return;
  }
  // The first victims' answers count down; the last one answering starts the last deletion.
  struct Countdown {
    std::mutex mu;
    size_t left;
    std::optional<Error> error;
  };
  auto countdown = std::make_shared<Countdown>();
  countdown->left = victims.size();
  auto self = shared_from_this();
  for (const PodInfoPtr& v : victims) {
    DeletePodThen(writer, *v->pod,
                  [self, &writer, key, last, failure, countdown](const Error* error) {
                    std::optional<Error> first_error;
                    {
                      std::lock_guard lock(countdown->mu);
                      if (error && !countdown->error) countdown->error = *error;
                      if (--countdown->left > 0) return;
                      first_error = countdown->error;
                    }
                    if (!first_error) {
                      self->DeleteLast(writer, key, last, failure);
                      return;
                    }
                    // A victim stays: the room will not be made, so the last victim is
                    // spared and the preemptor tried again.
                    self->Finish(key);
                    if (*failure) (*failure)(*first_error);
                  });
  }
}

void PreemptionsInFlight::DeleteLast(ClusterWriter& writer, const std::string& key,
                                     const PodInfoPtr& last,
                                     std::shared_ptr<std::function<void(const Error&)>> failure) {
  {
    std::lock_guard lock(mu_);
    running_[key].last_victim.emplace(last->pod->metadata.namespace_, last->pod->metadata.name);
  }
  auto self = shared_from_this();
  DeletePodThen(writer, *last->pod, [self, key, failure](const Error* error) {
    self->Finish(key);
    if (error && *failure) (*failure)(*error);
  });
}

void PreemptionsInFlight::Finish(const std::string& key) {
  std::lock_guard lock(mu_);
  running_.erase(key);
}

bool PreemptionsInFlight::IsRunning(const std::string& preemptor_key) const {
  std::pair<std::string, std::string> last;
  {
    std::lock_guard lock(mu_);
    auto it = running_.find(preemptor_key);
    if (it == running_.end()) return false;
    if (!it->second.last_victim) return true;
    last = *it->second.last_victim;
  }
  Ptr<Pod> victim = listers_->GetPod(last.first, last.second);
  return victim && !victim->metadata.deletion_timestamp;
}

size_t PreemptionsInFlight::size() const {
  std::lock_guard lock(mu_);
  return running_.size();
}

}  // namespace berth::preemption
