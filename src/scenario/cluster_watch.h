// ClusterWatch: what `berth scenario run` reports, read from the cluster as a user would: its
// own informers on pods and nodes. Changes become timeline entries stamped with the simulated
// clock (every change caused at simulated time T is handled before the clock moves past T, so
// the stamp is T); summaries are taken at checkpoints.
//
// Threads: the informers' threads record; the runner reads (every method locks).
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "berth/framework/clock.h"
#include "client/informer.h"
#include "client/rest_client.h"
#include "scenario/scenario_spec.h"
#include "ui/timeline.h"

namespace berth::scenario {

// One line of the timeline. Sorted by time, then kind, object and detail: entries of the same
// instant arrive in an order that threads decide, and the report must not.
struct TimelineEntry {
  Duration at{};
  std::string kind;    // Step, NodeNotReady, NodeReady, PodEvicted, Preempted, PodDeleted,
                       // PodScheduled, PodRunning, PodSucceeded, PodFailed, Wait,
                       // WaitTimedOut, Checkpoint
  std::string object;  // "default/web-abc12", "node-003", the step ("steps[2]")
  std::string detail;  // the node, the reason, the step's action
  uint64_t step = 0;   // steps' entries: their order in the run (they come from one thread)
  friend bool operator<(const TimelineEntry& a, const TimelineEntry& b);
};

// The cluster at one moment.
struct Summary {
  std::string name;  // the checkpoint's ("end" for the last)
  Duration at{};
  std::map<std::string, int> pods_by_phase;  // Pending, Running, Succeeded, Failed
  int pods = 0;
  int terminating = 0;  // deleted, not yet gone (not in pods_by_phase or pods_per_node)
  std::vector<std::string> pending;          // unbound pods, "ns/name", sorted
  std::map<std::string, int> pods_per_node;  // bound, not finished (every node listed)
  std::vector<std::string> ready_nodes, not_ready_nodes;
  int preemptions = 0;
  int evictions = 0;
  size_t timeline_entries = 0;  // how many timeline entries existed by then
};

class ClusterWatch {
 public:
  ClusterWatch(client::RestClient* rest, const Clock* clock, TimePoint start);
  ~ClusterWatch();
  void Start();
  void Stop();
  bool HasSynced() const;

  void RecordStep(const Step& step, std::string detail);
  void RecordPreemption(const std::string& victim, const std::string& preemptor);
  void RecordWaitTimeout(const Step& step, const std::string& detail);

  Summary Take(const std::string& name) const;
  // The timeline so far, sorted.
  std::vector<TimelineEntry> Timeline() const;
  // Pods and nodes by state over time (the web view's series; ui/timeline.h), without events.
  nlohmann::json Series() const;
  // Whether a wait's condition holds now; `detail` says what is missing when it does not.
  bool Holds(const WaitSpec& wait, std::string* detail) const;

 private:
  void OnPod(const Object* before, const Object* after);
  void OnNode(const Object* before, const Object* after);
  // "taint KEY" when the node has a NoExecute taint, else "".
  std::string NoExecuteTaintOf(const std::string& node_name) const;
  double Seconds() const;  // simulated, since the start
  void Add(std::string kind, std::string object, std::string detail, bool step = false);

  client::RestClient* rest_;
  const Clock* clock_;
  TimePoint start_;
  std::unique_ptr<client::Informer> pods_, nodes_;
  mutable std::mutex mu_;
  std::vector<TimelineEntry> timeline_;
  // A report, not a long-running process: finer than the web view's default (1 s buckets up
  // to 24 minutes, 2 s up to 48, ...).
  ui::TimelineSeries series_{ui::TimelineLimits{.buckets = 1440}};
  int preemptions_ = 0, evictions_ = 0;
  uint64_t steps_ = 0;
};

}  // namespace berth::scenario
