#include "ui/timeline.h"

#include <algorithm>
#include <cmath>

namespace berth::ui {
namespace {

using Json = nlohmann::json;

const Json& Field(const Json* doc, const char* a) {
  static const Json kNull;
  if (!doc || !doc->is_object()) return kNull;
  auto it = doc->find(a);
  return it == doc->end() ? kNull : *it;
}

const Json& Field(const Json& doc, const char* a, const char* b) {
  return Field(&Field(&doc, a), b);
}

std::string Text(const Json& v) { return v.is_string() ? v.get<std::string>() : std::string(); }

bool Deleting(const Json* pod) {
  const Json& ts = Field(*pod, "metadata", "deletionTimestamp");
  return ts.is_string() && !ts.get_ref<const std::string&>().empty();
}

// The reason of a pod's DisruptionTarget condition (taint eviction, preemption, the eviction
// API), or "".
std::string DisruptionReason(const Json& pod) {
  const Json& conditions = Field(pod, "status", "conditions");
  if (!conditions.is_array()) return "";
  for (const Json& c : conditions) {
    if (Text(Field(&c, "type")) == "DisruptionTarget" && Text(Field(&c, "status")) == "True")
      return Text(Field(&c, "reason"));
  }
  return "";
}

bool HasNoExecuteTaint(const Json& node) {
  const Json& taints = Field(node, "spec", "taints");
  if (!taints.is_array()) return false;
  return std::any_of(taints.begin(), taints.end(),
                     [](const Json& t) { return Text(Field(&t, "effect")) == "NoExecute"; });
}

void Count(ClusterCounts& c, PodState s, int delta) {
  switch (s) {
    case PodState::kPending:
      c.pending += delta;
      break;
    case PodState::kScheduled:
      c.scheduled += delta;
      break;
    case PodState::kRunning:
      c.running += delta;
      break;
    case PodState::kTerminating:
      c.terminating += delta;
      break;
    case PodState::kFinished:
      c.finished += delta;
      break;
    case PodState::kAbsent:
      break;
  }
}

void Count(ClusterCounts& c, NodeState s, int delta) {
  if (s == NodeState::kReady) c.nodes_ready += delta;
  if (s == NodeState::kNotReady) c.nodes_not_ready += delta;
}

// Seconds as JSON: milliseconds are enough for a plot, and keep the document short.
double Round(double seconds) { return std::round(seconds * 1000.0) / 1000.0; }

}  // namespace

PodState PodStateOf(const Json* pod) {
  if (!pod || !pod->is_object()) return PodState::kAbsent;
  const std::string phase = Text(Field(*pod, "status", "phase"));
  if (phase == "Succeeded" || phase == "Failed") return PodState::kFinished;
  if (Deleting(pod)) return PodState::kTerminating;
  if (Text(Field(*pod, "spec", "nodeName")).empty()) return PodState::kPending;
  return phase == "Running" ? PodState::kRunning : PodState::kScheduled;
}

NodeState NodeStateOf(const Json* node) {
  if (!node || !node->is_object()) return NodeState::kAbsent;
  const Json& conditions = Field(*node, "status", "conditions");
  if (conditions.is_array()) {
    for (const Json& c : conditions) {
      if (Text(Field(&c, "type")) == "Ready")
        return Text(Field(&c, "status")) == "True" ? NodeState::kReady : NodeState::kNotReady;
    }
  }
  return NodeState::kNotReady;
}

TimelineSeries::TimelineSeries(TimelineLimits limits)
    : limits_(limits),
      width_(limits.first_bucket_seconds > 0 ? limits.first_bucket_seconds : 1.0),
      buckets_(std::max<size_t>(2, limits.buckets)) {}

double TimelineSeries::Clamp(double at) {
  if (!(at >= latest_)) at = latest_;  // also NaN
  latest_ = at;
  return at;
}

TimelineSeries::Bucket& TimelineSeries::BucketAt(double at) {
  const size_t n = buckets_.size();
  auto index = [&] { return static_cast<size_t>(std::floor(at / width_)); };
  // Past the last bucket: merge pairs (the later one's counts stand for both) and double the
  // width, until `at` falls inside.
  while (index() >= n) {
    std::vector<Bucket> merged(n);
    for (size_t i = 0; i < n; ++i) {
      Bucket& out = merged[i / 2];
      const Bucket& in = buckets_[i];
      if (!in.used) continue;
      out.evictions += in.evictions;
      out.preemptions += in.preemptions;
      out.used = true;
      out.last = in.last;
      out.counts = in.counts;
    }
    buckets_ = std::move(merged);
    width_ *= 2;
  }
  return buckets_[index()];
}

void TimelineSeries::Sample(double at) {
  Bucket& b = BucketAt(at);
  b.used = true;
  b.last = at;
  b.counts = counts_;
}

size_t TimelineSeries::points() const {
  return static_cast<size_t>(
      std::count_if(buckets_.begin(), buckets_.end(), [](const Bucket& b) { return b.used; }));
}

void TimelineSeries::Note(double at, std::string kind, std::string object, std::string detail) {
  events_.push_back({at, std::move(kind), std::move(object), std::move(detail)});
  while (events_.size() > limits_.events) {
    events_.pop_front();
    ++events_dropped_;
  }
}

void TimelineSeries::OnPod(double at, const Json* before, const Json* after) {
  const PodState was = PodStateOf(before), now = PodStateOf(after);
  if (was != now) {
    CountPod(at, was, -1);
    CountPod(at, now, +1);
  }
  if (after && Deleting(after) && !(before && Deleting(before))) PodDeletionStarted(at, *after);
}

void TimelineSeries::CountPod(double at, PodState state, int delta) {
  at = Clamp(at);
  if (state == PodState::kAbsent) return;
  Count(counts_, state, delta);
  Sample(at);
}

void TimelineSeries::PodDeletionStarted(double at, const Json& pod) {
  // An eviction: the deletion of a pod its DisruptionTarget condition says was disrupted
  // (other than by preemption, counted from the scheduler's event), or of a pod on a node with
  // a NoExecute taint (the taint eviction controller deletes without a condition).
  const std::string node = Text(Field(pod, "spec", "nodeName"));
  std::string reason = DisruptionReason(pod);
  if (reason.empty() && tainted_nodes_.count(node)) reason = "NoExecute taint";
  if (reason.empty() || reason == "PreemptionByScheduler") return;
  AddEvent(at, "PodEvicted",
           Text(Field(pod, "metadata", "namespace")) + "/" + Text(Field(pod, "metadata", "name")),
           node.empty() ? reason : "from " + node + " (" + reason + ")");
}

void TimelineSeries::OnNode(double at, const Json* before, const Json* after) {
  at = Clamp(at);
  const NodeState was = NodeStateOf(before), now = NodeStateOf(after);
  if (after) {
    const std::string name = Text(Field(*after, "metadata", "name"));
    if (HasNoExecuteTaint(*after)) {
      tainted_nodes_.insert(name);
    } else {
      tainted_nodes_.erase(name);
    }
    // A change of readiness of a node that existed (not its creation).
    if (before && was != now) {
      if (now == NodeState::kReady) {
        ++nodes_ready_events_;
        Note(at, "NodeReady", name, "");
      } else {
        ++nodes_not_ready_events_;
        Note(at, "NodeNotReady", name, "");
      }
    }
  } else if (before) {
    tainted_nodes_.erase(Text(Field(*before, "metadata", "name")));
  }
  Count(counts_, was, -1);
  Count(counts_, now, +1);
  if (was != now) Sample(at);
}

void TimelineSeries::OnEvent(double at, const Json& event) {
  if (Text(Field(&event, "reason")) != "Preempted") return;
  // core/v1 (involvedObject, message) or events.k8s.io/v1 (regarding, note).
  const Json* ref = &Field(&event, "involvedObject");
  if (!ref->is_object()) ref = &Field(&event, "regarding");
  if (Text(Field(ref, "kind")) != "Pod") return;
  std::string message = Text(Field(&event, "message"));
  if (message.empty()) message = Text(Field(&event, "note"));
  AddEvent(at, "Preempted", Text(Field(ref, "namespace")) + "/" + Text(Field(ref, "name")),
           std::move(message));
}

void TimelineSeries::AddEvent(double at, std::string kind, std::string object, std::string detail) {
  at = Clamp(at);
  if (kind == "Preempted") {
    ++preemptions_;
    ++BucketAt(at).preemptions;
  } else if (kind == "PodEvicted") {
    ++evictions_;
    ++BucketAt(at).evictions;
  }
  Sample(at);
  Note(at, std::move(kind), std::move(object), std::move(detail));
}

Json TimelineSeries::ToJson(std::optional<double> now, bool with_events) const {
  Json points = Json::array();
  for (const Bucket& b : buckets_) {
    if (!b.used) continue;
    points.push_back({{"t", Round(b.last)},
                      {"pending", b.counts.pending},
                      {"scheduled", b.counts.scheduled},
                      {"running", b.counts.running},
                      {"terminating", b.counts.terminating},
                      {"finished", b.counts.finished},
                      {"nodesReady", b.counts.nodes_ready},
                      {"nodesNotReady", b.counts.nodes_not_ready},
                      {"evictions", b.evictions},
                      {"preemptions", b.preemptions}});
  }
  Json out = {{"bucketSeconds", width_},
              {"maxBuckets", buckets_.size()},
              {"points", std::move(points)},
              {"totals",
               {{"evictions", evictions_},
                {"preemptions", preemptions_},
                {"nodeNotReady", nodes_not_ready_events_},
                {"nodeReady", nodes_ready_events_}}}};
  if (now) out["now"] = Round(std::max(*now, latest_));
  if (with_events) {
    Json events = Json::array();
    for (const TimelineEvent& e : events_) {
      events.push_back(
          {{"t", Round(e.at)}, {"kind", e.kind}, {"object", e.object}, {"detail", e.detail}});
    }
    out["events"] = std::move(events);
    out["eventsDropped"] = events_dropped_;
  }
  return out;
}

}  // namespace berth::ui
