#include "controllers/work_queue.h"

#include <algorithm>
#include <cmath>

namespace berth::controllers {

ControllerRateLimiter::ControllerRateLimiter(const Clock* clock, RateLimiterOptions options)
    : clock_(clock), options_(options), tokens_(options.burst), last_(clock->Now()) {}

Duration ControllerRateLimiter::When(const std::string& key) {
  // Per key: base * 2^failures, capped (the exponent is bounded before it can overflow).
  const int exp = failures_[key]++;
  const double per_key_ns = static_cast<double>(options_.base_delay.count()) *
                            std::pow(2.0, static_cast<double>(std::min(exp, 62)));
  Duration per_key = per_key_ns >= static_cast<double>(options_.max_delay.count())
                         ? options_.max_delay
                         : Duration(static_cast<int64_t>(per_key_ns));
  // Overall: one token of the bucket, waiting for it when the bucket is empty.
  const TimePoint now = clock_->Now();
  const double elapsed_s = std::chrono::duration<double>(now - last_).count();
  if (elapsed_s > 0) {
    tokens_ = std::min<double>(options_.burst, tokens_ + elapsed_s * options_.qps);
    last_ = now;
  }
  tokens_ -= 1;
  Duration bucket{0};
  if (tokens_ < 0) {
    bucket = std::chrono::duration_cast<Duration>(
        std::chrono::duration<double>(-tokens_ / options_.qps));
  }
  return std::max(per_key, bucket);
}

void ControllerRateLimiter::Forget(const std::string& key) { failures_.erase(key); }

int ControllerRateLimiter::NumRequeues(const std::string& key) const {
  auto it = failures_.find(key);
  return it == failures_.end() ? 0 : it->second;
}

// The queue as a participant of a simulated clock.
class WorkQueue::SimProbe final : public simtime::Participant {
 public:
  explicit SimProbe(WorkQueue* q) : q_(q) {}
  bool Idle() const override {
    std::lock_guard lock(q_->mu_);
    if (q_->shutting_down_) return true;
    if (!q_->queue_.empty() || !q_->processing_.empty()) return false;
    const TimePoint now = q_->clock_->Now();
    for (const auto& [key, due] : q_->waiting_)
      if (due <= now) return false;
    return true;
  }
  std::optional<TimePoint> NextDue() const override {
    std::lock_guard lock(q_->mu_);
    if (q_->shutting_down_ || q_->waiting_.empty()) return std::nullopt;
    TimePoint next = TimePoint::max();
    for (const auto& [key, due] : q_->waiting_) next = std::min(next, due);
    return next;
  }
  void Wake() override { q_->Tick(); }
  std::string Describe() const override {
    std::lock_guard lock(q_->mu_);
    std::string what = "a work queue (";
    for (const auto& k : q_->processing_) what += "processing " + k + " ";
    for (const auto& k : q_->queue_) what += "ready " + k + " ";
    return what + ")";
  }

 private:
  WorkQueue* q_;
};

WorkQueue::WorkQueue(const Clock* clock, RateLimiterOptions options)
    : clock_(clock), limiter_(clock, options), sim_(simtime::AsSimulated(clock)) {
  if (sim_) {
    probe_ = std::make_unique<SimProbe>(this);
    registration_ = std::make_unique<simtime::ParticipantRegistration>(clock, probe_.get());
  }
}

WorkQueue::~WorkQueue() { registration_.reset(); }

void WorkQueue::AddLocked(const std::string& key) {
  if (shutting_down_ || dirty_.count(key)) return;
  dirty_.insert(key);
  if (processing_.count(key)) return;  // queued again by Done
  queue_.push_back(key);
  NoteActivity();
  cv_.notify_one();
}

void WorkQueue::Add(const std::string& key) {
  std::lock_guard lock(mu_);
  AddLocked(key);
}

void WorkQueue::AddAfter(const std::string& key, Duration delay) {
  std::lock_guard lock(mu_);
  if (shutting_down_) return;
  if (delay <= Duration::zero()) {
    AddLocked(key);
    return;
  }
  const TimePoint due = clock_->Now() + delay;
  auto [it, inserted] = waiting_.emplace(key, due);
  if (!inserted && due < it->second) it->second = due;  // the earliest request wins
  NoteActivity();
  cv_.notify_all();  // a waiting Get may have to wake earlier
}

void WorkQueue::AddRateLimited(const std::string& key) {
  Duration delay;
  {
    std::lock_guard lock(mu_);
    delay = limiter_.When(key);
  }
  AddAfter(key, delay);
}

void WorkQueue::Forget(const std::string& key) {
  std::lock_guard lock(mu_);
  limiter_.Forget(key);
}

int WorkQueue::NumRequeues(const std::string& key) const {
  std::lock_guard lock(mu_);
  return limiter_.NumRequeues(key);
}

void WorkQueue::PromoteDueLocked() {
  const TimePoint now = clock_->Now();
  for (auto it = waiting_.begin(); it != waiting_.end();) {
    if (it->second <= now) {
      std::string key = it->first;
      it = waiting_.erase(it);
      AddLocked(key);
    } else {
      ++it;
    }
  }
}

std::optional<std::string> WorkQueue::Get() {
  std::unique_lock lock(mu_);
  while (true) {
    PromoteDueLocked();
    if (!queue_.empty()) break;
    if (shutting_down_) return std::nullopt;
    if (waiting_.empty()) {
      cv_.wait(lock);
      continue;
    }
    TimePoint next = TimePoint::max();
    for (const auto& [k, due] : waiting_) next = std::min(next, due);
    // Real time until the earliest delayed key; a second at most, so a FakeClock moved
    // without Tick() is still noticed.
    Duration wait = std::clamp<Duration>(next - clock_->Now(), std::chrono::milliseconds(1),
                                         std::chrono::seconds(1));
    cv_.wait_for(lock, wait);
  }
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

std::optional<std::string> WorkQueue::TryGet() {
  std::lock_guard lock(mu_);
  PromoteDueLocked();
  if (queue_.empty()) return std::nullopt;
  std::string key = std::move(queue_.front());
  queue_.pop_front();
  processing_.insert(key);
  dirty_.erase(key);
  return key;
}

void WorkQueue::Done(const std::string& key) {
  std::lock_guard lock(mu_);
  processing_.erase(key);
  NoteActivity();
  if (dirty_.count(key)) {
    queue_.push_back(key);
    cv_.notify_one();
  }
}

void WorkQueue::Tick() {
  std::lock_guard lock(mu_);
  PromoteDueLocked();
  cv_.notify_all();
}

void WorkQueue::ShutDown() {
  std::lock_guard lock(mu_);
  shutting_down_ = true;
  cv_.notify_all();
}

bool WorkQueue::ShuttingDown() const {
  std::lock_guard lock(mu_);
  return shutting_down_;
}

size_t WorkQueue::Len() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

size_t WorkQueue::Delayed() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

}  // namespace berth::controllers
