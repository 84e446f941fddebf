// TimelineSeries: the web view's timeline of a cluster — pods pending, scheduled (bound, not yet
// running), running and finished, nodes ready and not ready — over time, in bounded memory.
//
// Time is in seconds from an origin the caller picks (`berth up`'s start, a scenario's
// simulated start). The series keeps at most `buckets` buckets of equal width; a bucket holds
// the counts after the last change that fell in it, and when a change falls past the last
// bucket, neighbouring buckets merge pairwise and the width doubles. However long the cluster
// runs, the series holds `buckets` points at most, and the plot's resolution is the duration
// over `buckets`. Notable events (nodes turning NotReady or Ready again, evictions,
// preemptions) are kept in a ring of the latest `events`; their totals are kept exactly.
//
// The counts follow the changes given (before and after each object, as watch events carry
// them): no per-object state is kept, so the memory does not grow with the cluster either,
// except for the names of the nodes with a NoExecute taint (to tell an eviction from a
// deletion).
//
// Not thread-safe: the caller serialises (LiveTimeline, ClusterWatch).
#pragma once

#include <cstdint>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace berth::ui {

enum class PodState { kAbsent, kPending, kScheduled, kRunning, kTerminating, kFinished };
// A pod document's state (null: absent). Pending: not bound and not finished; scheduled:
// bound, not yet Running; terminating: deleted (deletionTimestamp), waiting for its kubelet;
// finished: Succeeded or Failed.
PodState PodStateOf(const nlohmann::json* pod);

enum class NodeState { kAbsent, kReady, kNotReady };
// Ready when its Ready condition is True; any other node (no condition yet, False, Unknown) is
// not ready.
NodeState NodeStateOf(const nlohmann::json* node);

struct ClusterCounts {
  int pending = 0, scheduled = 0, running = 0, terminating = 0, finished = 0;
  int nodes_ready = 0, nodes_not_ready = 0;
  friend bool operator==(const ClusterCounts&, const ClusterCounts&) = default;
};

struct TimelineLimits {
  size_t buckets = 480;               // points kept (at least 2)
  double first_bucket_seconds = 1.0;  // the width until the first merge
  size_t events = 500;                // latest notable events kept
};

struct TimelineEvent {
  double at = 0;
  std::string kind;    // NodeNotReady, NodeReady, PodEvicted, Preempted
  std::string object;  // the node, or the pod ("namespace/name")
  std::string detail;
};

class TimelineSeries {
 public:
  explicit TimelineSeries(TimelineLimits limits = {});

  // A pod or node changed at `at`: its document before and after (null: absent). Times that go
  // back (threads' stamps a little out of order) count as the latest time seen.
  void OnPod(double at, const nlohmann::json* before, const nlohmann::json* after);
  // The same, for a caller that sees pods enter and leave each state rather than before and
  // after (LiveTimeline's watches, one per state): a pod entered (+1) or left (-1) `state`;
  // a pod's deletion began (it entered kTerminating).
  void CountPod(double at, PodState state, int delta);
  void PodDeletionStarted(double at, const nlohmann::json& pod);
  void OnNode(double at, const nlohmann::json* before, const nlohmann::json* after);
  // A core/v1 Event was recorded: a scheduler's "Preempted" event on a pod counts a preemption.
  void OnEvent(double at, const nlohmann::json& event);
  void AddEvent(double at, std::string kind, std::string object, std::string detail);

  const ClusterCounts& counts() const { return counts_; }
  double bucket_seconds() const { return width_; }
  size_t points() const;
  int evictions() const { return evictions_; }
  int preemptions() const { return preemptions_; }

  // {"bucketSeconds", "maxBuckets", "points": [{"t", "pending", "scheduled", "running",
  // "terminating", "finished", "nodesReady", "nodesNotReady", "evictions", "preemptions"}],
  // "totals", and with `with_events`: "events" [{"t","kind","object","detail"}], "eventsDropped"};
  // "now" when given (the plot runs to it).
  nlohmann::json ToJson(std::optional<double> now, bool with_events) const;

 private:
  struct Bucket {
    bool used = false;
    double last = 0;  // the time of the last change in it
    ClusterCounts counts;
    int evictions = 0, preemptions = 0;
  };
  Bucket& BucketAt(double at);
  void Sample(double at);
  double Clamp(double at);
  void Note(double at, std::string kind, std::string object, std::string detail);

  TimelineLimits limits_;
  double width_;
  double latest_ = 0;
  std::vector<Bucket> buckets_;
  ClusterCounts counts_;
  std::deque<TimelineEvent> events_;
  uint64_t events_dropped_ = 0;
  int evictions_ = 0, preemptions_ = 0, nodes_not_ready_events_ = 0, nodes_ready_events_ = 0;
  std::set<std::string> tainted_nodes_;  // nodes with a NoExecute taint
};

}  // namespace berth::ui
