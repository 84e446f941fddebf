#include "controllers/pod_util.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace berth::controllers {

namespace {

const Json* ReadyCondition(const Json& pod) {
  const Json& conditions = Member(Member(pod, "status"), "conditions");
  if (!conditions.is_array()) return nullptr;
  for (const Json& c : conditions) {
    // Compared in place: called for every pod of a set on some syncs.
    const Json& type = Member(c, "type");
    if (type.is_string() && type.get_ref<const std::string&>() == "Ready") return &c;
  }
  return nullptr;
}

int PhaseOrdinal(const std::string& phase) {
  if (phase == "Unknown") return 1;
  if (phase == "Running") return 2;
  return 0;  // Pending and anything else
}

// floor(log2(age in nanoseconds)), -1 for a time not in the past.
int64_t LogAge(UnixTime t, TimePoint now) {
  const auto since = now - TimePoint(std::chrono::seconds(t));
  const double ns = static_cast<double>(std::chrono::duration_cast<Duration>(since).count());
  return ns > 0 ? static_cast<int64_t>(std::log2(ns)) : -1;
}

// Orders two different times: the later (or unset) one first, by logarithmic age.
bool NewerFirst(UnixTime a, UnixTime b, const PodRankFacts& pa, const PodRankFacts& pb,
                TimePoint now) {
  if (a == 0 || b == 0) return a == 0;  // afterOrZero: unset first
  const int64_t diff = LogAge(a, now) - LogAge(b, now);
  if (diff == 0) return pa.uid < pb.uid;
  return diff < 0;
}

}  // namespace

bool IsPodActive(const Json& pod) {
  const std::string phase = StringAt(Member(pod, "status"), "phase");
  return phase != "Succeeded" && phase != "Failed" && !HasDeletionTimestamp(pod);
}

bool IsPodReady(const Json& pod) {
  const Json* c = ReadyCondition(pod);
  return c && StringAt(*c, "status") == "True";
}

bool IsPodActive(const Pod& pod) {
  const std::string& phase = pod.status.phase;
  return phase != "Succeeded" && phase != "Failed" && !pod.metadata.deletion_timestamp;
}

bool IsPodReady(const Pod& pod) {
  for (const PodCondition& c : pod.status.conditions) {
    if (c.type == "Ready") return c.status == "True";
  }
  return false;
}

bool IsPodAvailable(const Json& pod, int64_t min_ready_seconds, UnixTime now) {
  const Json* c = ReadyCondition(pod);
  if (!c || StringAt(*c, "status") != "True") return false;
  if (min_ready_seconds == 0) return true;
  const UnixTime since = ReadySince(pod);
  return since != 0 && since + min_ready_seconds < now;
}

UnixTime ReadySince(const Json& pod) {
  const Json* c = ReadyCondition(pod);
  if (!c) return 0;
  auto since = ParseTimestamp(StringAt(*c, "lastTransitionTime"));
  return since.ok() ? *since : 0;
}

PodRankFacts RankFactsOf(const Json& pod) {
  PodRankFacts f;
  f.pod = &pod;
  f.node_name = StringAt(Member(pod, "spec"), "nodeName");
  const Json& status = Member(pod, "status");
  f.phase = StringAt(status, "phase");
  if (const Json* c = ReadyCondition(pod); c && StringAt(*c, "status") == "True") {
    f.ready = true;
    auto since = ParseTimestamp(StringAt(*c, "lastTransitionTime"));
    if (since.ok()) f.ready_since = *since;
  }
  const std::string cost = StringAt(Member(Member(pod, "metadata"), "annotations"),
                                    "controller.kubernetes.io/pod-deletion-cost");
  if (!cost.empty()) {
    try {
      f.deletion_cost = std::stoll(cost);
    } catch (...) {
      f.deletion_cost = 0;  // invalid costs count as 0, as upstream
    }
  }
  const Json& statuses = Member(status, "containerStatuses");
  if (statuses.is_array()) {
    for (const Json& s : statuses) {
      f.restarts = std::max<int>(f.restarts, static_cast<int>(IntAt(s, "restartCount")));
    }
  }
  f.created = CreatedAt(pod);
  f.uid = UidOf(pod);
  return f;
}

bool DeleteBefore(const PodRankFacts& a, const PodRankFacts& b, TimePoint now) {
  if (a.node_name != b.node_name && (a.node_name.empty() || b.node_name.empty())) {
    return a.node_name.empty();
  }
  if (PhaseOrdinal(a.phase) != PhaseOrdinal(b.phase)) {
    return PhaseOrdinal(a.phase) < PhaseOrdinal(b.phase);
  }
  if (a.ready != b.ready) return !a.ready;
  if (a.deletion_cost != b.deletion_cost) return a.deletion_cost < b.deletion_cost;
  if (a.rank != b.rank) return a.rank > b.rank;
  if (a.ready && b.ready && a.ready_since != b.ready_since) {
    return NewerFirst(a.ready_since, b.ready_since, a, b, now);
  }
  if (a.restarts != b.restarts) return a.restarts > b.restarts;
  if (a.created != b.created) return NewerFirst(a.created, b.created, a, b, now);
  return false;
}

std::vector<const Json*> PodsToDelete(const std::vector<const Json*>& pods,
                                      const std::vector<const Json*>& related, size_t count,
                                      TimePoint now) {
  if (count >= pods.size()) return pods;
  std::map<std::string, int> on_node;
  for (const Json* p : related) {
    if (IsPodActive(*p)) ++on_node[StringAt(Member(*p, "spec"), "nodeName")];
  }
  std::vector<PodRankFacts> facts;
  facts.reserve(pods.size());
  for (const Json* p : pods) {
    facts.push_back(RankFactsOf(*p));
    facts.back().rank = on_node[facts.back().node_name];
  }
  std::stable_sort(facts.begin(), facts.end(), [&](const PodRankFacts& a, const PodRankFacts& b) {
    return DeleteBefore(a, b, now);
  });
  std::vector<const Json*> out;
  for (size_t i = 0; i < count; ++i) out.push_back(facts[i].pod);
  return out;
}

}  // namespace berth::controllers
