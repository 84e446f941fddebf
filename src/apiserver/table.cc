#include "apiserver/table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <string>
#include <utility>
#include <vector>

#include "api/codec.h"
#include "apiserver/crd_admission.h"
#include "apiserver/crd_table.h"
#include "apiserver/scale.h"
#include "apiserver/selectors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

struct Column {
  const char* name;
  const char* type;
  int priority;
  const char* format = "";
};

std::string Age(const Json& obj, int64_t now) {
  std::string ts = FieldValue(obj, "metadata.creationTimestamp");
  auto t = ParseTimestamp(ts);
  if (ts.empty() || !t.ok()) return "<unknown>";
  return HumanDuration(now - *t);
}

std::string OrNone(std::string s) { return s.empty() ? "<none>" : s; }

// kubectl's columns per kind (the printers of kube-apiserver's internal/printers), in order.
// Long by design: one row per kind, a lookup table written as code.
std::vector<Column> ColumnsFor(const ResourceInfo& r) {
  if (r.group.empty() && r.plural == "pods") {
    return {{"Name", "string", 0, "name"},
            {"Ready", "string", 0},
            {"Status", "string", 0},
            {"Restarts", "string", 0},
            {"Age", "string", 0},
            {"IP", "string", 1},
            {"Node", "string", 1},
            {"Nominated Node", "string", 1},
            {"Readiness Gates", "string", 1}};
  }
  if (r.group.empty() && r.plural == "nodes") {
    return {{"Name", "string", 0, "name"},   {"Status", "string", 0},
            {"Roles", "string", 0},          {"Age", "string", 0},
            {"Version", "string", 0},        {"Internal-IP", "string", 1},
            {"External-IP", "string", 1},    {"OS-Image", "string", 1},
            {"Kernel-Version", "string", 1}, {"Container-Runtime", "string", 1}};
  }
  if (r.group.empty() && r.plural == "namespaces") {
    return {{"Name", "string", 0, "name"}, {"Status", "string", 0}, {"Age", "string", 0}};
  }
  if (r.plural == "events") {
    return {{"Last Seen", "string", 0},
            {"Type", "string", 0},
            {"Reason", "string", 0},
            {"Object", "string", 0},
            {"Message", "string", 0}};
  }
  if (r.group == "apps" && r.plural == "deployments") {
    return {{"Name", "string", 0, "name"}, {"Ready", "string", 0},   {"Up-to-date", "integer", 0},
            {"Available", "integer", 0},   {"Age", "string", 0},     {"Containers", "string", 1},
            {"Images", "string", 1},       {"Selector", "string", 1}};
  }
  if ((r.group == "apps" && r.plural == "replicasets") ||
      (r.group.empty() && r.plural == "replicationcontrollers")) {
    return {{"Name", "string", 0, "name"}, {"Desired", "integer", 0}, {"Current", "integer", 0},
            {"Ready", "integer", 0},       {"Age", "string", 0},      {"Containers", "string", 1},
            {"Images", "string", 1},       {"Selector", "string", 1}};
  }
  if (r.group == "apps" && r.plural == "statefulsets") {
    return {{"Name", "string", 0, "name"},
            {"Ready", "string", 0},
            {"Age", "string", 0},
            {"Containers", "string", 1},
            {"Images", "string", 1}};
  }
  if (r.group == "apps" && r.plural == "daemonsets") {
    return {
        {"Name", "string", 0, "name"},  {"Desired", "integer", 0},    {"Current", "integer", 0},
        {"Ready", "integer", 0},        {"Up-to-date", "integer", 0}, {"Available", "integer", 0},
        {"Node Selector", "string", 0}, {"Age", "string", 0},         {"Containers", "string", 1},
        {"Images", "string", 1},        {"Selector", "string", 1}};
  }
  if (r.group.empty() && r.plural == "services") {
    return {{"Name", "string", 0, "name"}, {"Type", "string", 0},    {"Cluster-IP", "string", 0},
            {"External-IP", "string", 0},  {"Port(s)", "string", 0}, {"Age", "string", 0},
            {"Selector", "string", 1}};
  }
  if (r.group.empty() && r.plural == "configmaps") {
    return {{"Name", "string", 0, "name"}, {"Data", "integer", 0}, {"Age", "string", 0}};
  }
  if (r.group.empty() && r.plural == "secrets") {
    return {{"Name", "string", 0, "name"},
            {"Type", "string", 0},
            {"Data", "integer", 0},
            {"Age", "string", 0}};
  }
  if (r.group.empty() && r.plural == "serviceaccounts") {
    return {{"Name", "string", 0, "name"}, {"Secrets", "integer", 0}, {"Age", "string", 0}};
  }
  if (r.group == "scheduling.k8s.io" && r.plural == "priorityclasses") {
    return {{"Name", "string", 0, "name"},
            {"Value", "integer", 0},
            {"Global-Default", "boolean", 0},
            {"Age", "string", 0},
            {"PreemptionPolicy", "string", 0}};
  }
  if (r.group == "policy" && r.plural == "poddisruptionbudgets") {
    return {{"Name", "string", 0, "name"},
            {"Min Available", "string", 0},
            {"Max Unavailable", "string", 0},
            {"Allowed Disruptions", "integer", 0},
            {"Age", "string", 0}};
  }
  if (r.group.empty() && r.plural == "persistentvolumes") {
    return {{"Name", "string", 0, "name"}, {"Capacity", "string", 0},
            {"Access Modes", "string", 0}, {"Reclaim Policy", "string", 0},
            {"Status", "string", 0},       {"Claim", "string", 0},
            {"StorageClass", "string", 0}, {"VolumeAttributesClass", "string", 0},
            {"Reason", "string", 0},       {"Age", "string", 0},
            {"VolumeMode", "string", 1}};
  }
  if (r.group.empty() && r.plural == "persistentvolumeclaims") {
    return {{"Name", "string", 0, "name"},
            {"Status", "string", 0},
            {"Volume", "string", 0},
            {"Capacity", "string", 0},
            {"Access Modes", "string", 0},
            {"StorageClass", "string", 0},
            {"VolumeAttributesClass", "string", 0},
            {"Age", "string", 0},
            {"VolumeMode", "string", 1}};
  }
  if (r.group == "storage.k8s.io" && r.plural == "storageclasses") {
    return {{"Name", "string", 0, "name"},         {"Provisioner", "string", 0},
            {"ReclaimPolicy", "string", 0},        {"VolumeBindingMode", "string", 0},
            {"AllowVolumeExpansion", "string", 0}, {"Age", "string", 0}};
  }
  if (r.group == "coordination.k8s.io" && r.plural == "leases") {
    return {{"Name", "string", 0, "name"}, {"Holder", "string", 0}, {"Age", "string", 0}};
  }
  if (r.group == "storage.k8s.io" && r.plural == "volumeattachments") {
    return {{"Name", "string", 0, "name"}, {"Attacher", "string", 0, "name"}, {"PV", "string", 0},
            {"Node", "string", 0},         {"Attached", "boolean", 0},        {"Age", "string", 0}};
  }
  if (r.group == "batch" && r.plural == "jobs") {
    return {{"Name", "string", 0, "name"}, {"Status", "string", 0},  {"Completions", "string", 0},
            {"Duration", "string", 0},     {"Age", "string", 0},     {"Containers", "string", 1},
            {"Images", "string", 1},       {"Selector", "string", 1}};
  }
  if (r.group == "networking.k8s.io" && r.plural == "ingresses") {
    return {{"Name", "string", 0, "name"}, {"Class", "string", 0}, {"Hosts", "string", 0},
            {"Address", "string", 0},      {"Ports", "string", 0}, {"Age", "string", 0}};
  }
  if (r.group == "batch" && r.plural == "cronjobs") {
    return {{"Name", "string", 0, "name"}, {"Schedule", "string", 0},
            {"Timezone", "string", 0},     {"Suspend", "boolean", 0},
            {"Active", "integer", 0},      {"Last Schedule", "string", 0},
            {"Age", "string", 0}};
  }
  if (r.group == "resource.k8s.io" && r.plural == "resourceclaims") {
    return {{"Name", "string", 0, "name"}, {"State", "string", 0}, {"Age", "string", 0}};
  }
  if (r.group == "resource.k8s.io" && r.plural == "resourceslices") {
    return {{"Name", "string", 0, "name"},
            {"Node", "string", 0},
            {"Driver", "string", 0},
            {"Pool", "string", 0},
            {"Age", "string", 0}};
  }
  return {{"Name", "string", 0, "name"}, {"Age", "string", 0}};
}

int64_t IntField(const Json& obj, std::string_view path, int64_t absent = 0) {
  const Json* v = FieldAt(obj, path);
  return v != nullptr && v->is_number_integer() ? v->get<int64_t>() : absent;
}

// The pod template's containers' names and images, comma-separated (kubectl's -o wide).
std::pair<std::string, std::string> TemplateContainers(const Json& obj) {
  std::string names, images;
  if (const Json* list = FieldAt(obj, "spec.template.spec.containers");
      list != nullptr && list->is_array()) {
    for (const auto& c : *list) {
      if (!c.is_object()) continue;
      if (!names.empty()) names += ",";
      if (!images.empty()) images += ",";
      names += c.value("name", "");
      images += c.value("image", "");
    }
  }
  return {OrNone(names), OrNone(images)};
}

// A selector at `path` in label-selector syntax, "<none>" when absent or empty.
std::string SelectorAt(const Json& obj, std::string_view path) {
  const Json* selector = FieldAt(obj, path);
  return OrNone(selector != nullptr ? FormatSelector(*selector) : "");
}

// A workload's cells; status counts are 0 until something (not this server) reports them.
Json WorkloadCells(const ResourceInfo& r, const Json& obj, int64_t now) {
  const std::string name = FieldValue(obj, "metadata.name");
  const int64_t desired = IntField(obj, "spec.replicas", 1);
  const auto [containers, images] = TemplateContainers(obj);
  const std::string selected = SelectorAt(obj, "spec.selector");
  if (r.plural == "deployments") {
    return Json::array({name, fmt::format("{}/{}", IntField(obj, "status.readyReplicas"), desired),
                        IntField(obj, "status.updatedReplicas"),
                        IntField(obj, "status.availableReplicas"), Age(obj, now), containers,
                        images, selected});
  }
  if (r.plural == "statefulsets") {
    return Json::array({name, fmt::format("{}/{}", IntField(obj, "status.readyReplicas"), desired),
                        Age(obj, now), containers, images});
  }
  if (r.plural == "daemonsets") {
    const std::string node_selector = SelectorAt(obj, "spec.template.spec.nodeSelector");
    return Json::array(
        {name, IntField(obj, "status.desiredNumberScheduled"),
         IntField(obj, "status.currentNumberScheduled"), IntField(obj, "status.numberReady"),
         IntField(obj, "status.updatedNumberScheduled"), IntField(obj, "status.numberAvailable"),
         node_selector, Age(obj, now), containers, images, selected});
  }
  // replicasets, replicationcontrollers
  return Json::array({name, desired, IntField(obj, "status.replicas"),
                      IntField(obj, "status.readyReplicas"), Age(obj, now), containers, images,
                      selected});
}

Json ServiceCells(const Json& svc, int64_t now) {
  std::string type = FieldValue(svc, "spec.type");
  if (type.empty()) type = "ClusterIP";
  std::string external = "<none>";
  if (type == "ExternalName") external = OrNone(FieldValue(svc, "spec.externalName"));
  if (type == "LoadBalancer") external = "<pending>";
  std::string ports;
  if (const Json* list = FieldAt(svc, "spec.ports"); list != nullptr && list->is_array()) {
    for (const auto& p : *list) {
      if (!p.is_object()) continue;
      if (!ports.empty()) ports += ",";
      ports += std::to_string(IntField(p, "port"));
      if (int64_t node_port = IntField(p, "nodePort"); node_port > 0)
        ports += ":" + std::to_string(node_port);
      ports += "/" + p.value("protocol", std::string("TCP"));
    }
  }
  return Json::array({FieldValue(svc, "metadata.name"), type,
                      OrNone(FieldValue(svc, "spec.clusterIP")), external, OrNone(ports),
                      Age(svc, now), SelectorAt(svc, "spec.selector")});
}

Json PodCells(const Json& pod, int64_t now) {
  int total = 0, ready = 0, restarts = 0;
  if (auto c = pod.find("spec"); c != pod.end() && c->contains("containers")) {
    total = static_cast<int>((*c)["containers"].size());
  }
  std::string reason = FieldValue(pod, "status.phase");
  if (auto st = pod.find("status"); st != pod.end() && st->contains("containerStatuses")) {
    for (const auto& cs : (*st)["containerStatuses"]) {
      if (cs.value("ready", false)) ++ready;
      restarts += cs.value("restartCount", 0);
      if (cs.contains("state") && cs["state"].contains("waiting")) {
        reason = cs["state"]["waiting"].value("reason", reason);
      }
    }
  }
  if (!FieldValue(pod, "status.reason").empty()) reason = FieldValue(pod, "status.reason");
  if (pod.contains("metadata") && pod["metadata"].contains("deletionTimestamp")) {
    reason = "Terminating";
  }
  if (reason.empty()) reason = "Pending";
  return Json::array({FieldValue(pod, "metadata.name"), fmt::format("{}/{}", ready, total), reason,
                      std::to_string(restarts), Age(pod, now),
                      OrNone(FieldValue(pod, "status.podIP")),
                      OrNone(FieldValue(pod, "spec.nodeName")),
                      OrNone(FieldValue(pod, "status.nominatedNodeName")), "<none>"});
}

Json NodeCells(const Json& node, int64_t now) {
  std::string status = "Unknown";
  if (auto st = node.find("status"); st != node.end() && st->contains("conditions")) {
    for (const auto& c : (*st)["conditions"]) {
      if (c.value("type", "") == "Ready") {
        status = c.value("status", "") == "True" ? "Ready" : "NotReady";
      }
    }
  }
  if (FieldValue(node, "spec.unschedulable") == "true") status += ",SchedulingDisabled";
  std::string roles;
  if (auto m = node.find("metadata"); m != node.end() && m->contains("labels")) {
    for (auto it = (*m)["labels"].begin(); it != (*m)["labels"].end(); ++it) {
      constexpr std::string_view kPrefix = "node-role.kubernetes.io/";
      if (it.key().rfind(kPrefix, 0) == 0) {
        if (!roles.empty()) roles += ",";
        roles += it.key().substr(kPrefix.size());
      }
    }
  }
  std::string internal, external;
  if (auto st = node.find("status"); st != node.end() && st->contains("addresses")) {
    for (const auto& a : (*st)["addresses"]) {
      if (a.value("type", "") == "InternalIP" && internal.empty())
        internal = a.value("address", "");
      if (a.value("type", "") == "ExternalIP" && external.empty())
        external = a.value("address", "");
    }
  }
  return Json::array({FieldValue(node, "metadata.name"), status, OrNone(roles), Age(node, now),
                      FieldValue(node, "status.nodeInfo.kubeletVersion"), OrNone(internal),
                      OrNone(external), OrNone(FieldValue(node, "status.nodeInfo.osImage")),
                      OrNone(FieldValue(node, "status.nodeInfo.kernelVersion")),
                      OrNone(FieldValue(node, "status.nodeInfo.containerRuntimeVersion"))});
}

Json EventCells(const Json& ev, int64_t now) {
  std::string last = FieldValue(ev, "lastTimestamp");
  if (last.empty()) last = FieldValue(ev, "eventTime");
  if (last.empty()) last = FieldValue(ev, "metadata.creationTimestamp");
  auto t = ParseTimestamp(last.substr(0, 19) + (last.size() > 19 ? "Z" : ""));
  std::string object = FieldValue(ev, "involvedObject.kind");
  std::string name = FieldValue(ev, "involvedObject.name");
  if (object.empty()) {
    object = FieldValue(ev, "regarding.kind");
    name = FieldValue(ev, "regarding.name");
  }
  std::string message = FieldValue(ev, "message");
  if (message.empty()) message = FieldValue(ev, "note");
  std::string lower = object;
  for (auto& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return Json::array({t.ok() ? HumanDuration(now - *t) : "<unknown>", FieldValue(ev, "type"),
                      FieldValue(ev, "reason"), lower + "/" + name, message});
}

size_t MemberCount(const Json& obj, std::string_view path) {
  const Json* v = FieldAt(obj, path);
  return v != nullptr && (v->is_object() || v->is_array()) ? v->size() : 0;
}

// Access modes as kubectl abbreviates them ("RWO,ROX").
std::string AccessModes(const Json& obj, std::string_view path) {
  const Json* modes = FieldAt(obj, path);
  std::string out;
  if (modes == nullptr || !modes->is_array()) return out;
  for (const Json& m : *modes) {
    if (!m.is_string()) continue;
    const std::string& mode = m.get_ref<const std::string&>();
    const char* abbr = mode == "ReadWriteOnce"      ? "RWO"
                       : mode == "ReadOnlyMany"     ? "ROX"
                       : mode == "ReadWriteMany"    ? "RWX"
                       : mode == "ReadWriteOncePod" ? "RWOP"
                                                    : nullptr;
    if (!abbr) continue;
    if (!out.empty()) out += ",";
    out += abbr;
  }
  return out;
}

Json JobCells(const Json& obj, const std::string& name, const std::string& age) {
  // No controller runs the job: it stays as created, so Running (or Suspended) with no pod
  // succeeded, unless someone wrote its status.
  std::string status = "Running";
  if (const Json* conditions = FieldAt(obj, "status.conditions");
      conditions != nullptr && conditions->is_array()) {
    for (const auto& c : *conditions) {
      if (c.is_object() && c.value("status", "") == "True" &&
          (c.value("type", "") == "Complete" || c.value("type", "") == "Failed")) {
        status = c.value("type", "");
      }
    }
  }
  const Json* suspend = FieldAt(obj, "spec.suspend");
  if (status == "Running" && suspend != nullptr && suspend->is_boolean() && suspend->get<bool>())
    status = "Suspended";
  const Json* completions = FieldAt(obj, "spec.completions");
  const std::string completions_text =
      completions != nullptr && completions->is_number_integer()
          ? fmt::format("{}/{}", IntField(obj, "status.succeeded"), completions->get<int64_t>())
          : fmt::format("{}/1 of {}", IntField(obj, "status.succeeded"),
                        IntField(obj, "spec.parallelism", 1));
  const auto [containers, images] = TemplateContainers(obj);
  return Json::array({name, status, completions_text, "", age, containers, images,
                      SelectorAt(obj, "spec.selector")});
}

Json IngressCells(const Json& obj, const std::string& name, const std::string& age) {
  std::string hosts;
  if (const Json* rules = FieldAt(obj, "spec.rules"); rules != nullptr && rules->is_array()) {
    for (const auto& rule : *rules) {
      if (!hosts.empty()) hosts += ",";
      hosts += rule.is_object() && !rule.value("host", "").empty() ? rule.value("host", "") : "*";
    }
  }
  const Json* tls = FieldAt(obj, "spec.tls");
  return Json::array({name, OrNone(FieldValue(obj, "spec.ingressClassName")),
                      hosts.empty() ? std::string("*") : hosts, "",
                      tls != nullptr && tls->is_array() && !tls->empty() ? "80, 443" : "80", age});
}

// kubectl's STATE of a ResourceClaim: "pending", "allocated", "allocated,reserved", with
// "deleted" first while it is being deleted.
std::string ResourceClaimState(const Json& obj) {
  std::vector<std::string> states;
  const bool deleted = !FieldValue(obj, "metadata.deletionTimestamp").empty();
  if (deleted) states.push_back("deleted");
  const Json* allocation = FieldAt(obj, "status.allocation");
  if (allocation == nullptr || allocation->is_null()) {
    if (!deleted) states.push_back("pending");
  } else {
    states.push_back("allocated");
    const Json* reserved = FieldAt(obj, "status.reservedFor");
    if (reserved != nullptr && reserved->is_array() && !reserved->empty()) {
      states.push_back("reserved");
    }
  }
  return fmt::format("{}", fmt::join(states, ","));
}

// Cells of the kinds whose columns are fields as stored; null for the kinds built elsewhere.
Json PlainCells(const ResourceInfo& r, const Json& obj, int64_t now) {
  const std::string name = FieldValue(obj, "metadata.name");
  const std::string age = Age(obj, now);
  auto text_or = [&](std::string_view path, const char* absent) {
    const std::string v = FieldValue(obj, path);
    return v.empty() ? std::string(absent) : v;
  };
  if (r.group.empty() && r.plural == "configmaps") {
    return Json::array({name, MemberCount(obj, "data") + MemberCount(obj, "binaryData"), age});
  }
  if (r.group.empty() && r.plural == "secrets") {
    return Json::array({name, FieldValue(obj, "type"), MemberCount(obj, "data"), age});
  }
  if (r.group.empty() && r.plural == "serviceaccounts") {
    return Json::array({name, MemberCount(obj, "secrets"), age});
  }
  if (r.group == "scheduling.k8s.io" && r.plural == "priorityclasses") {
    const Json* global = FieldAt(obj, "globalDefault");
    return Json::array({name, FieldAt(obj, "value") ? *FieldAt(obj, "value") : Json(0),
                        global != nullptr && global->is_boolean() && global->get<bool>(), age,
                        FieldValue(obj, "preemptionPolicy")});
  }
  if (r.group == "policy" && r.plural == "poddisruptionbudgets") {
    return Json::array({name, text_or("spec.minAvailable", "N/A"),
                        text_or("spec.maxUnavailable", "N/A"),
                        IntField(obj, "status.disruptionsAllowed"), age});
  }
  if (r.group.empty() && r.plural == "persistentvolumes") {
    std::string claim;
    if (const std::string ref = FieldValue(obj, "spec.claimRef.name"); !ref.empty())
      claim = FieldValue(obj, "spec.claimRef.namespace") + "/" + ref;
    return Json::array(
        {name, FieldValue(obj, "spec.capacity.storage"), AccessModes(obj, "spec.accessModes"),
         FieldValue(obj, "spec.persistentVolumeReclaimPolicy"), FieldValue(obj, "status.phase"),
         claim, FieldValue(obj, "spec.storageClassName"),
         text_or("spec.volumeAttributesClassName", "<unset>"), FieldValue(obj, "status.reason"),
         age, FieldValue(obj, "spec.volumeMode")});
  }
  if (r.group.empty() && r.plural == "persistentvolumeclaims") {
    return Json::array({name, FieldValue(obj, "status.phase"), FieldValue(obj, "spec.volumeName"),
                        FieldValue(obj, "status.capacity.storage"),
                        AccessModes(obj, "status.accessModes"),
                        FieldValue(obj, "spec.storageClassName"),
                        text_or("spec.volumeAttributesClassName", "<unset>"), age,
                        FieldValue(obj, "spec.volumeMode")});
  }
  if (r.group == "storage.k8s.io" && r.plural == "storageclasses") {
    std::string display = name;
    const Json* annotations = FieldAt(obj, "metadata.annotations");
    if (annotations != nullptr && annotations->is_object() &&
        annotations->value("storageclass.kubernetes.io/is-default-class", "") == "true") {
      display += " (default)";
    }
    const Json* expand = FieldAt(obj, "allowVolumeExpansion");
    return Json::array(
        {display, FieldValue(obj, "provisioner"), text_or("reclaimPolicy", "Delete"),
         text_or("volumeBindingMode", "Immediate"),
         expand != nullptr && expand->is_boolean() && expand->get<bool>() ? "true" : "false", age});
  }
  if (r.group == "coordination.k8s.io" && r.plural == "leases") {
    return Json::array({name, FieldValue(obj, "spec.holderIdentity"), age});
  }
  if (r.group == "storage.k8s.io" && r.plural == "volumeattachments") {
    const Json* attached = FieldAt(obj, "status.attached");
    return Json::array(
        {name, FieldValue(obj, "spec.attacher"),
         FieldValue(obj, "spec.source.persistentVolumeName"), FieldValue(obj, "spec.nodeName"),
         attached != nullptr && attached->is_boolean() && attached->get<bool>(), age});
  }
  if (r.group == "resource.k8s.io" && r.plural == "resourceclaims") {
    return Json::array({name, ResourceClaimState(obj), age});
  }
  if (r.group == "resource.k8s.io" && r.plural == "resourceslices") {
    return Json::array({name, FieldValue(obj, "spec.nodeName"), FieldValue(obj, "spec.driver"),
                        FieldValue(obj, "spec.pool.name"), age});
  }
  if (r.group == "batch" && r.plural == "jobs") return JobCells(obj, name, age);
  if (r.group == "networking.k8s.io" && r.plural == "ingresses")
    return IngressCells(obj, name, age);
  if (r.group == "batch" && r.plural == "cronjobs") {
    const Json* suspend = FieldAt(obj, "spec.suspend");
    std::string last = FieldValue(obj, "status.lastScheduleTime");
    auto t = ParseTimestamp(last);
    return Json::array({name, FieldValue(obj, "spec.schedule"), text_or("spec.timeZone", "<none>"),
                        suspend != nullptr && suspend->is_boolean() && suspend->get<bool>(),
                        MemberCount(obj, "status.active"),
                        last.empty() || !t.ok() ? std::string("<none>") : HumanDuration(now - *t),
                        age});
  }
  return nullptr;
}

}  // namespace

std::string HumanDuration(int64_t s) {
  if (s < 0) s = 0;
  if (s < 120) return fmt::format("{}s", s);
  int64_t m = s / 60;
  if (m < 10) return s % 60 == 0 ? fmt::format("{}m", m) : fmt::format("{}m{}s", m, s % 60);
  if (m < 180) return fmt::format("{}m", m);
  int64_t h = s / 3600;
  if (h < 8) return m % 60 == 0 ? fmt::format("{}h", h) : fmt::format("{}h{}m", h, m % 60);
  if (h < 48) return fmt::format("{}h", h);
  int64_t d = h / 24;
  if (d < 8) return h % 24 == 0 ? fmt::format("{}d", d) : fmt::format("{}d{}h", d, h % 24);
  if (d < 730) return fmt::format("{}d", d);
  return fmt::format("{}y", d / 365);
}

Json ToTable(const ResourceInfo& r, const std::vector<const Json*>& objects, int64_t rv,
             IncludeObject include, int64_t now, bool with_columns) {
  // CustomResourceDefinitions and custom resources (crd_table.h).
  if (const CustomResourceVersion* custom = CustomResourceOf(r)) {
    return CustomResourceTable(*custom, objects, rv, include, now, with_columns);
  }
  if (IsCrdResource(r)) return CrdTable(objects, rv, include, with_columns);
  Json table = {{"kind", "Table"},
                {"apiVersion", "meta.k8s.io/v1"},
                {"metadata", {{"resourceVersion", std::to_string(rv)}}}};
  const auto columns = ColumnsFor(r);
  if (with_columns) {
    Json defs = Json::array();
    for (const auto& c : columns) {
      defs.push_back({{"name", c.name},
                      {"type", c.type},
                      {"format", c.format},
                      {"description", ""},
                      {"priority", c.priority}});
    }
    table["columnDefinitions"] = std::move(defs);
  } else {
    table["columnDefinitions"] = nullptr;
  }
  Json rows = Json::array();
  for (const Json* obj : objects) {
    Json cells;
    if (r.group.empty() && r.plural == "pods") {
      cells = PodCells(*obj, now);
    } else if (r.group.empty() && r.plural == "nodes") {
      cells = NodeCells(*obj, now);
    } else if (r.group.empty() && r.plural == "namespaces") {
      std::string phase = FieldValue(*obj, "status.phase");
      cells = Json::array(
          {FieldValue(*obj, "metadata.name"), phase.empty() ? "Active" : phase, Age(*obj, now)});
    } else if (r.plural == "events") {
      cells = EventCells(*obj, now);
    } else if (r.group.empty() && r.plural == "services") {
      cells = ServiceCells(*obj, now);
    } else if (HasScale(r) || (r.group == "apps" && r.plural == "daemonsets")) {
      cells = WorkloadCells(r, *obj, now);
    } else if (Json plain = PlainCells(r, *obj, now); !plain.is_null()) {
      cells = std::move(plain);
    } else {
      cells = Json::array({FieldValue(*obj, "metadata.name"), Age(*obj, now)});
    }
    Json row = {{"cells", std::move(cells)}};
    if (include == IncludeObject::kObject) {
      row["object"] = *obj;
    } else if (include == IncludeObject::kMetadata) {
      row["object"] = {{"kind", "PartialObjectMetadata"},
                       {"apiVersion", "meta.k8s.io/v1"},
                       {"metadata", obj->value("metadata", Json::object())}};
    }
    rows.push_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

}  // namespace berth::apiserver
