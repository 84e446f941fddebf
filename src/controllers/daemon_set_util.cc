#include "controllers/daemon_set_util.h"

#include "api/tolerations.h"
#include "controllers/controller_revision.h"

namespace berth::controllers {

namespace {

bool SameToleration(const Json& a, const Json& b) {
  for (const char* f : {"key", "operator", "value", "effect"}) {
    if (StringAt(a, f) != StringAt(b, f)) return false;
  }
  return true;
}

void AddOrUpdateToleration(Json& tolerations, Json t) {
  for (Json& existing : tolerations) {
    if (SameToleration(existing, t)) {
      existing = std::move(t);
      return;
    }
  }
  tolerations.push_back(std::move(t));
}

bool NoExecuteOnly(const Taint& t) { return t.effect == "NoExecute"; }

}  // namespace

void AddDaemonPodTolerations(Json& pod_spec) {
  Json& tolerations = pod_spec["tolerations"];
  if (!tolerations.is_array()) tolerations = Json::array();
  auto exists = [](const char* key, const char* effect) {
    return Json{{"key", key}, {"operator", "Exists"}, {"effect", effect}};
  };
  AddOrUpdateToleration(tolerations, exists("node.kubernetes.io/not-ready", "NoExecute"));
  AddOrUpdateToleration(tolerations, exists("node.kubernetes.io/unreachable", "NoExecute"));
  AddOrUpdateToleration(tolerations, exists("node.kubernetes.io/disk-pressure", "NoSchedule"));
  AddOrUpdateToleration(tolerations, exists("node.kubernetes.io/memory-pressure", "NoSchedule"));
  AddOrUpdateToleration(tolerations, exists("node.kubernetes.io/pid-pressure", "NoSchedule"));
  AddOrUpdateToleration(tolerations, exists("node.kubernetes.io/unschedulable", "NoSchedule"));
  const Json& host_network = Member(pod_spec, "hostNetwork");
  if (host_network.is_boolean() && host_network.get<bool>()) {
    AddOrUpdateToleration(tolerations,
                          exists("node.kubernetes.io/network-unavailable", "NoSchedule"));
  }
}

void ReplaceNodeNameAffinity(Json& pod_spec, const std::string& node_name) {
  Json term = {{"matchFields", Json::array({{{"key", "metadata.name"},
                                             {"operator", "In"},
                                             {"values", Json::array({node_name})}}})}};
  Json& affinity = pod_spec["affinity"];
  if (!affinity.is_object()) affinity = Json::object();
  Json& node_affinity = affinity["nodeAffinity"];
  if (!node_affinity.is_object()) node_affinity = Json::object();
  node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
      {"nodeSelectorTerms", Json::array({std::move(term)})}};
}

std::string TargetNodeName(const Json& pod) {
  const Json& spec = Member(pod, "spec");
  std::string node = StringAt(spec, "nodeName");
  if (!node.empty()) return node;
  const Json& terms = Member(Member(Member(Member(spec, "affinity"), "nodeAffinity"),
                                    "requiredDuringSchedulingIgnoredDuringExecution"),
                             "nodeSelectorTerms");
  if (!terms.is_array()) return "";
  for (const Json& term : terms) {
    const Json& fields = Member(term, "matchFields");
    if (!fields.is_array()) continue;
    for (const Json& req : fields) {
      const Json& values = Member(req, "values");
      if (StringAt(req, "key") == "metadata.name" && StringAt(req, "operator") == "In" &&
          values.is_array() && values.size() == 1 && values[0].is_string()) {
        return values[0].get<std::string>();
      }
    }
  }
  return "";
}

std::string TargetNodeName(const Pod& pod) {
  if (!pod.spec.node_name.empty()) return pod.spec.node_name;
  const auto& affinity = pod.spec.affinity;
  if (!affinity || !affinity->node_affinity || !affinity->node_affinity->required) return "";
  for (const auto& term : affinity->node_affinity->required->terms) {
    for (const NodeSelectorRequirement& req : term.match_fields) {
      if (req.key == "metadata.name" && req.op == "In" && req.values.size() == 1)
        return req.values[0];
    }
  }
  return "";
}

NodeFit NodeShouldRunDaemonPod(const Pod& pod, const Node& node, bool comparison_operators) {
  if (!pod.spec.node_name.empty() && pod.spec.node_name != node.metadata.name) return {};
  if (!PodMatchesNodeSelectorAndAffinityTerms(pod, node)) return {};
  const auto& taints = node.spec.taints;
  const auto& tolerations = pod.spec.tolerations;
  std::span<const Taint> taint_span(taints.data(), taints.size());
  std::span<const Toleration> toleration_span(tolerations.data(), tolerations.size());
  if (FindUntoleratedTaint(taint_span, toleration_span, &IsScheduleBlockingTaint,
                           comparison_operators)) {
    return {false, !FindUntoleratedTaint(taint_span, toleration_span, &NoExecuteOnly,
                                         comparison_operators)};
  }
  return {true, true};
}

Result<Pod> DaemonPodOf(const Json& daemon_set) {
  const Json& tmpl = Member(Member(daemon_set, "spec"), "template");
  Json spec = Member(tmpl, "spec");
  if (!spec.is_object()) spec = Json::object();
  AddDaemonPodTolerations(spec);
  Json meta = Member(tmpl, "metadata");
  if (!meta.is_object()) meta = Json::object();
  meta["name"] = NameOf(daemon_set);
  meta["namespace"] = NamespaceOf(daemon_set);
  Json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", meta}, {"spec", spec}};
  return DecodePod(pod, "daemonset " + KeyOf(daemon_set));
}

Json NewDaemonPod(const Json& daemon_set, const std::string& node_name, const std::string& hash) {
  const Json& tmpl = Member(Member(daemon_set, "spec"), "template");
  const Json& tmeta = Member(tmpl, "metadata");
  Json meta = Json::object();
  meta["generateName"] = NameOf(daemon_set) + "-";
  meta["namespace"] = NamespaceOf(daemon_set);
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const Json& v = Member(tmeta, field);
    if (!v.is_null()) meta[field] = v;
  }
  if (!meta["labels"].is_object()) meta["labels"] = Json::object();
  meta["labels"][std::string(kControllerRevisionHashLabel)] = hash;
  meta["ownerReferences"] = Json::array({NewControllerRef("apps/v1", "DaemonSet", daemon_set)});
  Json spec = Member(tmpl, "spec");
  if (!spec.is_object()) spec = Json::object();
  AddDaemonPodTolerations(spec);
  ReplaceNodeNameAffinity(spec, node_name);
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

}  // namespace berth::controllers
