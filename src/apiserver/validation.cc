#include "apiserver/validation.h"

#include <fmt/format.h>

#include <set>
#include <string>
#include <string_view>

#include "api/tolerations.h"
#include "api/validation.h"
#include "apiserver/selectors.h"
#include "berth/api/quantity.h"
#include "berth/api/selectors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// 422 for a label, taint or toleration key that is not a qualified name.
VoidResult CheckQualifiedName(const ResourceInfo& r, const Json& obj, const std::string& field,
                              std::string_view key) {
  std::string problem = validation::QualifiedNameProblem(key);
  if (problem.empty()) return {};
  return InvalidField(r, obj, field, FieldErrorType::kInvalid,
                      fmt::format("\"{}\": {}", key, problem));
}

VoidResult CheckLabels(const ResourceInfo& r, const Json& obj, const Json* labels,
                       const std::string& field) {
  if (!labels || !labels->is_object()) return {};
  for (auto it = labels->begin(); it != labels->end(); ++it) {
    if (auto ok = CheckQualifiedName(r, obj, field, it.key()); !ok.ok()) return ok;
    const std::string value = it->is_string() ? it->get<std::string>() : it->dump();
    if (std::string problem = validation::LabelValueProblem(value); !problem.empty()) {
      return InvalidField(r, obj, field, FieldErrorType::kInvalid,
                          fmt::format("\"{}\": {}", value, problem));
    }
  }
  return {};
}

VoidResult CheckRequestsWithinLimits(const ResourceInfo& r, const Json& obj, const Json& c,
                                     const std::string& base) {
  const Json* limits = FieldAt(c, "resources.limits");
  const Json* requests = FieldAt(c, "resources.requests");
  if (!limits || !requests || !limits->is_object() || !requests->is_object()) return {};
  for (auto it = requests->begin(); it != requests->end(); ++it) {
    auto l = limits->find(it.key());
    if (l == limits->end() || !it->is_string() || !l->is_string()) continue;
    auto req = Quantity::Parse(it->get<std::string>());
    auto lim = Quantity::Parse(l->get<std::string>());
    if (req.ok() && lim.ok() && *req > *lim) {
      return InvalidField(r, obj, fmt::format("{}.resources.requests", base),
                          FieldErrorType::kInvalid,
                          fmt::format("\"{}\": must be less than or equal to {} limit "
                                      "of {}",
                                      it->get<std::string>(), it.key(), l->get<std::string>()));
    }
  }
  return {};
}

VoidResult CheckTolerations(const ResourceInfo& r, const Json& obj, const Json* tolerations,
                            const std::string& field, bool comparison_operators) {
  if (!tolerations || !tolerations->is_array()) return {};
  for (size_t i = 0; i < tolerations->size(); ++i) {
    const Json& t = (*tolerations)[i];
    if (!t.is_object()) continue;
    const std::string base = fmt::format("{}[{}]", field, i);
    const std::string op = t.value("operator", ""), key = t.value("key", "");
    const bool comparison = op == "Lt" || op == "Gt";
    if (op != "" && op != "Equal" && op != "Exists" && !(comparison && comparison_operators)) {
      return InvalidField(r, obj, base + ".operator", FieldErrorType::kNotSupported,
                          fmt::format("\"{}\": supported values: \"Equal\", "
                                      "\"Exists\"{}",
                                      op, comparison_operators ? ", \"Gt\", \"Lt\"" : ""));
    }
    if (comparison && !ParseTaintInteger(t.value("value", ""))) {
      return InvalidField(r, obj, base + ".value", FieldErrorType::kInvalid,
                          fmt::format("\"{}\": must be a valid decimal integer in canonical form",
                                      t.value("value", "")));
    }
    if (op == "Exists" && !t.value("value", "").empty()) {
      return InvalidField(r, obj, base + ".operator", FieldErrorType::kInvalid,
                          "\"Exists\": value must be empty when `operator` is 'Exists'");
    }
    if (key.empty() && op != "Exists") {
      return InvalidField(r, obj, base + ".operator", FieldErrorType::kInvalid,
                          fmt::format("\"{}\": operator must be Exists when `key` is "
                                      "empty, which means \"match all values and all keys\"",
                                      op));
    }
    if (!key.empty()) {
      if (auto ok = CheckQualifiedName(r, obj, base + ".key", key); !ok.ok()) return ok;
    }
    const std::string effect = t.value("effect", "");
    if (effect != "" && effect != "NoSchedule" && effect != "PreferNoSchedule" &&
        effect != "NoExecute") {
      return InvalidField(r, obj, base + ".effect", FieldErrorType::kNotSupported,
                          fmt::format("\"{}\": supported values: \"NoExecute\", "
                                      "\"NoSchedule\", \"PreferNoSchedule\"",
                                      effect));
    }
  }
  return {};
}

VoidResult CheckNodeSelectorTerm(const ResourceInfo& r, const Json& obj, const Json& term,
                                 const std::string& path) {
  for (const char* list : {"matchExpressions", "matchFields"}) {
    const Json* reqs = FieldAt(term, list);
    if (!reqs || !reqs->is_array()) continue;
    for (size_t j = 0; j < reqs->size(); ++j) {
      const std::string op = (*reqs)[j].value("operator", "");
      if (op != "In" && op != "NotIn" && op != "Exists" && op != "DoesNotExist" && op != "Gt" &&
          op != "Lt") {
        return InvalidField(r, obj, fmt::format("{}.{}[{}].operator", path, list, j),
                            FieldErrorType::kNotSupported,
                            fmt::format("\"{}\": supported values: "
                                        "\"DoesNotExist\", \"Exists\", \"Gt\", \"In\", \"Lt\", "
                                        "\"NotIn\"",
                                        op));
      }
    }
  }
  return {};
}

// A container's ports, as kube-apiserver's validateContainerPorts checks them: the port
// numbers a scheduler's NodePorts filter and the kubelet rely on.
VoidResult CheckContainerPorts(const ResourceInfo& r, const Json& obj, const Json& c,
                               const std::string& base) {
  const Json* ports = FieldAt(c, "ports");
  if (!ports || !ports->is_array()) return {};
  auto in_range = [](const Json& v) {
    return v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= 65535;
  };
  for (size_t i = 0; i < ports->size(); ++i) {
    const Json& p = (*ports)[i];
    if (!p.is_object()) continue;
    const std::string at = fmt::format("{}.ports[{}]", base, i);
    const Json* container_port = FieldAt(p, "containerPort");
    if (!container_port || container_port->is_null() || *container_port == 0) {
      return InvalidField(r, obj, at + ".containerPort", FieldErrorType::kRequired);
    }
    if (!in_range(*container_port)) {
      return InvalidField(
          r, obj, at + ".containerPort", FieldErrorType::kInvalid,
          fmt::format("{}: must be between 1 and 65535, inclusive", container_port->dump()));
    }
    const Json* host_port = FieldAt(p, "hostPort");
    if (host_port && !host_port->is_null() && *host_port != 0 && !in_range(*host_port)) {
      return InvalidField(
          r, obj, at + ".hostPort", FieldErrorType::kInvalid,
          fmt::format("{}: must be between 1 and 65535, inclusive", host_port->dump()));
    }
    const std::string protocol = p.value("protocol", "");
    if (!protocol.empty() && protocol != "TCP" && protocol != "UDP" && protocol != "SCTP") {
      return InvalidField(r, obj, at + ".protocol", FieldErrorType::kNotSupported,
                          fmt::format("\"{}\": supported values: \"SCTP\", "
                                      "\"TCP\", \"UDP\"",
                                      protocol));
    }
  }
  return {};
}

VoidResult CheckPodSpec(const ResourceInfo& r, const Json& obj, const Json& spec,
                        const std::string& field, const ValidationOptions& options) {
  std::set<std::string> names;
  for (const char* list : {"initContainers", "containers"}) {
    const Json* cs = FieldAt(spec, list);
    if (!cs || !cs->is_array()) continue;
    for (size_t i = 0; i < cs->size(); ++i) {
      const Json& c = (*cs)[i];
      const std::string base = fmt::format("{}.{}[{}]", field, list, i);
      const std::string name = c.is_object() ? c.value("name", "") : "";
      if (!name.empty() && !names.insert(name).second) {
        return InvalidField(r, obj, base + ".name", FieldErrorType::kDuplicate,
                            fmt::format("\"{}\"", name));
      }
      if (!c.is_object() || c.value("image", "").empty()) {
        // A pod template may leave the image to be filled in later; a pod may not.
        if (r.group.empty() && r.plural == "pods") {
          return InvalidField(r, obj, base + ".image", FieldErrorType::kRequired);
        }
      }
      if (auto ok = CheckRequestsWithinLimits(r, obj, c, base); !ok.ok()) return ok;
      if (auto ok = CheckContainerPorts(r, obj, c, base); !ok.ok()) return ok;
    }
  }
  if (auto ok = CheckTolerations(r, obj, FieldAt(spec, "tolerations"), field + ".tolerations",
                                 options.toleration_comparison_operators);
      !ok.ok()) {
    return ok;
  }
  const std::string affinity = field + ".affinity.nodeAffinity";
  if (const Json* terms =
          FieldAt(spec,
                  "affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                  "nodeSelectorTerms");
      terms && terms->is_array()) {
    for (size_t i = 0; i < terms->size(); ++i) {
      auto ok = CheckNodeSelectorTerm(
          r, obj, (*terms)[i],
          fmt::format("{}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{}]",
                      affinity, i));
      if (!ok.ok()) return ok;
    }
  }
  if (const Json* preferred =
          FieldAt(spec, "affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution");
      preferred && preferred->is_array()) {
    for (size_t i = 0; i < preferred->size(); ++i) {
      const Json* pref = FieldAt((*preferred)[i], "preference");
      if (!pref) continue;
      auto ok = CheckNodeSelectorTerm(
          r, obj, *pref,
          fmt::format("{}.preferredDuringSchedulingIgnoredDuringExecution[{}].preference", affinity,
                      i));
      if (!ok.ok()) return ok;
    }
  }
  return {};
}

VoidResult CheckTaints(const ResourceInfo& r, const Json& obj) {
  const Json* taints = FieldAt(obj, "spec.taints");
  if (!taints || !taints->is_array()) return {};
  for (size_t i = 0; i < taints->size(); ++i) {
    const Json& t = (*taints)[i];
    const std::string base = fmt::format("spec.taints[{}]", i);
    const std::string key = t.is_object() ? t.value("key", "") : "";
    if (key.empty()) return InvalidField(r, obj, base + ".key", FieldErrorType::kRequired);
    if (auto ok = CheckQualifiedName(r, obj, base + ".key", key); !ok.ok()) return ok;
    const std::string effect = t.value("effect", "");
    if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute") {
      if (effect.empty()) return InvalidField(r, obj, base + ".effect", FieldErrorType::kRequired);
      return InvalidField(r, obj, base + ".effect", FieldErrorType::kNotSupported,
                          fmt::format("\"{}\": supported values: \"NoExecute\", \"NoSchedule\", "
                                      "\"PreferNoSchedule\"",
                                      effect));
    }
  }
  return {};
}

// status.declaredFeatures (kube-apiserver's validateNodeDeclaredFeatures): UpperCamelCase
// names with '/'-separated segments, at most 253 characters, sorted, without duplicates.
bool ValidDeclaredFeatureName(std::string_view name) {
  auto alnum = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  };
  auto letter = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (name.empty() || name.front() < 'A' || name.front() > 'Z') return false;
  bool segment_start = false;
  for (char c : name.substr(1)) {
    if (c == '/') {
      if (segment_start) return false;
      segment_start = true;
    } else if (segment_start ? !letter(c) : !alnum(c)) {
      return false;
    } else {
      segment_start = false;
    }
  }
  return !segment_start;
}

VoidResult CheckDeclaredFeatures(const ResourceInfo& r, const Json& obj) {
  const Json* features = FieldAt(obj, "status.declaredFeatures");
  if (!features || !features->is_array()) return {};
  for (size_t i = 0; i < features->size(); ++i) {
    const Json& f = (*features)[i];
    const std::string name = f.is_string() ? f.get<std::string>() : f.dump();
    const std::string field = fmt::format("status.declaredFeatures[{}]", i);
    if (name.size() > 253) {
      return InvalidField(r, obj, field, FieldErrorType::kInvalid,
                          fmt::format("\"{}\": invalid feature name \"{}\": must be "
                                      "no more than 253 characters",
                                      name, name));
    }
    if (!ValidDeclaredFeatureName(name)) {
      return InvalidField(
          r, obj, field, FieldErrorType::kInvalid,
          fmt::format("\"{}\": invalid feature name \"{}\": must start with an "
                      "UpperCamelCase segment, with subsequent segments separated by '/' (e.g., "
                      "MyFeature or MyFeature/mySubFeature), and contain only alphanumeric "
                      "characters and slashes",
                      name, name));
    }
    if (i + 1 < features->size() && (*features)[i + 1].is_string()) {
      const std::string next = (*features)[i + 1].get<std::string>();
      const std::string next_field = fmt::format("status.declaredFeatures[{}]", i + 1);
      if (next == name)
        return InvalidField(r, obj, next_field, FieldErrorType::kDuplicate,
                            fmt::format("\"{}\"", next));
      if (next < name) {
        return InvalidField(r, obj, next_field, FieldErrorType::kInvalid,
                            fmt::format("\"{}\": list must be sorted alphabetically", next));
      }
    }
  }
  return {};
}

// A workload's selector must be there and select its template's labels.
VoidResult CheckWorkloadSelector(const ResourceInfo& r, const Json& obj) {
  const Json* selector = FieldAt(obj, "spec.selector");
  const std::string text = selector ? FormatSelector(*selector) : "";
  if (text.empty()) return InvalidField(r, obj, "spec.selector", FieldErrorType::kRequired);
  const Json* labels = FieldAt(obj, "spec.template.metadata.labels");
  auto filter = ParseLabelSelector(text);
  Json probe = {{"metadata", {{"labels", labels ? *labels : Json::object()}}}};
  if (filter.ok() && *filter && !(*filter)(probe)) {
    return InvalidField(r, obj, "spec.template.metadata.labels", FieldErrorType::kInvalid,
                        fmt::format("{}: `selector` does not match template `labels`",
                                    labels ? labels->dump() : "{}"));
  }
  return {};
}

}  // namespace

ApiError InvalidField(const ResourceInfo& r, const Json& obj, const std::string& field,
                      FieldErrorType type, const std::string& detail) {
  return InvalidObject(r.kind, FieldValue(obj, "metadata.name"), {{type, field, detail}});
}

ValidationOptions ValidationFor(const ValidationOptions& gates, const Json* current) {
  ValidationOptions out = gates;
  if (out.toleration_comparison_operators || current == nullptr) return out;
  // Tolerations of the stored pod (or pod template) with Lt or Gt keep them allowed.
  for (const char* path : {"spec.tolerations", "spec.template.spec.tolerations"}) {
    const Json* tolerations = FieldAt(*current, path);
    if (!tolerations || !tolerations->is_array()) continue;
    for (const Json& t : *tolerations) {
      const std::string op = t.is_object() ? t.value("operator", "") : "";
      if (op == "Lt" || op == "Gt") out.toleration_comparison_operators = true;
    }
  }
  return out;
}

VoidResult ValidateObject(const ResourceInfo& r, const Json& obj,
                          const ValidationOptions& options) {
  if (!obj.is_object()) return {};
  if (auto ok = CheckLabels(r, obj, FieldAt(obj, "metadata.labels"), "metadata.labels"); !ok.ok())
    return ok;
  if (r.group.empty() && r.plural == "pods") {
    if (const Json* spec = FieldAt(obj, "spec"))
      return CheckPodSpec(r, obj, *spec, "spec", options);
    return {};
  }
  if (r.group.empty() && r.plural == "nodes") {
    if (auto ok = CheckTaints(r, obj); !ok.ok()) return ok;
    return CheckDeclaredFeatures(r, obj);
  }
  const bool workload = (r.group == "apps" && r.plural != "controllerrevisions") ||
                        (r.group.empty() && r.plural == "replicationcontrollers") ||
                        (r.group == "batch" && r.plural == "jobs");
  if (workload) {
    if (auto ok = CheckLabels(r, obj, FieldAt(obj, "spec.template.metadata.labels"),
                              "spec.template.metadata.labels");
        !ok.ok()) {
      return ok;
    }
    if (const Json* spec = FieldAt(obj, "spec.template.spec")) {
      if (auto ok = CheckPodSpec(r, obj, *spec, "spec.template.spec", options); !ok.ok()) return ok;
    }
    // A Job's selector is generated by its controller when absent.
    if (r.group != "batch") return CheckWorkloadSelector(r, obj);
  }
  if (r.group == "scheduling.k8s.io" && r.plural == "priorityclasses") {
    const std::string name = FieldValue(obj, "metadata.name");
    if (name.rfind("system-", 0) == 0 && name != "system-node-critical" &&
        name != "system-cluster-critical") {
      return InvalidField(r, obj, "metadata.name", FieldErrorType::kForbidden,
                          "priority class names with 'system-' prefix are reserved");
    }
  }
  return {};
}

}  // namespace berth::apiserver
