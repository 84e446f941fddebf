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

void LiveTimeline::OnPod(const apiserver::WatchEvent& event, bool initial) {
  const nlohmann::json& pod = *event.object.object;
  const nlohmann::json& meta = pod.value("metadata", nlohmann::json::object());
  const uint64_t key = std::hash<std::string>{}(meta.value("namespace", std::string()) + "/" +
                                                meta.value("name", std::string()));
  std::lock_guard lock(mu_);
  const double at = Seconds();
  auto it = pods_.find(key);
  const PodState was = it == pods_.end() ? PodState::kAbsent : it->second;
  if (event.type == apiserver::WatchEventType::kDeleted) {
    series_.CountPod(at, was, -1);
    if (it != pods_.end()) pods_.erase(it);
    return;
  }
  const PodState now = PodStateOf(&pod);
  if (now == was) return;
  series_.CountPod(at, was, -1);
  series_.CountPod(at, now, +1);
  pods_[key] = now;
  // A deletion that began now, not one under way when the timeline started.
  if (now == PodState::kTerminating && !initial) series_.PodDeletionStarted(at, pod);
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
  // Pods: the store's changes made in place (bindings, status) carry no previous document,
  // so each pod's state is kept here (a hash of its key and one byte).
  {
    // The synthetic ADDED events of the pods that exist arrive inside Watch, under the store's
    // lock: `initial` is true exactly for them.
    auto initial = std::make_shared<bool>(true);
    auto r = keep(store.Watch(*pods, "", std::nullopt, nullptr,
                              [this, initial](const apiserver::WatchEvent& ev) {
                                OnPod(ev, *initial);
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
