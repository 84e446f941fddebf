#include "ui/live_timeline.h"

#include <ctime>

#include "apiserver/resources.h"

namespace berth::ui {
namespace {

std::string Rfc3339(TimePoint t) {
  const std::time_t secs =
      std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

LiveTimeline::LiveTimeline(const Clock* clock, TimelineLimits limits)
    : clock_(clock ? clock : &wall_clock_), start_(clock_->Now()), series_(limits) {}

double LiveTimeline::Seconds() const {
  return std::chrono::duration<double>(clock_->Now() - start_).count();
}

void LiveTimeline::OnPodState(PodState state, const apiserver::WatchEvent& event, bool initial) {
  std::lock_guard lock(mu_);
  const double at = Seconds();
  if (event.type == apiserver::WatchEventType::kAdded) {
    series_.CountPod(at, state, +1);
    // A deletion that began now, not one under way when the timeline started.
    if (state == PodState::kTerminating && !initial) {
      series_.PodDeletionStarted(at, *event.object.object);
    }
  } else if (event.type == apiserver::WatchEventType::kDeleted) {
    series_.CountPod(at, state, -1);
  }
}

void LiveTimeline::OnNode(const apiserver::WatchEvent& event) {
  std::lock_guard lock(mu_);
  const double at = Seconds();
  const std::string name =
      event.object.object->value("metadata", nlohmann::json::object()).value("name", std::string());
  auto it = nodes_.find(name);
  const nlohmann::json* before = it == nodes_.end() ? nullptr : it->second.get();
  if (event.type == apiserver::WatchEventType::kDeleted) {
    series_.OnNode(at, before, nullptr);
    if (it != nodes_.end()) nodes_.erase(it);
    return;
  }
  series_.OnNode(at, before, event.object.object.get());
  nodes_[name] = event.object.object;
}

void LiveTimeline::OnEvent(const apiserver::WatchEvent& event) {
  // A new event only: later updates of the same event (its count) are the same occurrence
  // seen again.
  if (event.type != apiserver::WatchEventType::kAdded) return;
  std::lock_guard lock(mu_);
  series_.OnEvent(Seconds(), *event.object.object);
}

Result<std::vector<std::unique_ptr<apiserver::WatchRegistration>>> LiveTimeline::Follow(
    apiserver::Store& store) {
  const apiserver::ResourceInfo* pods = apiserver::FindResource("", "v1", "pods");
  const apiserver::ResourceInfo* nodes = apiserver::FindResource("", "v1", "nodes");
  const apiserver::ResourceInfo* events = apiserver::FindResource("", "v1", "events");
  if (!pods || !nodes || !events) return Error{"the timeline's resources are not served"};
  std::vector<std::unique_ptr<apiserver::WatchRegistration>> out;
  auto keep = [&](Result<std::unique_ptr<apiserver::WatchRegistration>> reg) -> VoidResult {
    if (!reg.ok()) return reg.error();
    out.push_back(std::move(reg).value());
    return {};
  };
  // Pods: one watch per state, filtered by it. The store reports a pod that starts matching as
  // ADDED and one that stops as DELETED, also for changes made in place, which carry no
  // previous document: the counts follow without a copy of each pod's state here.
  for (PodState state : {PodState::kPending, PodState::kScheduled, PodState::kRunning,
                         PodState::kTerminating, PodState::kFinished}) {
    // The synthetic ADDED events of the pods that exist arrive inside Watch, under the store's
    // lock: `initial` is true exactly for them.
    auto initial = std::make_shared<bool>(true);
    auto r = keep(store.Watch(
        *pods, "", std::nullopt,
        [state](const nlohmann::json& pod) { return PodStateOf(&pod) == state; },
        [this, state, initial](const apiserver::WatchEvent& ev) {
          OnPodState(state, ev, *initial);
          return true;
        }));
    if (!r.ok()) return r.error();
    *initial = false;
  }
  // Nodes (few): their last documents are kept to see readiness change.
  auto r = keep(store.Watch(*nodes, "", std::nullopt, nullptr, [this](const auto& ev) {
    OnNode(ev);
    return true;
  }));
  if (!r.ok()) return r.error();
  r = keep(store.Watch(*events, "", store.revision(), nullptr, [this](const auto& ev) {
    OnEvent(ev);
    return true;
  }));
  if (!r.ok()) return r.error();
  return out;
}

nlohmann::json LiveTimeline::ToJson() const {
  std::lock_guard lock(mu_);
  nlohmann::json out = series_.ToJson(Seconds(), true);
  out["startedAt"] = Rfc3339(start_);
  return out;
}

}  // namespace berth::ui
