#include "apiserver/pod_resize.h"

#include <fmt/format.h>

#include <map>
#include <string_view>
#include <vector>

#include "apiserver/field_errors.h"
#include "berth/api/quantity.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const Json& Member(const Json& obj, std::string_view name) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(name);
  return it == obj.end() ? kNull : *it;
}

bool IsRestartableInit(const Json& container) {
  return Member(container, "restartPolicy") == "Always";
}

// A resource list as quantities; entries that do not parse keep their text out of the way (the
// write's own validation names them).
std::map<std::string, Quantity> Quantities(const Json& list) {
  std::map<std::string, Quantity> out;
  if (!list.is_object()) return out;
  for (auto it = list.begin(); it != list.end(); ++it) {
    auto q = Quantity::Parse(it->is_string() ? it->get<std::string>() : it->dump());
    if (q.ok()) out.emplace(it.key(), *q);
  }
  return out;
}

bool SameQuantities(const Json& a, const Json& b) {
  return Quantities(a) == Quantities(b) &&
         (a.is_object() ? a.size() : 0) == (b.is_object() ? b.size() : 0);
}

bool IsQosResource(const std::string& name) { return name == "cpu" || name == "memory"; }

// validateContainerResize: requests and limits are never removed; a memory limit is only lowered
// (or added, which lowers it from unbounded) when the container restarts for it.
void CheckContainerResize(const Json& next_resources, const Json& old_resources,
                          const Json& resize_policy, const std::string& path,
                          FieldErrorList* errors) {
  auto removed = [](const Json& now, const Json& before) {
    if (!before.is_object()) return false;
    for (auto it = before.begin(); it != before.end(); ++it)
      if (!now.is_object() || !now.contains(it.key())) return true;
    return false;
  };
  const Json& new_requests = Member(next_resources, "requests");
  const Json& new_limits = Member(next_resources, "limits");
  if (removed(new_requests, Member(old_resources, "requests")))
    errors->push_back(
        {FieldErrorType::kForbidden, path + ".requests", "resource requests cannot be removed"});
  if (removed(new_limits, Member(old_resources, "limits")))
    errors->push_back(
        {FieldErrorType::kForbidden, path + ".limits", "resource limits cannot be removed"});

  std::string memory_policy;
  if (resize_policy.is_array()) {
    for (const Json& p : resize_policy) {
      if (Member(p, "resourceName") == "memory") {
        memory_policy = Member(p, "restartPolicy").is_string()
                            ? Member(p, "restartPolicy").get<std::string>()
                            : "";
        break;
      }
    }
  }
  if (!memory_policy.empty() && memory_policy != "NotRequired") return;
  const auto now = Quantities(new_limits);
  const auto before = Quantities(Member(old_resources, "limits"));
  auto n = now.find("memory");
  auto b = before.find("memory");
  if (n != now.end() && b != before.end()) {
    if (n->second < b->second)
      errors->push_back(
          {FieldErrorType::kForbidden, path + ".limits[memory]",
           "memory limits cannot be decreased unless resizePolicy is RestartContainer"});
  } else if (n != now.end()) {
    errors->push_back({FieldErrorType::kForbidden, path + ".limits[memory]",
                       "memory limits cannot be added unless resizePolicy is RestartContainer"});
  }
}

// Whether `next` differs from `old` in a resource other than cpu and memory.
bool NonQosResourceChanged(const Json& next, const Json& old) {
  for (const char* list : {"requests", "limits"}) {
    auto a = Quantities(Member(next, list));
    auto b = Quantities(Member(old, list));
    for (auto* m : {&a, &b}) {
      for (auto it = m->begin(); it != m->end();)
        it = IsQosResource(it->first) ? m->erase(it) : std::next(it);
    }
    if (a != b) return true;
  }
  // Entries other than requests and limits (claims) may not change either.
  Json x = next.is_object() ? next : Json::object();
  Json y = old.is_object() ? old : Json::object();
  for (Json* j : {&x, &y}) {
    j->erase("requests");
    j->erase("limits");
  }
  return x != y;
}

// kube-apiserver's GetPodQOS: the class recorded in the pod's status, else computed.
std::string RecordedQos(const Json& pod) {
  const Json& q = Member(Member(pod, "status"), "qosClass");
  if (q.is_string() && !q.get<std::string>().empty()) return q.get<std::string>();
  return ComputePodQos(Member(pod, "spec"));
}

// Upstream's isPodResizeRequestSupported: a pod whose first running container reports no
// `resources` runs on a node whose kubelet cannot resize.
bool NodeSupportsResize(const Json& pod) {
  const Json& statuses = Member(Member(pod, "status"), "containerStatuses");
  if (!statuses.is_array()) return true;
  for (const Json& c : statuses) {
    if (Member(Member(c, "state"), "running").is_object()) return c.contains("resources");
  }
  return true;
}

bool HasPodLevelResources(const Json& pod) {
  const Json& res = Member(Member(pod, "spec"), "resources");
  auto size = [](const Json& j) { return j.is_object() ? j.size() : 0; };
  return size(Member(res, "requests")) + size(Member(res, "limits")) > 0;
}

ApiError Invalid(const ResourceInfo& r, const Json& pod, FieldErrorList errors) {
  const Json& name = Member(Member(pod, "metadata"), "name");
  return InvalidObject(r.kind, name.is_string() ? name.get<std::string>() : "", std::move(errors));
}

}  // namespace

bool IsPodResize(const ResourceInfo& r, const std::string& subresource) {
  return r.group.empty() && r.plural == "pods" && subresource == "resize";
}

Json ApplyPodResize(const Json& current, const Json& next) {
  Json out = current;
  const Json& rv = Member(Member(next, "metadata"), "resourceVersion");
  if (!rv.is_null()) out["metadata"]["resourceVersion"] = rv;
  for (const char* list : {"containers", "initContainers"}) {
    Json& mine = out["spec"][list];
    const Json& theirs = Member(Member(next, "spec"), list);
    if (!mine.is_array() || !theirs.is_array()) {
      if (mine.is_null()) out["spec"].erase(list);
      continue;
    }
    for (const Json& c : theirs) {
      for (Json& m : mine) {
        if (Member(m, "name") != Member(c, "name")) continue;
        // Only sidecars (restartable init containers) resize among init containers.
        if (std::string_view(list) == "initContainers" && !IsRestartableInit(c)) break;
        for (const char* field : {"resources", "resizePolicy"}) {
          if (c.contains(field)) {
            m[field] = c[field];
          } else {
            m.erase(field);
          }
        }
        break;
      }
    }
  }
  return out;
}

VoidResult ValidatePodResize(const ResourceInfo& r, const Json& current, const Json& next) {
  if (HasPodLevelResources(current) || HasPodLevelResources(next))
    return Invalid(
        r, next,
        {{FieldErrorType::kForbidden, "", "pods with pod-level resources cannot be resized"}});
  if (Member(Member(current, "metadata"), "annotations").contains("kubernetes.io/config.mirror"))
    return Invalid(r, next, {{FieldErrorType::kForbidden, "", "static pods cannot be resized"}});
  if (Member(Member(Member(current, "spec"), "os"), "name") == "windows")
    return Invalid(r, next, {{FieldErrorType::kForbidden, "", "windows pods cannot be resized"}});

  FieldErrorList errors;
  const std::string old_qos = RecordedQos(current);
  if (old_qos != ComputePodQos(Member(next, "spec"))) {
    const Json& shown = Member(Member(next, "status"), "qosClass");
    errors.push_back({FieldErrorType::kInvalid, "spec",
                      fmt::format("\"{}\": Pod QOS Class may not change as a result of resizing",
                                  shown.is_string() ? shown.get<std::string>() : "")});
  }
  if (!NodeSupportsResize(current))
    errors.push_back(
        {FieldErrorType::kForbidden, "spec", "Pod running on node without support for resize"});

  const Json& old_spec = Member(current, "spec");
  const Json& new_spec = Member(next, "spec");
  struct List {
    const char* name;
    bool init;
  };
  for (List list : {List{"initContainers", true}, List{"containers", false}}) {
    const Json& olds = Member(old_spec, list.name);
    const Json& news = Member(new_spec, list.name);
    if (!olds.is_array()) continue;
    for (size_t i = 0; i < olds.size(); ++i) {
      if (list.init && !IsRestartableInit(olds[i])) continue;
      const Json& n = news.is_array() && i < news.size() ? news[i] : Json();
      CheckContainerResize(Member(n, "resources"), Member(olds[i], "resources"),
                           Member(n, "resizePolicy"),
                           fmt::format("spec.{}[{}].resources", list.name, i), &errors);
    }
  }
  for (List list : {List{"containers", false}, List{"initContainers", true}}) {
    const Json& olds = Member(old_spec, list.name);
    const Json& news = Member(new_spec, list.name);
    if (!olds.is_array()) continue;
    for (size_t i = 0; i < olds.size(); ++i) {
      const Json& n = news.is_array() && i < news.size() ? news[i] : Json();
      const bool changed =
          NonQosResourceChanged(Member(n, "resources"), Member(olds[i], "resources"));
      if (!list.init) {
        if (changed) {
          errors.push_back(
              {FieldErrorType::kForbidden, "spec", "only cpu and memory resources are mutable"});
        }
      } else if (IsRestartableInit(olds[i])) {
        if (changed)
          errors.push_back({FieldErrorType::kForbidden, "spec",
                            "only cpu and memory resources for sidecar containers are mutable"});
      } else if (!SameQuantities(Member(Member(n, "resources"), "requests"),
                                 Member(Member(olds[i], "resources"), "requests")) ||
                 !SameQuantities(Member(Member(n, "resources"), "limits"),
                                 Member(Member(olds[i], "resources"), "limits"))) {
        errors.push_back({FieldErrorType::kForbidden, "spec",
                          "resources for non-sidecar init containers are immutable"});
      }
    }
  }
  if (!errors.empty()) return Invalid(r, next, std::move(errors));
  return {};
}

std::string ComputePodQos(const Json& spec) {
  std::map<std::string, Quantity> requests, limits;
  bool guaranteed = true;
  auto add = [](std::map<std::string, Quantity>& sum, const Json& list,
                std::map<std::string, bool>* seen) {
    for (const auto& [name, q] : Quantities(list)) {
      if (!IsQosResource(name)) continue;
      if (q <= Quantity()) continue;
      if (seen) (*seen)[name] = true;
      sum[name] += q;
    }
  };
  const Json& pod_level = Member(spec, "resources");
  if (Member(pod_level, "requests").is_object() || Member(pod_level, "limits").is_object()) {
    std::map<std::string, bool> found;
    add(requests, Member(pod_level, "requests"), nullptr);
    add(limits, Member(pod_level, "limits"), &found);
    if (!found.count("cpu") || !found.count("memory")) guaranteed = false;
  } else {
    for (const char* list : {"initContainers", "containers"}) {
      const Json& containers = Member(spec, list);
      if (!containers.is_array()) continue;
      for (const Json& c : containers) {
        std::map<std::string, bool> found;
        add(requests, Member(Member(c, "resources"), "requests"), nullptr);
        add(limits, Member(Member(c, "resources"), "limits"), &found);
        if (!found.count("cpu") || !found.count("memory")) guaranteed = false;
      }
    }
  }
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed) {
    for (const auto& [name, q] : requests) {
      auto l = limits.find(name);
      if (l == limits.end() || l->second != q) guaranteed = false;
    }
  }
  return guaranteed && requests.size() == limits.size() ? "Guaranteed" : "Burstable";
}

}  // namespace berth::apiserver
