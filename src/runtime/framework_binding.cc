#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>

#include "berth/framework/pre_bind_preflight.h"
#include "config/decode_util.h"
#include "framework/guard.h"
#include "observe/log.h"
#include "runtime/framework.h"
#include "runtime/framework_internal.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// ---------------------------------------------------------------- waiting pods

class Framework::WaitingPodImpl final : public WaitingPod {
 public:
  struct PendingWait {
    TimePoint deadline;
    Duration timeout;
  };
  WaitingPodImpl(std::shared_ptr<const Pod> pod, std::map<std::string, PendingWait> waits)
      : pod_(std::move(pod)), deadlines_(std::move(waits)) {}

  const Pod& pod() const override { return *pod_; }
  std::vector<std::string> PendingPlugins() const override {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& [name, d] : deadlines_) out.push_back(name);
    return out;
  }
  void Allow(std::string_view plugin) override {
    std::unique_lock lock(mu_);
    if (result_) return;
    deadlines_.erase(std::string(plugin));
    if (deadlines_.empty()) Resolve(lock, Status::Success());
  }
  void Reject(std::string_view plugin, std::string_view message) override {
    std::unique_lock lock(mu_);
    if (result_) return;
    Status s = Status::Unschedulable(std::string(message));
    s.WithPlugin(plugin);
    Resolve(lock, std::move(s));
  }
  // Rejects if a plugin's deadline passed; true if it did.
  bool ExpireAt(TimePoint now) {
    std::unique_lock lock(mu_);
    if (result_) return false;
    for (const auto& [name, w] : deadlines_) {
      if (w.deadline <= now) {
        Status s = Status::Unschedulable(fmt::format(
            "rejected due to timeout after waiting {} at plugin {}",
            config::internal::FormatGoDurationMs(
                std::chrono::duration_cast<std::chrono::milliseconds>(w.timeout).count()),
            name));
        s.WithPlugin(name);
        Resolve(lock, std::move(s));
        return true;
      }
    }
    return false;
  }
  // Runs `then` once the wait is decided (at once if it is), on the deciding thread. Returns
  // the earliest deadline while it is not decided.
  std::optional<TimePoint> OnDecided(std::function<void()> then) {
    std::unique_lock lock(mu_);
    if (result_) {
      lock.unlock();
      then();
      return std::nullopt;
    }
    then_ = std::move(then);
    TimePoint earliest = TimePoint::max();
    for (const auto& [n, w] : deadlines_) earliest = std::min(earliest, w.deadline);
    return earliest;
  }
  std::optional<Status> result() const {
    std::lock_guard lock(mu_);
    return result_;
  }
  // Blocks until resolved; with a real clock, also until the earliest deadline.
  Status Wait(const Clock& clock) {
    std::unique_lock lock(mu_);
    while (!result_) {
      TimePoint earliest = TimePoint::max();
      for (const auto& [n, w] : deadlines_) earliest = std::min(earliest, w.deadline);
      auto wait_for = earliest - clock.Now();
      if (wait_for <= Duration::zero()) {
        lock.unlock();
        ExpireAt(clock.Now());
        lock.lock();
        continue;
      }
      // Re-check at least every 100ms so an injected clock that advances is noticed.
      cv_.wait_for(lock, std::min<Duration>(wait_for, std::chrono::milliseconds(100)));
    }
    return *result_;
  }

 private:
  std::shared_ptr<const Pod> pod_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Sets the result, wakes a blocked Wait and runs the continuation (outside the lock).
  void Resolve(std::unique_lock<std::mutex>& lock, Status s) {
    result_ = std::move(s);
    cv_.notify_all();
    std::function<void()> then = std::move(then_);
    then_ = nullptr;
    lock.unlock();
    if (then) then();
  }

  std::map<std::string, PendingWait> deadlines_;
  std::optional<Status> result_;
  std::function<void()> then_;  // the rest of the binding cycle, once decided
};

Framework::~Framework() = default;

// ---------------------------------------------------------------- binding cycle

Status Framework::RunReservePluginsReserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node, PluginOutcomes* outcomes) {
  for (size_t i = 0; i < reserve_.size(); ++i) {
    ReservePlugin* pl = reserve_[i];
    Status s = Measured(state, SeriesAt(series_.reserve, i),
                        [&] { return pl->Reserve(state, pod, node); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(fmt::format("running Reserve plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  return Status::Success();
}

void Framework::RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node) {
  // Reverse order, as resources are released in the opposite order they were reserved.
  for (size_t i = reserve_.size(); i-- > 0;) {
    MeasuredVoid(state, SeriesAt(series_.unreserve, i),
                 [&] { reserve_[i]->Unreserve(state, pod, node); });
  }
}

Status Framework::RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                   PluginOutcomes* outcomes) {
  constexpr Duration kMaxTimeout = std::chrono::minutes(15);
  std::map<std::string, WaitingPodImpl::PendingWait> waits;
  for (size_t i = 0; i < permit_.size(); ++i) {
    PermitPlugin* pl = permit_[i];
    Duration timeout{};
    Status s = Measured(state, SeriesAt(series_.permit, i), [&] {
      PermitDecision d = pl->Permit(state, pod, node);
      timeout = d.timeout;
      return std::move(d.status);
    });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s, timeout);
    if (s.IsSuccess()) continue;
    if (s.IsWait()) {
      timeout = std::min(timeout, kMaxTimeout);
      waits[std::string(pl->Name())] = {clock().Now() + timeout, timeout};
      continue;
    }
    if (!s.IsRejected())
      s = Status::Error(fmt::format("running Permit plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  if (waits.empty()) return Status::Success();
  auto wp = std::make_shared<WaitingPodImpl>(pod.pod, std::move(waits));
  std::lock_guard lock(waiting_mu_);
  waiting_[WaitingKey(*pod.pod)] = std::move(wp);
  return Status::Wait();
}

Status Framework::WaitOnPermit(const Pod& pod) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(WaitingKey(pod));
    if (it == waiting_.end()) return Status::Success();
    wp = it->second;
  }
  const TimePoint start = clock().Now();
  Status s = wp->Wait(clock());
  if (services_.metrics) services_.metrics->PermitWait(CodeName(s.code()), clock().Now() - start);
  std::lock_guard lock(waiting_mu_);
  waiting_.erase(WaitingKey(pod));
  return s;
}

std::optional<TimePoint> Framework::OnPermitDecided(const Pod& pod, std::function<void()> then) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(WaitingKey(pod));
    if (it != waiting_.end()) wp = it->second;
  }
  if (!wp) {
    then();
    return std::nullopt;
  }
  return wp->OnDecided(std::move(then));
}

bool Framework::ExpireWaitingPod(const Pod& pod) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(WaitingKey(pod));
    if (it == waiting_.end()) return false;
    wp = it->second;
  }
  return wp->ExpireAt(clock().Now());
}

int Framework::ExpireWaitingPods() {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    std::lock_guard lock(waiting_mu_);
    for (auto& [uid, wp] : waiting_) all.push_back(wp);
  }
  int n = 0;
  for (auto& wp : all) n += wp->ExpireAt(clock().Now()) ? 1 : 0;
  return n;
}

bool Framework::IsWaitingOnPermit(std::string_view uid) {
  std::lock_guard lock(waiting_mu_);
  auto it = waiting_.find(uid);
  return it != waiting_.end() && !it->second->result().has_value();
}

Status Framework::RunPreBindPreFlights(CycleState& state, const PodInfo& pod,
                                       const std::string& node) {
  bool work = false;
  for (PreBindPlugin* pl : pre_bind_) {
    auto* flight = dynamic_cast<PreBindPreFlight*>(pl);
    if (!flight) {
      work = true;
      continue;
    }
    Status s = flight->PreBindPreFlightCheck(state, pod, node);
    if (s.IsSkip()) continue;
    if (s.IsSuccess()) {
      work = true;
      continue;
    }
    s = Status::Error(fmt::format("running PreBindPreFlight \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  return work ? Status::Success() : Status::Skip();
}

Status Framework::RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                    PluginOutcomes* outcomes) {
  for (size_t i = 0; i < pre_bind_.size(); ++i) {
    PreBindPlugin* pl = pre_bind_[i];
    Status s = Measured(state, SeriesAt(series_.pre_bind, i),
                        [&] { return pl->PreBind(state, pod, node); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(fmt::format("running PreBind plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  return Status::Success();
}

Status Framework::RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                 PluginOutcomes* outcomes) {
  for (size_t i = 0; i < bind_.size(); ++i) {
    BindPlugin* pl = bind_[i];
    Status s =
        Measured(state, SeriesAt(series_.bind, i), [&] { return pl->Bind(state, pod, node); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSkip()) continue;
    if (!s.IsSuccess()) {
      if (!s.IsRejected())
        s = Status::Error(fmt::format("running Bind plugin \"{}\": {}", pl->Name(), s.Message()));
      s.WithPlugin(pl->Name());
    }
    return s;
  }
  return Status::Skip();
}

void Framework::RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) {
  for (size_t i = 0; i < post_bind_.size(); ++i) {
    MeasuredVoid(state, SeriesAt(series_.post_bind, i),
                 [&] { post_bind_[i]->PostBind(state, pod, node); });
  }
}

// ---------------------------------------------------------------- waiting pods (Handle)

void Framework::IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    std::lock_guard lock(waiting_mu_);
    for (auto& [uid, wp] : waiting_) all.push_back(wp);
  }
  for (auto& wp : all) fn(*wp);
}

std::shared_ptr<WaitingPod> Framework::GetWaitingPod(std::string_view uid) {
  std::lock_guard lock(waiting_mu_);
  auto it = waiting_.find(uid);
  if (it == waiting_.end()) return nullptr;
  return it->second;
}

bool Framework::RejectWaitingPod(std::string_view uid) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(uid);
    if (it == waiting_.end()) return false;
    wp = it->second;
  }
  wp->Reject("", "removed");
  return true;
}

}  // namespace berth
