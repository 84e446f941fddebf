// LiveTimeline: the timeline of `berth up`'s cluster since it started, for the web view's
// Timeline tab (/ui/api/timeline). It follows the API server's store directly (watches on pods,
// nodes and events, registered in process), so it sees every change once, whoever made it.
// Its memory is TimelineSeries' bound — `TimelineLimits::buckets` points and the latest
// `TimelineLimits::events` events, however long the cluster runs — plus what the cluster has
// now: each pod's state (16 bytes and the hash table's share) and the nodes' last documents
// (shared with the store).
//
// Threads: the store calls the watch callbacks with its lock held; they only update the
// series under this object's mutex (never calling back into the store). ToJson locks the same
// mutex, from any thread.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <vector>

#include "apiserver/store.h"
#include "berth/api/result.h"
#include "berth/framework/clock.h"
#include "ui/timeline.h"

namespace berth::ui {

class LiveTimeline {
 public:
  // `clock` (null: the wall clock) must outlive this; the timeline's zero is its time now.
  explicit LiveTimeline(const Clock* clock = nullptr, TimelineLimits limits = {});

  // Registers the watches: the pods and nodes that exist now count at time 0; events from now
  // on. Keep the registrations while the store runs and drop them before it goes (and before
  // this object does).
  Result<std::vector<std::unique_ptr<apiserver::WatchRegistration>>> Follow(
      apiserver::Store& store);

  // TimelineSeries::ToJson with its events, "now" the clock's, and "startedAt" (RFC 3339).
  nlohmann::json ToJson() const;

  // What the watches call. `initial`: an object that existed when the watch started.
  void OnPod(const apiserver::WatchEvent& event, bool initial);
  void OnNode(const apiserver::WatchEvent& event);
  void OnEvent(const apiserver::WatchEvent& event);

 private:
  double Seconds() const;

  RealClock wall_clock_;
  const Clock* clock_;
  TimePoint start_;
  mutable std::mutex mu_;
  TimelineSeries series_;
  std::unordered_map<uint64_t, PodState> pods_;  // hash of "namespace/name" -> state
  std::map<std::string, std::shared_ptr<const nlohmann::json>> nodes_;  // name -> last document
};

}  // namespace berth::ui
