#include "controllers/disruption.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "controllers/pod_util.h"

namespace berth::controllers {
namespace {

UnixTime Seconds(TimePoint t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

// An IntOrString as upstream's GetScaledValueFromIntOrPercent with roundUp: an integer as it
// is, "N%" of `total` rounded up. False for anything else.
bool ScaledValue(const Json& v, int64_t total, int64_t* out) {
  if (v.is_number_integer()) {
    *out = v.get<int64_t>();
    return true;
  }
  if (!v.is_string()) return false;
  std::string s = v.get<std::string>();
  if (s.empty() || s.back() != '%') return false;
  s.pop_back();
  if (s.empty() || !std::all_of(s.begin(), s.end(), ::isdigit)) return false;
  const int64_t percent = std::stoll(s);
  *out = (percent * total + 99) / 100;
  return true;
}

// The DisruptionAllowed condition, its lastTransitionTime kept when its status does not change.
Json Condition(const Json& old_status, bool allowed, const std::string& reason,
               const std::string& message, UnixTime now) {
  Json c = {{"type", "DisruptionAllowed"},
            {"status", allowed ? "True" : "False"},
            {"reason", reason},
            {"message", message},
            {"lastTransitionTime", NowTimestamp(now)}};
  const Json& conds = Member(old_status, "conditions");
  if (conds.is_array()) {
    for (const auto& old : conds) {
      if (old.is_object() && old.value("type", "") == "DisruptionAllowed" &&
          old.value("status", "") == c["status"] && old.contains("lastTransitionTime")) {
        c["lastTransitionTime"] = old["lastTransitionTime"];
      }
    }
  }
  return c;
}

}  // namespace

Json ComputeBudgetStatus(const Json& budget, const BudgetInput& in, UnixTime now,
                         int64_t* requeue_after_seconds) {
  const Json& old_status = Member(budget, "status");
  const Json& spec = Member(budget, "spec");
  Json status = old_status.is_object() ? old_status : Json::object();
  status["observedGeneration"] = IntAt(Member(budget, "metadata"), "generation");
  // Evictions recorded by the API server, until the pod is seen deleted or they time out.
  std::map<std::string, Json> disrupted;
  const Json& recorded = Member(old_status, "disruptedPods");
  *requeue_after_seconds = 0;
  for (const Json* pod : in.pods) {
    const std::string name = NameOf(*pod);
    if (!recorded.is_object() || !recorded.contains(name) || HasDeletionTimestamp(*pod)) continue;
    auto when = ParseTimestamp(recorded[name].is_string() ? recorded[name].get<std::string>() : "");
    if (!when.ok()) continue;
    const int64_t expires = *when + kDisruptedPodTimeoutSeconds;
    if (expires < now) continue;
    disrupted[name] = recorded[name];
    const int64_t wait = expires - now + 1;
    if (*requeue_after_seconds == 0 || wait < *requeue_after_seconds) *requeue_after_seconds = wait;
  }
  status["disruptedPods"] = Json::object();
  for (auto& [name, at] : disrupted) status["disruptedPods"][name] = at;
  int64_t healthy = 0;
  for (const Json* pod : in.pods) {
    if (HasDeletionTimestamp(*pod) || disrupted.count(NameOf(*pod))) continue;
    if (IsPodReady(*pod)) ++healthy;
  }
  int64_t expected = 0, desired = 0;
  std::string error;
  const Json& min_available = Member(spec, "minAvailable");
  const Json& max_unavailable = Member(spec, "maxUnavailable");
  if (!max_unavailable.is_null()) {
    expected = in.expected_from_controllers;
    int64_t max = 0;
    if (!ScaledValue(max_unavailable, expected, &max)) error = "invalid maxUnavailable";
    desired = std::max<int64_t>(0, expected - max);
  } else if (min_available.is_number_integer()) {
    expected = static_cast<int64_t>(in.pods.size());
    desired = min_available.get<int64_t>();
  } else if (min_available.is_string()) {
    expected = in.expected_from_controllers;
    if (!ScaledValue(min_available, expected, &desired)) error = "invalid minAvailable";
  }
  if (!max_unavailable.is_null() || min_available.is_string()) {
    if (!in.controllers_error.empty()) error = in.controllers_error;
  }
  if (!error.empty()) {
    // Upstream's failSafe: nothing may be disrupted while the budget cannot be computed.
    status["disruptionsAllowed"] = 0;
    status["conditions"] = Json::array({Condition(old_status, false, "SyncFailed", error, now)});
    return status;
  }
  int64_t allowed = healthy - desired;
  if (expected <= 0 || allowed <= 0) allowed = 0;
  status["currentHealthy"] = healthy;
  status["desiredHealthy"] = desired;
  status["expectedPods"] = expected;
  status["disruptionsAllowed"] = allowed;
  status["conditions"] = Json::array({Condition(
      old_status, allowed > 0, allowed > 0 ? "SufficientPods" : "InsufficientPods", "", now)});
  return status;
}

DisruptionController::DisruptionController(client::RestClient* rest, DisruptionInformers informers,
                                           ControllerOptions options)
    : rest_(rest),
      inf_(informers),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  client::InformerHandlers pdb;
  pdb.on_add = [this](const Object& o) { queue_.Add(KeyOf(DocOf(o))); };
  pdb.on_update = [this](const Object&, const Object& o) { queue_.Add(KeyOf(DocOf(o))); };
  pdb.on_delete = [this](const Object& o) { queue_.Forget(KeyOf(DocOf(o))); };
  inf_.pdbs->AddHandlers(std::move(pdb));
  client::InformerHandlers pods;
  pods.on_add = [this](const Object& o) { EnqueueForPod(DocOf(o)); };
  pods.on_update = [this](const Object& a, const Object& b) {
    EnqueueForPod(DocOf(a));
    EnqueueForPod(DocOf(b));
  };
  pods.on_delete = [this](const Object& o) { EnqueueForPod(DocOf(o)); };
  inf_.pods->AddHandlers(std::move(pods));
  // A controller's scale changes expectedPods of the budgets of its namespace.
  for (SharedInformer* s :
       {inf_.replicasets, inf_.replicationcontrollers, inf_.deployments, inf_.statefulsets}) {
    client::InformerHandlers h;
    h.on_add = [this](const Object& o) { EnqueueNamespace(NamespaceOf(DocOf(o))); };
    h.on_update = [this](const Object& a, const Object& b) {
      if (Member(DocOf(a), "spec") != Member(DocOf(b), "spec")) {
        EnqueueNamespace(NamespaceOf(DocOf(b)));
      }
    };
    h.on_delete = [this](const Object& o) { EnqueueNamespace(NamespaceOf(DocOf(o))); };
    s->AddHandlers(std::move(h));
  }
}

DisruptionController::~DisruptionController() { Stop(); }

void DisruptionController::Start() { workers_.Start(options_.workers); }

void DisruptionController::Stop() { workers_.Stop(); }

void DisruptionController::EnqueueNamespace(const std::string& ns) {
  for (const Object& o : inf_.pdbs->List()) {
    if (NamespaceOf(DocOf(o)) == ns) queue_.Add(KeyOf(DocOf(o)));
  }
}

void DisruptionController::EnqueueForPod(const Json& pod) {
  const std::string ns = NamespaceOf(pod);
  const Labels labels = LabelsOf(pod);
  for (const Object& o : inf_.pdbs->List()) {
    const Json& pdb = DocOf(o);
    if (NamespaceOf(pdb) != ns) continue;
    const Json& selector = Member(Member(pdb, "spec"), "selector");
    if (selector.is_null()) continue;
    auto compiled = LabelSelectorOf(selector);
    if (compiled.ok() && compiled->Matches(labels)) queue_.Add(KeyOf(pdb));
  }
}

int64_t DisruptionController::ExpectedScale(const std::vector<const Json*>& pods,
                                            std::string* error) const {
  std::map<std::string, int64_t> scale_by_uid;
  for (const Json* pod : pods) {
    const Json* ref = ControllerRefOf(*pod);
    const std::string ns = NamespaceOf(*pod);
    if (ref == nullptr) {
      *error = fmt::format("found no controller ref for pod \"{}\"", NameOf(*pod));
      return 0;
    }
    const std::string kind = ref->value("kind", "");
    const std::string key = ns + "/" + ref->value("name", "");
    SharedInformer* informer = kind == "ReplicaSet"              ? inf_.replicasets
                               : kind == "ReplicationController" ? inf_.replicationcontrollers
                               : kind == "StatefulSet"           ? inf_.statefulsets
                                                                 : nullptr;
    std::optional<Object> owner = informer ? informer->Get(key) : std::nullopt;
    if (!owner || UidOf(DocOf(*owner)) != ref->value("uid", "")) {
      *error = fmt::format("found no controllers for pod \"{}\"", NameOf(*pod));
      return 0;
    }
    Json doc = DocOf(*owner);
    // A ReplicaSet of a Deployment: the Deployment's scale counts.
    if (const Json* up = ControllerRefOf(doc);
        kind == "ReplicaSet" && up != nullptr && up->value("kind", "") == "Deployment") {
      auto deployment = inf_.deployments->Get(ns + "/" + up->value("name", ""));
      if (deployment && UidOf(DocOf(*deployment)) == up->value("uid", "")) {
        doc = DocOf(*deployment);
      }
    }
    scale_by_uid[UidOf(doc)] = IntAt(Member(doc, "spec"), "replicas", 1);
  }
  int64_t total = 0;
  for (const auto& [uid, n] : scale_by_uid) total += n;
  return total;
}

VoidResult DisruptionController::Sync(const std::string& key) {
  auto obj = inf_.pdbs->Get(key);
  if (!obj) return {};
  const Json budget = DocOf(*obj);
  const std::string ns = NamespaceOf(budget);
  BudgetInput in;
  std::vector<Object> all = inf_.pods->List();
  const Json& selector = Member(Member(budget, "spec"), "selector");
  if (!selector.is_null()) {
    auto compiled = LabelSelectorOf(selector);
    if (compiled.ok()) {
      for (const Object& o : all) {
        const Json& pod = DocOf(o);
        if (NamespaceOf(pod) == ns && compiled->Matches(LabelsOf(pod))) in.pods.push_back(&pod);
      }
    }
  }
  in.expected_from_controllers = ExpectedScale(in.pods, &in.controllers_error);
  int64_t requeue = 0;
  Json status = ComputeBudgetStatus(budget, in, Seconds(options_.clock->Now()), &requeue);
  if (requeue > 0) queue_.AddAfter(key, std::chrono::seconds(requeue));
  if (status == Member(budget, "status")) return {};
  Json next = budget;
  next["status"] = status;
  const std::string path = fmt::format(
      "/apis/policy/v1/namespaces/{}/poddisruptionbudgets/{}/status", ns, NameOf(budget));
  auto put = rest_->Put(path, next);
  // A conflict (an eviction spent a disruption meanwhile): synced again from the new copy.
  if (!put.ok()) return put.error();
  return {};
}

}  // namespace berth::controllers
