#include "scenario/runner.h"

#include <fmt/format.h>

#include "apiserver/resources.h"
#include "kubelet/simulated_kubelets.h"

namespace berth::scenario {
namespace {

using Json = nlohmann::json;

// The collection path of an object's kind, and its item path when it has a name.
Result<std::pair<std::string, std::string>> PathsOf(const Json& obj) {
  const std::string api_version = obj.value("apiVersion", "");
  const std::string kind = obj.value("kind", "");
  const auto slash = api_version.find('/');
  const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
  const apiserver::ResourceInfo* r = apiserver::FindResourceByKind(group, kind);
  if (!r) return Error{fmt::format("{} {} is not served", api_version, kind), ErrorCode::kInvalid};
  const Json& meta = obj.value("metadata", Json::object());
  std::string collection = group.empty() ? "/api/v1" : "/apis/" + api_version;
  if (r->namespaced) {
    const std::string ns = meta.value("namespace", "default");
    collection += "/namespaces/" + (ns.empty() ? std::string("default") : ns);
  }
  collection += "/" + r->plural;
  const std::string name = meta.value("name", "");
  return std::make_pair(collection, name.empty() ? "" : collection + "/" + name);
}

std::string ObjectName(const Json& obj) {
  const Json& meta = obj.value("metadata", Json::object());
  std::string name = meta.value("name", "");
  if (name.empty()) name = meta.value("generateName", "") + "*";
  return fmt::format("{}/{}", obj.value("kind", ""), name);
}

VoidResult WriteObject(client::RestClient& rest, StepKind kind, Json obj) {
  auto paths = PathsOf(obj);
  if (!paths.ok()) return paths.error();
  const auto& [collection, item] = *paths;
  if (kind == StepKind::kDelete) {
    if (item.empty()) return Error{"a deleted object needs metadata.name", ErrorCode::kInvalid};
    auto r = rest.Delete(item);
    if (!r.ok()) return r.error();
    return {};
  }
  if (kind == StepKind::kApply && !item.empty()) {
    auto current = rest.Get(item);
    if (current.ok()) {
      obj["metadata"]["resourceVersion"] =
          (*current)["metadata"].value("resourceVersion", std::string());
      auto r = rest.Put(item, obj);
      if (!r.ok()) return r.error();
      return {};
    }
    if (current.error().code != ErrorCode::kNotFound) return current.error();
  }
  auto r = rest.Post(collection, obj);
  if (!r.ok()) return r.error();
  return {};
}

std::string ScalePath(const Step& step) {
  std::string group_path =
      step.target_kind == "ReplicationController" ? "/api/v1" : "/apis/apps/v1";
  std::string plural = step.target_kind == "Deployment"    ? "deployments"
                       : step.target_kind == "ReplicaSet"  ? "replicasets"
                       : step.target_kind == "StatefulSet" ? "statefulsets"
                                                           : "replicationcontrollers";
  return fmt::format("{}/namespaces/{}/{}/{}", group_path, step.namespace_, plural, step.name);
}

class Run {
 public:
  Run(const Scenario& scenario, SimCluster* cluster, simtime::SimulatedClock* clock,
      RunResult* result)
      : scenario_(scenario),
        cluster_(cluster),
        clock_(clock),
        result_(result),
        start_(clock->Now()) {}

  VoidResult All() {
    if (!scenario_.cluster_objects.empty()) {
      Step files;
      files.kind = StepKind::kApply;
      files.where = "spec.cluster.files";
      files.objects = scenario_.cluster_objects;
      if (auto r = Execute(files); !r.ok()) return r;
    }
    for (const Step& step : scenario_.steps) {
      if (step.at) {
        if (auto r = RunUntil(start_ + *step.at); !r.ok()) return r;
      }
      if (auto r = Execute(step); !r.ok()) return r;
    }
    return cluster_->Settle();
  }

 private:
  // Lets the cluster run to `target`: from one due moment to the next, settling at each.
  VoidResult RunUntil(TimePoint target) {
    for (;;) {
      if (auto r = cluster_->Settle(); !r.ok()) return r;
      auto next = cluster_->NextDue();
      if (!next || Resolved(*next) > target) break;
      Jump(Resolved(*next));
    }
    if (clock_->Now() < target) Jump(target);
    return cluster_->Settle();
  }

  // `t` rounded up to the scenario's resolution (a multiple of it from the start).
  TimePoint Resolved(TimePoint t) const {
    const Duration step = scenario_.resolution;
    if (step <= Duration::zero() || t <= start_) return t;
    const auto steps = ((t - start_) + step - Duration(1)) / step;
    return start_ + steps * step;
  }

  void Jump(TimePoint t) {
    cluster_->AdvanceTo(t);
    ++result_->clock_jumps;
  }

  VoidResult Fail(const Step& step, const std::string& message) {
    return Error{fmt::format("{}.{}: {}", step.where, StepKindName(step.kind), message),
                 ErrorCode::kInvalid};
  }

  VoidResult Execute(const Step& step) {
    if (auto r = cluster_->Settle(); !r.ok()) return r;
    client::RestClient& rest = cluster_->rest();
    switch (step.kind) {
      case StepKind::kApply:
      case StepKind::kCreate:
      case StepKind::kDelete: {
        std::vector<std::string> names;
        for (const Json& obj : step.objects) {
          if (auto r = WriteObject(rest, step.kind, obj); !r.ok())
            return Fail(step, fmt::format("{}: {}", ObjectName(obj), r.error().message));
          names.push_back(ObjectName(obj));
        }
        cluster_->watch().RecordStep(
            step, fmt::format("{} {}", StepKindName(step.kind), fmt::join(names, ", ")));
        break;
      }
      case StepKind::kScale: {
        auto r = rest.Patch(ScalePath(step), Json{{"spec", {{"replicas", step.replicas}}}},
                            "application/merge-patch+json");
        if (!r.ok()) return Fail(step, r.error().message);
        cluster_->watch().RecordStep(step, fmt::format("scale {} {}/{} to {}", step.target_kind,
                                                       step.namespace_, step.name, step.replicas));
        break;
      }
      case StepKind::kStopNode:
      case StepKind::kStartNode: {
        const bool stop = step.kind == StepKind::kStopNode;
        Json value = stop ? Json("true") : Json(nullptr);
        auto r = rest.Patch(
            "/api/v1/nodes/" + step.name,
            Json{{"metadata", {{"annotations", {{kubelet::kStoppedAnnotation, value}}}}}},
            "application/merge-patch+json");
        if (!r.ok()) return Fail(step, r.error().message);
        cluster_->watch().RecordStep(step,
                                     fmt::format("{} {}", stop ? "stop" : "start", step.name));
        break;
      }
      case StepKind::kWait:
        return Wait(step);
      case StepKind::kCheckpoint:
        result_->checkpoints.push_back(cluster_->watch().Take(step.name));
        cluster_->watch().RecordStep(step, "checkpoint " + step.name);
        break;
    }
    return cluster_->Settle();
  }

  VoidResult Wait(const Step& step) {
    const TimePoint deadline = clock_->Now() + step.wait.timeout;
    const std::string what = fmt::format("wait for {}", WaitForName(step.wait.condition));
    for (;;) {
      if (auto r = cluster_->Settle(); !r.ok()) return r;
      std::string detail;
      if (cluster_->watch().Holds(step.wait, &detail)) {
        cluster_->watch().RecordStep(step, fmt::format("{}: {}", what, detail));
        return {};
      }
      if (clock_->Now() >= deadline) {
        cluster_->watch().RecordWaitTimeout(step, fmt::format("{}: {}", what, detail));
        return Fail(
            step, fmt::format("timed out after {}: {}", FormatDuration(step.wait.timeout), detail));
      }
      auto next = cluster_->NextDue();
      Jump(next && Resolved(*next) < deadline ? Resolved(*next) : deadline);
    }
  }

  const Scenario& scenario_;
  SimCluster* cluster_;
  simtime::SimulatedClock* clock_;
  RunResult* result_;
  TimePoint start_;
};

}  // namespace

TimePoint ScenarioEpoch() {
  // 2030-01-01T00:00:00Z
  return TimePoint(std::chrono::seconds(1893456000));
}

Result<RunResult> RunScenario(const Scenario& scenario, const RunOptions& options) {
  simtime::SimulatedClock clock(ScenarioEpoch());
  auto cluster = SimCluster::Start(scenario.cluster, options.cluster, &clock);
  if (!cluster.ok()) return cluster.error();
  RunResult result;
  result.scenario = scenario.name;
  result.seed = options.cluster.seed;
  Run run(scenario, cluster->get(), &clock, &result);
  VoidResult done = run.All();
  if (!done.ok()) {
    if (done.error().code == ErrorCode::kUnavailable) return done.error();
    result.error = done.error().message;
    (void)(*cluster)->Settle();
  }
  result.end = (*cluster)->watch().Take("end");
  result.timeline = (*cluster)->watch().Timeline();
  result.series = (*cluster)->watch().Series();
  (*cluster)->Stop();
  return result;
}

}  // namespace berth::scenario
