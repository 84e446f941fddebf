#include "controllers/daemon_set.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "controllers/controller_revision.h"
#include "controllers/daemon_set_util.h"
#include "controllers/deployment_util.h"
#include "controllers/pod_util.h"

namespace berth::controllers {

namespace {

UnixTime Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

std::string DaemonSetPath(const std::string& ns, const std::string& name) {
  return fmt::format("/apis/apps/v1/namespaces/{}/daemonsets/{}", ns, name);
}

bool OutcomeUnknown(const client::ClientError& e) {
  return (e.code == ErrorCode::kTimeout || e.code == ErrorCode::kUnavailable) && !e.never_sent;
}

std::shared_ptr<const Json> Holder(const Object& obj) {
  return std::visit([](const auto& p) -> std::shared_ptr<const Json> { return p->raw; }, obj);
}

std::string HashOf(const Json& pod) {
  return StringAt(Member(Member(pod, "metadata"), "labels"), kControllerRevisionHashLabel);
}

void SortOldestFirst(std::vector<const Json*>& pods) {
  std::sort(pods.begin(), pods.end(), [](const Json* a, const Json* b) {
    const UnixTime ta = CreatedAt(*a), tb = CreatedAt(*b);
    return ta != tb ? ta < tb : NameOf(*a) < NameOf(*b);
  });
}

bool IsFailed(const Json& pod) { return StringAt(Member(pod, "status"), "phase") == "Failed"; }

// The node's labels, taints and schedulability: what decides whether a daemon pod belongs.
bool NodeFitChanged(const Json& a, const Json& b) {
  return Member(Member(a, "metadata"), "labels") != Member(Member(b, "metadata"), "labels") ||
         Member(Member(a, "spec"), "taints") != Member(Member(b, "spec"), "taints") ||
         Member(Member(a, "spec"), "unschedulable") != Member(Member(b, "spec"), "unschedulable");
}

bool DaemonRollingUpdate(const Json& ds) {
  const std::string type = StringAt(Member(Member(ds, "spec"), "updateStrategy"), "type");
  return type.empty() || type == "RollingUpdate";
}

// The new-revision pod and the old one on a node; false when there are several of either.
bool FindUpdatedPods(const std::vector<const Json*>& pods, const std::string& hash,
                     const Json** new_pod, const Json** old_pod) {
  *new_pod = *old_pod = nullptr;
  for (const Json* p : pods) {
    if (IsFailed(*p)) continue;
    const Json** slot = HashOf(*p) == hash ? new_pod : old_pod;
    if (*slot) return false;
    *slot = p;
  }
  return true;
}

}  // namespace

DaemonSetController::DaemonSetController(client::RestClient* rest, SharedInformer* pods,
                                         SharedInformer* nodes, SharedInformer* daemon_sets,
                                         SharedInformer* revisions, ControllerOptions options)
    : rest_(rest),
      pods_(pods),
      nodes_(nodes),
      sets_(daemon_sets),
      revisions_(revisions),
      options_(std::move(options)),
      queue_(options_.clock),
      expectations_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  sets_->AddHandlers(
      EnqueueOnEvents(&queue_, [this](const std::string& key) { expectations_.Delete(key); }));
  client::InformerHandlers pod_handlers;
  pod_handlers.on_add = [this](const Object& o) { OnPodEvent(o, PodEvent::kAdd); };
  pod_handlers.on_update = [this](const Object&, const Object& o) {
    OnPodEvent(o, PodEvent::kUpdate);
  };
  pod_handlers.on_delete = [this](const Object& o) { OnPodEvent(o, PodEvent::kDelete); };
  pods_->AddHandlers(std::move(pod_handlers));
  client::InformerHandlers node_handlers;
  node_handlers.on_add = [this](const Object&) { EnqueueAll(); };
  node_handlers.on_update = [this](const Object& a, const Object& b) {
    if (NodeFitChanged(DocOf(a), DocOf(b))) EnqueueAll();
  };
  node_handlers.on_delete = [this](const Object&) { EnqueueAll(); };
  nodes_->AddHandlers(std::move(node_handlers));
  pods_->AddOwnerIndexes();
}

DaemonSetController::~DaemonSetController() { Stop(); }
void DaemonSetController::Start() { workers_.Start(options_.workers); }
void DaemonSetController::Stop() { workers_.Stop(); }

void DaemonSetController::EnqueueAll() {
  for (const Object& o : sets_->List()) queue_.Add(KeyOf(DocOf(o)));
}

std::shared_ptr<const Json> DaemonSetController::OwnerOf(const Json& pod) const {
  const Json* ref = ControllerRefOf(pod);
  if (!ref || StringAt(*ref, "kind") != "DaemonSet") return nullptr;
  auto set = sets_->Get(NamespaceOf(pod) + "/" + StringAt(*ref, "name"));
  if (!set || UidOf(DocOf(*set)) != StringAt(*ref, "uid")) return nullptr;
  return Holder(*set);
}

void DaemonSetController::OnPodEvent(const Object& obj, PodEvent event) {
  const Json& pod = DocOf(obj);
  auto ds = OwnerOf(pod);
  if (!ds) return;
  const std::string key = KeyOf(*ds);
  if (event == PodEvent::kDelete || HasDeletionTimestamp(pod)) {
    expectations_.DeletionObserved(key, KeyOf(pod));
  } else if (event == PodEvent::kAdd) {
    expectations_.CreationObserved(key);
  }
  queue_.Add(key);
}

Result<DaemonSetController::Plan> DaemonSetController::Manage(const Json& ds, const Pod& daemon_pod,
                                                              const NodePods& by_node,
                                                              const std::string& hash) {
  Plan plan;
  const Json& max_surge =
      Member(Member(Member(Member(ds, "spec"), "updateStrategy"), "rollingUpdate"), "maxSurge");
  const bool surge = DaemonRollingUpdate(ds) && !max_surge.is_null() && max_surge != Json(0) &&
                     max_surge != Json("0%");
  const int64_t min_ready = IntAt(Member(ds, "spec"), "minReadySeconds");
  const UnixTime now = Seconds(options_.clock->Now());
  std::set<std::string> seen;
  for (const Object& o : nodes_->List()) {
    const auto* node = std::get_if<std::shared_ptr<const Node>>(&o);
    if (!node) continue;
    const std::string& name = (*node)->metadata.name;
    seen.insert(name);
    const NodeFit fit =
        NodeShouldRunDaemonPod(daemon_pod, **node, options_.taint_toleration_comparison_operators);
    auto it = by_node.find(name);
    std::vector<const Json*> pods = it == by_node.end() ? std::vector<const Json*>{} : it->second;
    if (!fit.should_run) {
      if (!fit.should_continue_running)
        plan.remove.insert(plan.remove.end(), pods.begin(), pods.end());
      continue;
    }
    if (pods.empty()) {
      plan.create_on.push_back(name);
      continue;
    }
    std::vector<const Json*> running;
    for (const Json* p : pods) (IsFailed(*p) ? plan.remove : running).push_back(p);
    if (running.size() <= 1) continue;
    SortOldestFirst(running);
    if (!surge) {
      plan.remove.insert(plan.remove.end(), running.begin() + 1, running.end());
      continue;
    }
    // Surge allows an old pod beside the new one only while the new one is not ready yet.
    const Json *oldest_new = nullptr, *oldest_old = nullptr;
    for (const Json* p : running) {
      const Json*& slot = HashOf(*p) == hash ? oldest_new : oldest_old;
      if (!slot) slot = p;
    }
    if (oldest_new && oldest_old &&
        (!IsPodReady(*oldest_old) || IsPodAvailable(*oldest_new, min_ready, now))) {
      plan.remove.push_back(oldest_old);
      oldest_old = nullptr;
    }
    for (const Json* p : running)
      if (p != oldest_new && p != oldest_old) plan.remove.push_back(p);
  }
  for (const auto& [node, pods] : by_node) {
    if (!seen.count(node)) plan.remove.insert(plan.remove.end(), pods.begin(), pods.end());
  }
  return plan;
}

Result<DaemonSetController::Plan> DaemonSetController::RollingUpdate(const Json& ds,
                                                                     const Pod& daemon_pod,
                                                                     const NodePods& by_node,
                                                                     const std::string& hash) {
  const Json& spec = Member(ds, "spec");
  const Json& ru = Member(Member(spec, "updateStrategy"), "rollingUpdate");
  const int64_t min_ready = IntAt(spec, "minReadySeconds");
  const UnixTime now = Seconds(options_.clock->Now());
  std::map<std::string, std::shared_ptr<const Node>> nodes;
  for (const Object& o : nodes_->List()) {
    if (const auto* n = std::get_if<std::shared_ptr<const Node>>(&o))
      nodes[(*n)->metadata.name] = *n;
  }
  int64_t desired = 0;
  for (const auto& [name, node] : nodes)
    desired +=
        NodeShouldRunDaemonPod(daemon_pod, *node, options_.taint_toleration_comparison_operators)
            .should_run;
  const Json max_surge_v = Member(ru, "maxSurge").is_null() ? Json(0) : Member(ru, "maxSurge");
  const Json max_unavail_v =
      Member(ru, "maxUnavailable").is_null() ? Json(1) : Member(ru, "maxUnavailable");
  auto surge = ScaledValue(max_surge_v, desired, true);
  if (!surge.ok()) return surge.error();
  auto unavailable = ScaledValue(max_unavail_v, desired, true);
  if (!unavailable.ok()) return unavailable.error();
  int64_t max_surge = *surge, max_unavailable = *unavailable;
  if (max_surge == 0 && max_unavailable == 0) max_unavailable = 1;
  Plan plan;
  if (max_surge == 0) {
    int64_t num_unavailable = 0;
    std::vector<const Json*> candidates;
    for (const auto& [name, pods] : by_node) {
      const Json *new_pod, *old_pod;
      if (!FindUpdatedPods(pods, hash, &new_pod, &old_pod) || (!old_pod && !new_pod) ||
          (old_pod && new_pod)) {
        ++num_unavailable;
      } else if (new_pod) {
        if (!IsPodAvailable(*new_pod, min_ready, now)) ++num_unavailable;
      } else if (!IsPodAvailable(*old_pod, min_ready, now)) {
        plan.remove.push_back(old_pod);  // not serving anyway: replace it now
      } else if (num_unavailable < max_unavailable) {
        candidates.push_back(old_pod);
      }
    }
    const int64_t room = std::clamp<int64_t>(max_unavailable - num_unavailable, 0,
                                             static_cast<int64_t>(candidates.size()));
    plan.remove.insert(plan.remove.end(), candidates.begin(), candidates.begin() + room);
    return plan;
  }
  int64_t num_surge = 0;
  std::vector<std::string> candidates;
  for (const auto& [name, pods] : by_node) {
    const Json *new_pod, *old_pod;
    if (!FindUpdatedPods(pods, hash, &new_pod, &old_pod)) {
      ++num_surge;
      continue;
    }
    auto node = nodes.find(name);
    if (node == nodes.end() ||
        !NodeShouldRunDaemonPod(daemon_pod, *node->second,
                                options_.taint_toleration_comparison_operators)
             .should_run) {
      if (old_pod) plan.remove.push_back(old_pod);
      continue;
    }
    if (!old_pod) continue;
    if (!new_pod) {
      if (!IsPodAvailable(*old_pod, min_ready, now)) {
        plan.create_on.push_back(name);
      } else if (num_surge < max_surge) {
        candidates.push_back(name);
      }
    } else if (!IsPodAvailable(*new_pod, min_ready, now)) {
      ++num_surge;
    } else {
      plan.remove.push_back(old_pod);
    }
  }
  const int64_t room =
      std::clamp<int64_t>(max_surge - num_surge, 0, static_cast<int64_t>(candidates.size()));
  plan.create_on.insert(plan.create_on.end(), candidates.begin(), candidates.begin() + room);
  return plan;
}

VoidResult DaemonSetController::SyncNodes(const Json& ds, const std::string& key, const Plan& plan,
                                          const std::string& hash) {
  const int creates = std::min<int>(plan.create_on.size(), kBurstReplicas);
  const int deletes = std::min<int>(plan.remove.size(), kBurstReplicas);
  std::optional<Error> first_error;
  std::vector<std::string> del_keys;
  std::vector<client::RestClient::EncodedWrite> del_writes;
  for (int i = 0; i < deletes; ++i) {
    const Json& p = *plan.remove[i];
    del_keys.push_back(KeyOf(p));
    del_writes.push_back(
        {fmt::format("/api/v1/namespaces/{}/pods/{}", NamespaceOf(p), NameOf(p)), ""});
  }
  expectations_.ExpectCreations(key, creates);
  expectations_.ExpectDeletions(key, del_keys);
  auto del_results = rest_->SendEncodedPipelined("DELETE", del_writes);
  for (size_t i = 0; i < del_results.size(); ++i) {
    if (del_results[i].ok() || OutcomeUnknown(del_results[i].error())) continue;
    expectations_.DeletionObserved(key, del_keys[i]);
    if (del_results[i].error().code != ErrorCode::kNotFound && !first_error)
      first_error = del_results[i].error();
  }
  const std::string path = fmt::format("/api/v1/namespaces/{}/pods", NamespaceOf(ds));
  // Slow start, as the ReplicaSet controller: 1, 2, 4, ... at a time, stopping at a failure.
  int next = 0, counted = 0;
  for (int batch = std::min(creates, 1); batch > 0; batch = std::min(2 * batch, creates - next)) {
    std::vector<client::RestClient::EncodedWrite> writes;
    for (int i = next; i < next + batch; ++i)
      writes.push_back({path, NewDaemonPod(ds, plan.create_on[i], hash).dump()});
    next += batch;
    int failed = 0;
    for (const auto& r : rest_->SendEncodedPipelined("POST", writes)) {
      if (r.ok() || OutcomeUnknown(r.error())) {
        ++counted;
      } else if (IsNamespaceTerminating(r.error())) {
        ++failed;  // nothing to retry: the set goes with its namespace
      } else if (failed++ == 0 && !first_error) {
        first_error = r.error();
      }
    }
    if (failed > 0) break;
  }
  for (int i = counted; i < creates; ++i) expectations_.CreationObserved(key);
  if (first_error) return *first_error;
  return {};
}

VoidResult DaemonSetController::WriteStatus(const Json& ds, const Pod& daemon_pod,
                                            const NodePods& by_node, const std::string& hash) {
  const int64_t min_ready = IntAt(Member(ds, "spec"), "minReadySeconds");
  const UnixTime now = Seconds(options_.clock->Now());
  int64_t desired = 0, current = 0, misscheduled = 0, ready = 0, available = 0, updated = 0;
  for (const Object& o : nodes_->List()) {
    const auto* node = std::get_if<std::shared_ptr<const Node>>(&o);
    if (!node) continue;
    const bool should_run =
        NodeShouldRunDaemonPod(daemon_pod, **node, options_.taint_toleration_comparison_operators)
            .should_run;
    auto it = by_node.find((*node)->metadata.name);
    const bool scheduled = it != by_node.end() && !it->second.empty();
    if (!should_run) {
      misscheduled += scheduled;
      continue;
    }
    ++desired;
    if (!scheduled) continue;
    ++current;
    std::vector<const Json*> pods = it->second;
    SortOldestFirst(pods);
    const Json& pod = *pods.front();
    if (IsPodReady(pod)) {
      ++ready;
      available += IsPodAvailable(pod, min_ready, now);
    }
    updated += HashOf(pod) == hash;
  }
  Json status = {{"desiredNumberScheduled", desired},
                 {"currentNumberScheduled", current},
                 {"numberMisscheduled", misscheduled},
                 {"numberReady", ready},
                 {"numberAvailable", available},
                 {"numberUnavailable", desired - available},
                 {"updatedNumberScheduled", updated},
                 {"observedGeneration", IntAt(Member(ds, "metadata"), "generation")}};
  const Json& old_status = Member(ds, "status");
  bool same = true;
  for (const auto& [field, value] : status.items())
    same = same && IntAt(old_status, field) == value.get<int64_t>();
  if (min_ready > 0 && ready != available) {
    queue_.AddAfter(KeyOf(ds), std::chrono::seconds(min_ready));
  }
  if (same) return {};
  const std::string path = DaemonSetPath(NamespaceOf(ds), NameOf(ds)) + "/status";
  Json next = ds;
  const Json& cc = Member(old_status, "collisionCount");
  next["status"] = status;
  if (!cc.is_null()) next["status"]["collisionCount"] = cc;
  auto put = rest_->Put(path, next);
  if (put.ok()) return {};
  if (put.error().code != ErrorCode::kConflict) return put.error();
  auto fresh = rest_->Get(DaemonSetPath(NamespaceOf(ds), NameOf(ds)));
  if (!fresh.ok()) return fresh.error();
  for (const auto& [field, value] : status.items()) (*fresh)["status"][field] = value;
  auto again = rest_->Put(path, *fresh);
  if (!again.ok()) return again.error();
  return {};
}

VoidResult DaemonSetController::Sync(const std::string& key) {
  auto obj = sets_->Get(key);
  if (!obj) {
    expectations_.Delete(key);
    return {};
  }
  auto holder = Holder(*obj);
  if (!holder) return {};
  const Json& ds = *holder;
  auto daemon_pod = DaemonPodOf(ds);
  if (!daemon_pod.ok()) {
    if (options_.log)
      options_.log(fmt::format("DaemonSet {}: {}", key, daemon_pod.error().message));
    return {};  // not retried: the object must change first
  }
  const std::string ns = NamespaceOf(ds);
  const std::string uid = UidOf(ds);
  std::vector<Object> all = pods_->ControlledBy(uid);
  NodePods by_node;
  std::set<std::string> live_hashes;
  for (const Object& o : all) {
    const auto* pod = std::get_if<std::shared_ptr<const Pod>>(&o);
    if (!pod || !*pod || (*pod)->metadata.namespace_ != ns) continue;
    // The typed fields rather than the document: a sync visits every pod of the set.
    const ObjectMeta& meta = (*pod)->metadata;
    const OwnerReference* ref = ControllerOf(meta);
    if (!ref || ref->uid != uid || meta.deletion_timestamp) continue;
    by_node[TargetNodeName(**pod)].push_back(&DocOf(o));
    auto hash = meta.labels.find(std::string(kControllerRevisionHashLabel));
    live_hashes.insert(hash == meta.labels.end() ? std::string() : hash->second);
  }
  if (HasDeletionTimestamp(ds)) return {};
  auto revisions = SyncRevisions(rest_, revisions_, ds, "DaemonSet", live_hashes);
  if (!revisions.ok()) return revisions.error();
  if (revisions->namespace_terminating) return {};
  const std::string& hash = revisions->update_hash;
  std::optional<Error> manage_error;
  if (expectations_.Satisfied(key)) {
    auto plan = Manage(ds, *daemon_pod, by_node, hash);
    if (plan.ok() && plan->create_on.empty() && plan->remove.empty() && DaemonRollingUpdate(ds))
      plan = RollingUpdate(ds, *daemon_pod, by_node, hash);
    if (!plan.ok()) {
      manage_error = plan.error();
    } else if (!plan->create_on.empty() || !plan->remove.empty()) {
      if (auto r = SyncNodes(ds, key, *plan, hash); !r.ok()) manage_error = r.error();
    }
  }
  if (auto r = WriteStatus(ds, *daemon_pod, by_node, hash); !r.ok()) return r.error();
  if (manage_error) return *manage_error;
  return {};
}

}  // namespace berth::controllers
