#include "scenario/replay_steps.h"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "sim/recording.h"

namespace berth::scenario {
namespace {

using Json = nlohmann::json;
using Event = sim::RecordedEvent;

// The object as a client would create it: no server-set metadata, no owners, and for a pod no
// status (its kubelet and the scheduler here write it).
Json AsCreated(const Event& ev) {
  Json obj = ev.resource;
  Json& meta = obj["metadata"];
  for (const char* field :
       {"uid", "resourceVersion", "creationTimestamp", "managedFields", "generation",
        "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences", "selfLink"}) {
    meta.erase(field);
  }
  if (ev.kind == "Pod") obj.erase("status");
  if (!obj.contains("apiVersion")) obj["apiVersion"] = "v1";
  if (!obj.contains("kind")) obj["kind"] = ev.kind;
  return obj;
}

Json Reference(const Event& ev) {
  Json meta = {{"name", ev.name}};
  if (!ev.namespace_.empty()) meta["namespace"] = ev.namespace_;
  return {
      {"apiVersion", ev.resource.value("apiVersion", "v1")}, {"kind", ev.kind}, {"metadata", meta}};
}

bool Finished(const Event& ev) {
  const std::string phase = ev.resource.value("status", Json::object()).value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

Result<Scenario> ScenarioFromRecording(const std::string& path) {
  auto reader = sim::RecordingReader::Open(path);
  if (!reader.ok()) return reader.error();
  Scenario s;
  s.name = std::filesystem::path(path).stem().string();
  std::optional<TimePoint> first;
  std::set<std::string> live;  // kind/namespace/name created and not yet deleted
  for (;;) {
    auto next = (*reader)->Next();
    if (!next.ok()) return next.error();
    if (!*next) break;
    const Event& ev = **next;
    if (!first) first = ev.time;
    const std::string key = fmt::format("{}/{}/{}", ev.kind, ev.namespace_, ev.name);
    Step step;
    step.where = fmt::format("{}:{}", std::filesystem::path(path).filename().string(), ev.line);
    step.at = std::max(Duration::zero(), ev.time - *first);
    const bool gone = ev.type == Event::Type::kDelete || (ev.kind == "Pod" && Finished(ev));
    if (gone) {
      if ((ev.kind != "Pod" && ev.kind != "Node") || !live.erase(key)) continue;
      step.kind = StepKind::kDelete;
      step.objects.push_back(Reference(ev));
    } else if (!live.count(key)) {
      // The first sight of an object: an Add, or an Update of one the recording began with.
      // Namespaces are not recorded: each is created before its first object.
      const std::string ns_key = "Namespace//" + ev.namespace_;
      if (!ev.namespace_.empty() && ev.namespace_ != "default" && live.insert(ns_key).second) {
        Step ns = step;
        ns.kind = StepKind::kCreate;
        ns.objects.push_back(
            {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ev.namespace_}}}});
        s.steps.push_back(std::move(ns));
      }
      step.kind = StepKind::kCreate;
      step.objects.push_back(AsCreated(ev));
      live.insert(key);
    } else {
      continue;  // updates are the kubelets', the scheduler's and the controllers' here
    }
    s.steps.push_back(std::move(step));
  }
  Step end;
  end.kind = StepKind::kCheckpoint;
  end.where = "end";
  end.name = "end";
  s.steps.push_back(std::move(end));
  return s;
}

}  // namespace berth::scenario
