#include "controllers/pod_gc.h"

#include <fmt/format.h>

#include <algorithm>
#include <unordered_set>

#include "api/codec.h"
#include "controllers/node_lifecycle_util.h"
#include "controllers/object_util.h"

namespace berth::controllers {
namespace {

constexpr const char* kStatusPatch = "application/strategic-merge-patch+json";

const Pod* PodOf(const Object& obj) {
  const auto* held = std::get_if<std::shared_ptr<const Pod>>(&obj);
  return held && *held ? held->get() : nullptr;
}

std::string PodPath(const Pod& pod) {
  return fmt::format("/api/v1/namespaces/{}/pods/{}", pod.metadata.namespace_, pod.metadata.name);
}

bool HasOutOfServiceTaint(const Node& node) {
  return std::any_of(node.spec.taints.begin(), node.spec.taints.end(),
                     [](const Taint& t) { return t.key == kTaintOutOfService; });
}

}  // namespace

bool IsPodTerminated(const Pod& pod) {
  const std::string& phase = pod.status.phase;
  return phase != "Pending" && phase != "Running" && phase != "Unknown";
}

bool IsPodEvicted(const Pod& pod) {
  if (pod.status.phase != "Failed" || !pod.raw) return false;
  return StringAt(Member(*pod.raw, "status"), "reason") == "Evicted";
}

bool CollectedBefore(const Pod* a, const Pod* b) {
  const bool a_evicted = IsPodEvicted(*a), b_evicted = IsPodEvicted(*b);
  if (a_evicted != b_evicted) return a_evicted;
  if (a->metadata.creation_timestamp != b->metadata.creation_timestamp)
    return a->metadata.creation_timestamp < b->metadata.creation_timestamp;
  return a->metadata.name < b->metadata.name;
}

PodGcPlan PlanPodGc(std::span<const Object> pods, std::span<const Object> nodes, int threshold) {
  std::unordered_map<std::string_view, const Node*> by_name;
  by_name.reserve(nodes.size());
  for (const Object& obj : nodes) {
    const auto* held = std::get_if<std::shared_ptr<const Node>>(&obj);
    if (held && *held) by_name.emplace((*held)->metadata.name, held->get());
  }
  PodGcPlan plan;
  std::unordered_set<std::string_view> missing;
  for (const Object& obj : pods) {
    const Pod* pod = PodOf(obj);
    if (!pod) continue;
    if (threshold > 0 && IsPodTerminated(*pod)) plan.terminated.push_back(pod);
    const std::string& node_name = pod->spec.node_name;
    if (node_name.empty()) {
      if (pod->metadata.deletion_timestamp) plan.unscheduled.push_back(pod);
      continue;
    }
    auto node = by_name.find(node_name);
    if (node == by_name.end()) {
      if (missing.insert(node_name).second) plan.missing_nodes.push_back(node_name);
      continue;
    }
    if (!pod->metadata.deletion_timestamp || !HasOutOfServiceTaint(*node->second)) continue;
    // The Ready condition is not among the typed fields: read only for the tainted nodes.
    if (node->second->raw && ReadyStatus(*node->second->raw) == "True") continue;
    plan.out_of_service.push_back(pod);
  }
  std::sort(plan.out_of_service.begin(), plan.out_of_service.end(), CollectedBefore);
  auto& terminated = plan.terminated;
  if (terminated.size() <= static_cast<size_t>(std::max(threshold, 0))) {
    terminated.clear();
    return plan;
  }
  const auto excess = static_cast<ptrdiff_t>(terminated.size() - static_cast<size_t>(threshold));
  // Only the first `excess` in order are wanted: a partial sort leaves the rest unordered.
  std::partial_sort(terminated.begin(), terminated.begin() + excess, terminated.end(),
                    CollectedBefore);
  terminated.resize(static_cast<size_t>(excess));
  return plan;
}

PodGcController::PodGcController(client::RestClient* rest, SharedInformer* pods,
                                 SharedInformer* nodes, ControllerOptions options)
    : rest_(rest), pods_(pods), nodes_(nodes), options_(std::move(options)) {}

PodGcController::~PodGcController() { Stop(); }

void PodGcController::Start() {
  ticker_.Start(
      options_.clock, kPodGcCheckPeriod, [this] { GcOnce(); }, "a pod GC round");
}

void PodGcController::Stop() { ticker_.Stop(); }

PodGcRound PodGcController::GcOnce() {
  std::lock_guard lock(mu_);
  // The informers' objects, shared: no document is copied.
  const std::vector<Object> pods = pods_->List();
  const std::vector<Object> nodes = nodes_->List();
  const PodGcPlan plan = PlanPodGc(pods, nodes, options_.terminated_pod_gc_threshold);
  PodGcRound round;
  deleted_.clear();
  // Thousands may go at once: the round's summary counts them rather than a line each.
  DeleteAll(plan.terminated, nullptr, nullptr, &round.terminated, round);
  DeleteAll(plan.out_of_service, "terminating on an out-of-service node", nullptr,
            &round.out_of_service, round);
  const std::vector<std::string> gone = DiscoverDeletedNodes(plan.missing_nodes);
  if (!gone.empty()) {
    const std::unordered_set<std::string_view> gone_set(gone.begin(), gone.end());
    std::vector<const Pod*> orphans;
    for (const Object& obj : pods) {
      const Pod* pod = PodOf(obj);
      if (pod && !pod->spec.node_name.empty() && gone_set.count(pod->spec.node_name))
        orphans.push_back(pod);
    }
    const Json condition = {{"type", "DisruptionTarget"},
                            {"status", "True"},
                            {"reason", "DeletionByPodGC"},
                            {"message", "PodGC: node no longer exists"}};
    DeleteAll(orphans, "orphaned, its node no longer exists", &condition, &round.orphaned, round);
  }
  DeleteAll(plan.unscheduled, "terminating and never scheduled", nullptr, &round.unscheduled,
            round);
  deleted_.clear();
  if (options_.log && (round.Deleted() > 0 || round.failed > 0)) {
    options_.log(fmt::format(
        "pod-garbage-collector: deleted {} pods ({} terminated over the threshold, {} on "
        "out-of-service nodes, {} orphaned, {} unscheduled and terminating); {} writes failed",
        round.Deleted(), round.terminated, round.out_of_service, round.orphaned, round.unscheduled,
        round.failed));
  }
  return round;
}

void PodGcController::DeleteAll(const std::vector<const Pod*>& pods, const char* why,
                                const Json* condition, int* count, PodGcRound& round) {
  for (const Pod* pod : pods) {
    if (deleted_.count(pod->metadata.uid)) continue;
    if (MarkFailedAndDelete(*pod, why, condition)) {
      ++*count;
    } else {
      ++round.failed;
    }
  }
}

std::vector<std::string> PodGcController::DiscoverDeletedNodes(
    const std::vector<std::string_view>& missing) {
  const TimePoint now = options_.clock->Now();
  // The first sighting sets the end of the quarantine; later ones do not push it back.
  for (std::string_view name : missing)
    quarantine_.try_emplace(std::string(name), now + kPodGcQuarantine);
  std::vector<std::string> gone;
  for (auto it = quarantine_.begin(); it != quarantine_.end();) {
    if (it->second > now) {
      ++it;
      continue;
    }
    const std::string name = it->first;
    it = quarantine_.erase(it);
    // Back in the informer, or no pod bound to it any more: nothing to collect.
    if (std::find(missing.begin(), missing.end(), name) == missing.end()) continue;
    // The informer may lag: the API server has the last word on whether the node is gone.
    auto got = rest_->Get("/api/v1/nodes/" + name);
    if (got.ok()) continue;
    if (got.error().code != ErrorCode::kNotFound) {
      // Quarantined again by the next round if its pods are still there.
      if (options_.log)
        options_.log(
            fmt::format("pod-garbage-collector: reading node {}: {}", name, got.error().message));
      continue;
    }
    gone.push_back(name);
  }
  return gone;
}

bool PodGcController::MarkFailedAndDelete(const Pod& pod, const char* why, const Json* condition) {
  const std::string path = PodPath(pod);
  auto refused = [&](const char* step, const Error& e) {
    if (e.code == ErrorCode::kNotFound) return false;
    if (options_.log)
      options_.log(fmt::format("pod-garbage-collector: {} pod {}/{}: {}", step,
                               pod.metadata.namespace_, pod.metadata.name, e.message));
    return true;
  };
  if (pod.status.phase != "Succeeded" && pod.status.phase != "Failed") {
    // The UID in the patch cannot change (the server refuses the patch with 422), so a pod of
    // the same name created since is not marked.
    Json status = {{"phase", "Failed"}};
    if (condition) {
      Json c = *condition;
      const auto& have = pod.status.conditions;
      const bool already = std::any_of(have.begin(), have.end(), [&](const PodCondition& x) {
        return x.type == c["type"] && x.status == c["status"];
      });
      // A condition already True keeps the time it became so (the merge keeps what is absent).
      if (!already)
        c["lastTransitionTime"] = FormatTimestamp(std::chrono::duration_cast<std::chrono::seconds>(
                                                      options_.clock->Now().time_since_epoch())
                                                      .count());
      status["conditions"] = Json::array({std::move(c)});
    }
    auto patched =
        rest_->Patch(path + "/status",
                     {{"metadata", {{"uid", pod.metadata.uid}}}, {"status", status}}, kStatusPatch);
    if (!patched.ok()) {
      if (refused("marking Failed", patched.error())) return false;
      deleted_.insert(pod.metadata.uid);
      return true;  // already gone
    }
  }
  auto r = rest_->Delete(
      path, {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}, {"gracePeriodSeconds", 0}});
  if (!r.ok() && refused("deleting", r.error())) return false;
  deleted_.insert(pod.metadata.uid);
  if (options_.log && why)
    options_.log(fmt::format("pod-garbage-collector: force-deleted pod {}/{}: {}",
                             pod.metadata.namespace_, pod.metadata.name, why));
  return true;
}

}  // namespace berth::controllers
