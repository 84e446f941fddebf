#include "api/declared_features.h"

#include <algorithm>
#include <memory>
#include <optional>

namespace berth::declared_features {
namespace {

using Json = nlohmann::json;

const Json* Find(const Json* obj, const char* key) {
  if (obj == nullptr || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

const Json* SpecOf(const Pod& pod) { return pod.raw ? Find(pod.raw.get(), "spec") : nullptr; }

// A container of `list` with a restartPolicyRules rule whose action is RestartAllContainers.
bool AnyRestartsAll(const Json* list) {
  if (list == nullptr || !list->is_array()) return false;
  for (const Json& c : *list) {
    const Json* rules = Find(&c, "restartPolicyRules");
    if (rules == nullptr || !rules->is_array()) continue;
    for (const Json& rule : *rules) {
      const Json* action = Find(&rule, "action");
      if (action != nullptr && action->is_string() && *action == "RestartAllContainers")
        return true;
    }
  }
  return false;
}

// RestartAllContainersOnContainerExits: a container or init container (restartPolicyRules
// are immutable) restarts the whole pod on some exit.
bool NeedsRestartAllContainers(const Pod& pod) {
  const Json* spec = SpecOf(pod);
  return AnyRestartsAll(Find(spec, "containers")) || AnyRestartsAll(Find(spec, "initContainers"));
}

// UserNamespacesHostNetworkSupport: host networking inside a user namespace (hostUsers false).
bool NeedsUserNamespacesHostNetwork(const Pod& pod) {
  if (!pod.spec.host_network) return false;
  const Json* host_users = Find(SpecOf(pod), "hostUsers");
  return host_users != nullptr && host_users->is_boolean() && !host_users->get<bool>();
}

// Sorted by name. The two resize features are declared by a default kubelet (the CPU manager's
// default policy is "none"; InPlacePodLevelResourcesVerticalScaling is on by default) and
// needed only by resizes; the other two need alpha kubelet gates that are off by default.
constexpr Feature kFeatures[] = {
    {"GuaranteedQoSPodCPUResize", "InPlacePodVerticalScalingExclusiveCPUs", true, nullptr},
    {"InPlacePodLevelResourcesVerticalScaling", "InPlacePodLevelResourcesVerticalScaling", true,
     nullptr},
    {"RestartAllContainersOnContainerExits", "RestartAllContainersOnContainerExits", false,
     &NeedsRestartAllContainers},
    {"UserNamespacesHostNetworkSupport", "UserNamespacesHostNetworkSupport", false,
     &NeedsUserNamespacesHostNetwork},
};

bool Declares(const Json& declared, std::string_view feature) {
  for (const Json& f : declared) {
    if (f.is_string() && f.get_ref<const std::string&>() == feature) return true;
  }
  return false;
}

}  // namespace

std::span<const Feature> AllFeatures() { return kFeatures; }

bool RelevantAt(const Feature& feature, const KubeVersion& version) {
  if (feature.max_version.empty()) return true;
  const std::optional<KubeVersion> bound = ParseKubeVersion(feature.max_version);
  return !bound || CompareKubeVersions(version, *bound) <= 0;
}

std::vector<std::string> InferForScheduling(const Pod& pod) {
  // Every inference reads either host networking or the document: the rest skip quickly.
  if (!pod.raw && !pod.spec.host_network) return {};
  static const KubeVersion kScheduler = *ParseKubeVersion(kSchedulerVersion);
  return InferForScheduling(pod, kFeatures, kScheduler);
}

std::vector<std::string> InferForScheduling(const Pod& pod, std::span<const Feature> registry,
                                            const KubeVersion& scheduler_version) {
  std::vector<std::string> out;
  for (const Feature& f : registry) {
    if (f.infer_for_scheduling == nullptr || !RelevantAt(f, scheduler_version)) continue;
    if (f.infer_for_scheduling(pod)) out.emplace_back(f.name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

const Json* NodeDeclaredFeaturesOf(const Node& node) {
  const Json* list = node.raw ? Find(Find(node.raw.get(), "status"), "declaredFeatures") : nullptr;
  return list != nullptr && list->is_array() ? list : nullptr;
}

bool NodeDeclaresAll(const Node& node, std::span<const std::string> required) {
  const Json* declared = NodeDeclaredFeaturesOf(node);
  if (declared == nullptr) return required.empty();
  return std::all_of(required.begin(), required.end(),
                     [&](const std::string& f) { return Declares(*declared, f); });
}

bool SameDeclaredFeatures(const Node& a, const Node& b) {
  static const Json kNone = Json::array();
  const Json* da = NodeDeclaredFeaturesOf(a);
  const Json* db = NodeDeclaredFeaturesOf(b);
  return (da ? *da : kNone) == (db ? *db : kNone);
}

RawObject NodeDocumentToKeep(const Json& node_doc) {
  const Json* list = Find(Find(&node_doc, "status"), "declaredFeatures");
  if (list == nullptr || !list->is_array() || list->empty()) return nullptr;
  return std::make_shared<const Json>(Json{{"status", {{"declaredFeatures", *list}}}});
}

bool PodKeepsDocument(const Json& pod_doc) {
  const Json* spec = Find(&pod_doc, "spec");
  if (spec == nullptr) return false;
  if (const Json* hu = Find(spec, "hostUsers");
      hu != nullptr && hu->is_boolean() && !hu->get<bool>())
    return true;
  for (const char* list : {"containers", "initContainers"}) {
    const Json* cs = Find(spec, list);
    if (cs == nullptr || !cs->is_array()) continue;
    for (const Json& c : *cs) {
      if (Find(&c, "restartPolicyRules") != nullptr) return true;
    }
  }
  return false;
}

std::vector<std::string> KubeletDefaults(std::string_view kubelet_version,
                                         std::span<const Feature> registry) {
  std::vector<std::string> out;
  for (const Feature& f : registry) {
    if (f.declared_by_default) out.emplace_back(f.name);
  }
  std::sort(out.begin(), out.end());
  return WithoutPastBound(std::move(out), kubelet_version, registry);
}

std::vector<std::string> WithoutPastBound(std::vector<std::string> declared,
                                          std::string_view kubelet_version,
                                          std::span<const Feature> registry) {
  const std::optional<KubeVersion> version = ParseKubeVersion(kubelet_version);
  if (!version) return declared;
  std::erase_if(declared, [&](const std::string& name) {
    auto f = std::find_if(registry.begin(), registry.end(),
                          [&](const Feature& g) { return g.name == name; });
    return f != registry.end() && !RelevantAt(*f, *version);
  });
  return declared;
}

}  // namespace berth::declared_features
