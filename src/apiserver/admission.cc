#include "apiserver/admission.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include "api/codec.h"
#include "apiserver/base64.h"
#include "apiserver/crd_admission.h"
#include "apiserver/field_types.h"
#include "apiserver/field_validation.h"
#include "apiserver/name_validation.h"
#include "apiserver/pod_extended_resource_status.h"
#include "apiserver/pod_label_keys.h"
#include "apiserver/pod_resize.h"
#include "apiserver/resource_validation.h"
#include "apiserver/selectors.h"
#include "apiserver/store.h"
#include "apiserver/validation.h"
#include "berth/api/quantity.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

constexpr const char* kQuantityPattern =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

// Checks a resource list's quantities and writes each in Kubernetes' canonical form, as
// kube-apiserver stores them ("0.5" is stored as "500m", 2048Ki as "2Mi").
VoidResult CheckResourceList(const ResourceInfo& r, const Json& obj, Json& list,
                             const std::string& field) {
  if (!list.is_object()) return {};
  for (auto it = list.begin(); it != list.end(); ++it) {
    std::string path = fmt::format("{}[{}]", field, it.key());
    std::string text = it->is_string() ? it->get<std::string>() : it->dump();
    auto q = Quantity::Parse(text);
    if (!q.ok()) {
      return InvalidField(r, obj, path, FieldErrorType::kInvalid,
                          fmt::format("\"{}\": {}", text, kQuantityPattern));
    }
    if (q->MilliValue() < 0) {
      return InvalidField(r, obj, path, FieldErrorType::kInvalid,
                          fmt::format("\"{}\": must be greater than or equal to 0", text));
    }
    *it = q->String();
  }
  return {};
}

// The API's defaults for a pod spec (a pod's, or a workload's template), where absent. Set one
// by one: a table of Json values would build and copy each per create.
void DefaultPodSpec(Json& spec) {
  if (!spec.is_object()) return;
  for (const char* list : {"initContainers", "containers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (Json& c : *it) {
      if (!c.is_object()) continue;
      if (!c.contains("terminationMessagePath")) {
        c["terminationMessagePath"] = "/dev/termination-log";
      }
      if (!c.contains("terminationMessagePolicy")) c["terminationMessagePolicy"] = "File";
      if (auto ports = c.find("ports"); ports != c.end() && ports->is_array()) {
        for (Json& p : *ports) {
          if (p.is_object() && !p.contains("protocol")) p["protocol"] = "TCP";
        }
      }
      if (!c.contains("imagePullPolicy")) {
        const std::string image = c.value("image", "");
        const bool latest =
            image.find(':') == std::string::npos || image.substr(image.rfind(':')) == ":latest";
        c["imagePullPolicy"] = latest ? "Always" : "IfNotPresent";
      }
    }
  }
  if (!spec.contains("schedulerName") || spec["schedulerName"] == "") {
    spec["schedulerName"] = "default-scheduler";
  }
  if (!spec.contains("restartPolicy")) spec["restartPolicy"] = "Always";
  if (!spec.contains("dnsPolicy")) spec["dnsPolicy"] = "ClusterFirst";
  if (!spec.contains("terminationGracePeriodSeconds")) spec["terminationGracePeriodSeconds"] = 30;
  if (!spec.contains("securityContext")) spec["securityContext"] = Json::object();
}

// The defaults kube-apiserver gives a Pod (not a pod template): requests default to limits,
// a host-network pod's container ports default their hostPort, service links are on; and what
// its admission plugins add: the namespace's default service account, and tolerations of
// not-ready and unreachable nodes for five minutes (DefaultTolerationSeconds).
void DefaultPod(Json& spec) {
  const bool host_network = spec.value("hostNetwork", false);
  for (const char* list : {"initContainers", "containers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (Json& c : *it) {
      if (!c.is_object()) continue;
      if (auto res = c.find("resources"); res != c.end() && res->is_object()) {
        auto limits = res->find("limits");
        if (limits != res->end() && limits->is_object() && !limits->empty()) {
          Json& requests = (*res)["requests"];
          if (!requests.is_object()) requests = Json::object();
          for (auto l = limits->begin(); l != limits->end(); ++l) {
            if (!requests.contains(l.key())) requests[l.key()] = l.value();
          }
        }
      }
      auto ports = c.find("ports");
      if (ports == c.end() || !ports->is_array()) continue;
      for (Json& p : *ports) {
        if (!p.is_object()) continue;
        if (host_network && !p.contains("hostPort") && p.contains("containerPort")) {
          p["hostPort"] = p["containerPort"];
        }
      }
    }
  }
  if (!spec.contains("enableServiceLinks")) spec["enableServiceLinks"] = true;
  if (spec.value("serviceAccountName", "").empty()) {
    spec["serviceAccountName"] = spec.value("serviceAccount", "").empty()
                                     ? std::string("default")
                                     : spec["serviceAccount"].get<std::string>();
  }
  spec["serviceAccount"] = spec["serviceAccountName"];
  Json& tolerations = spec["tolerations"];
  if (!tolerations.is_array()) tolerations = Json::array();
  // Built once and copied: a document written as an initializer list is assembled again on
  // every call, at about a tenth of a pod create's admission.
  static const std::array<Json, 2> kDefaultTolerations = [] {
    std::array<Json, 2> made;
    const char* keys[] = {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"};
    for (size_t i = 0; i < made.size(); ++i) {
      made[i] = {{"key", keys[i]},
                 {"operator", "Exists"},
                 {"effect", "NoExecute"},
                 {"tolerationSeconds", 300}};
    }
    return made;
  }();
  for (const Json& toleration : kDefaultTolerations) {
    const std::string& key = toleration["key"].get_ref<const std::string&>();
    const bool tolerated = std::any_of(tolerations.begin(), tolerations.end(), [&](const Json& t) {
      if (!t.is_object()) return false;
      auto k = t.find("key");
      auto effect = t.find("effect");
      // Absent or empty: any key, any effect. Not a string: invalid, which validation says.
      const bool key_matches =
          k == t.end() || (k->is_string() && (k->get_ref<const std::string&>().empty() ||
                                              k->get_ref<const std::string&>() == key));
      const bool effect_matches =
          effect == t.end() ||
          (effect->is_string() && (effect->get_ref<const std::string&>().empty() ||
                                   effect->get_ref<const std::string&>() == "NoExecute"));
      return key_matches && effect_matches;
    });
    if (!tolerated) tolerations.push_back(toleration);
  }
}

// The API's defaults for the other kinds operators create by hand.
void DefaultOther(const ResourceInfo& r, Json& obj) {
  auto set_default = [](Json& o, const char* key, Json value) {
    if (!o.contains(key) || o[key].is_null()) o[key] = std::move(value);
  };
  if (r.group.empty() && r.plural == "secrets") {
    set_default(obj, "type", "Opaque");
    // stringData is write-only: it is merged into data (base64), over keys data has too.
    if (auto sd = obj.find("stringData"); sd != obj.end()) {
      if (sd->is_object()) {
        Json& data = obj["data"];
        if (!data.is_object()) data = Json::object();
        for (auto it = sd->begin(); it != sd->end(); ++it) {
          if (it->is_string()) data[it.key()] = Base64(it->get<std::string>());
        }
      }
      obj.erase("stringData");
    }
  } else if (r.group.empty() && r.plural == "services") {
    Json& spec = obj["spec"];
    if (!spec.is_object()) spec = Json::object();
    set_default(spec, "type", "ClusterIP");
    set_default(spec, "sessionAffinity", "None");
    if (spec["type"] != "ExternalName") set_default(spec, "internalTrafficPolicy", "Cluster");
    if (auto ports = spec.find("ports"); ports != spec.end() && ports->is_array()) {
      for (Json& p : *ports) {
        if (!p.is_object()) continue;
        set_default(p, "protocol", "TCP");
        if (p.contains("port")) set_default(p, "targetPort", p["port"]);
      }
    }
  } else if (r.group == "scheduling.k8s.io" && r.plural == "priorityclasses") {
    set_default(obj, "preemptionPolicy", "PreemptLowerPriority");
  } else if (r.group == "storage.k8s.io" && r.plural == "storageclasses") {
    set_default(obj, "reclaimPolicy", "Delete");
    set_default(obj, "volumeBindingMode", "Immediate");
  } else if (r.group.empty() && r.plural == "persistentvolumes") {
    Json& spec = obj["spec"];
    if (!spec.is_object()) spec = Json::object();
    set_default(spec, "persistentVolumeReclaimPolicy", "Retain");
    set_default(spec, "volumeMode", "Filesystem");
  } else if (r.group.empty() && r.plural == "persistentvolumeclaims") {
    Json& spec = obj["spec"];
    if (!spec.is_object()) spec = Json::object();
    set_default(spec, "volumeMode", "Filesystem");
  }
}

// `obj[key]`, made an object when absent or not one.
Json& ObjectMember(Json& obj, const char* key) {
  Json& v = obj[key];
  if (!v.is_object()) v = Json::object();
  return v;
}

// A Job's defaults (and a CronJob's job template's): one completion at a time, six retries,
// and unless the selector is manual, a selector and template labels naming the job, so that
// `kubectl logs job/x` and `describe` find its pods only. kube-apiserver keys them by the
// Job's UID, which the store assigns after admission: here the name stands in.
void DefaultJobSpec(Json& spec, const std::string& job_name) {
  if (!spec.contains("completions") && !spec.contains("parallelism")) {
    spec["completions"] = 1;
    spec["parallelism"] = 1;
  } else if (!spec.contains("parallelism")) {
    spec["parallelism"] = 1;
  }
  if (!spec.contains("backoffLimit")) spec["backoffLimit"] = 6;
  if (!spec.contains("completionMode")) spec["completionMode"] = "NonIndexed";
  if (!spec.contains("suspend")) spec["suspend"] = false;
  if (!spec.contains("podReplacementPolicy")) spec["podReplacementPolicy"] = "TerminatingOrFailed";
  Json& tmpl = ObjectMember(spec, "template");
  if (auto pod_spec = tmpl.find("spec"); pod_spec != tmpl.end()) DefaultPodSpec(*pod_spec);
  if (job_name.empty() || spec.value("manualSelector", false)) return;
  Json& labels = ObjectMember(ObjectMember(tmpl, "metadata"), "labels");
  for (const char* key : {"batch.kubernetes.io/job-name", "job-name"}) {
    if (!labels.contains(key)) labels[key] = job_name;
  }
  if (!spec.contains("selector")) {
    spec["selector"] = {{"matchLabels", {{"batch.kubernetes.io/job-name", job_name}}}};
  }
}

void DefaultBatch(const ResourceInfo& r, Json& obj, bool is_create) {
  Json& spec = ObjectMember(obj, "spec");
  if (r.plural == "jobs") {
    // The selector is generated once, at creation; updates keep what is stored.
    DefaultJobSpec(spec, is_create ? FieldValue(obj, "metadata.name") : std::string());
    return;
  }
  if (!spec.contains("concurrencyPolicy")) spec["concurrencyPolicy"] = "Allow";
  if (!spec.contains("suspend")) spec["suspend"] = false;
  if (!spec.contains("successfulJobsHistoryLimit")) spec["successfulJobsHistoryLimit"] = 3;
  if (!spec.contains("failedJobsHistoryLimit")) spec["failedJobsHistoryLimit"] = 1;
  // Each Job the CronJob would create gets its own name and selector then.
  DefaultJobSpec(ObjectMember(ObjectMember(spec, "jobTemplate"), "spec"), std::string());
}

void DefaultRollingUpdate(Json& strategy,
                          std::initializer_list<std::pair<const char*, Json>> fields) {
  if (!strategy.contains("type")) strategy["type"] = "RollingUpdate";
  if (strategy["type"] != "RollingUpdate") return;
  Json& rolling = ObjectMember(strategy, "rollingUpdate");
  for (const auto& [key, value] : fields)
    if (!rolling.contains(key)) rolling[key] = value;
}

// The API's defaults for the workload kinds (as kube-apiserver applies them to every write):
// replicas, update strategies, history limits and the pod template's spec.
void DefaultWorkload(const ResourceInfo& r, Json& obj) {
  Json& spec = ObjectMember(obj, "spec");
  if (r.plural != "daemonsets" && !spec.contains("replicas")) spec["replicas"] = 1;
  if (r.plural == "deployments") {
    DefaultRollingUpdate(ObjectMember(spec, "strategy"),
                         {{"maxUnavailable", "25%"}, {"maxSurge", "25%"}});
    if (!spec.contains("progressDeadlineSeconds")) spec["progressDeadlineSeconds"] = 600;
  } else if (r.plural == "statefulsets") {
    if (!spec.contains("podManagementPolicy")) spec["podManagementPolicy"] = "OrderedReady";
    DefaultRollingUpdate(ObjectMember(spec, "updateStrategy"), {{"partition", 0}});
    Json& retention = ObjectMember(spec, "persistentVolumeClaimRetentionPolicy");
    for (const char* when : {"whenDeleted", "whenScaled"})
      if (!retention.contains(when)) retention[when] = "Retain";
  } else if (r.plural == "daemonsets") {
    DefaultRollingUpdate(ObjectMember(spec, "updateStrategy"),
                         {{"maxUnavailable", 1}, {"maxSurge", 0}});
  }
  if (r.group == "apps" && r.plural != "replicasets" && !spec.contains("revisionHistoryLimit")) {
    spec["revisionHistoryLimit"] = 10;
  }
  auto tmpl = spec.find("template");
  if (tmpl == spec.end() || !tmpl->is_object()) return;
  if (auto pod_spec = tmpl->find("spec"); pod_spec != tmpl->end()) DefaultPodSpec(*pod_spec);
  if (r.plural == "replicationcontrollers") {
    const Json* labels = nullptr;
    if (auto meta = tmpl->find("metadata"); meta != tmpl->end() && meta->is_object()) {
      if (auto it = meta->find("labels"); it != meta->end() && it->is_object() && !it->empty())
        labels = &*it;
    }
    if (labels == nullptr) return;
    if (!spec.contains("selector") || !spec["selector"].is_object() || spec["selector"].empty())
      spec["selector"] = *labels;
    Json& meta = ObjectMember(obj, "metadata");
    if (!meta.contains("labels") || !meta["labels"].is_object() || meta["labels"].empty())
      meta["labels"] = *labels;
  }
}

VoidResult AdmitPod(const ResourceInfo& r, Json& pod, bool is_create,
                    const PriorityClassLookup& lookup) {
  Json& spec = pod["spec"];
  if (!spec.is_object()) return InvalidField(r, pod, "spec", FieldErrorType::kRequired);
  if (!spec.contains("containers") || !spec["containers"].is_array() ||
      spec["containers"].empty()) {
    return InvalidField(r, pod, "spec.containers", FieldErrorType::kRequired);
  }
  for (const char* list : {"initContainers", "containers"}) {
    if (!spec.contains(list) || !spec[list].is_array()) continue;
    for (size_t i = 0; i < spec[list].size(); ++i) {
      Json& c = spec[list][i];
      std::string base = fmt::format("spec.{}[{}]", list, i);
      if (!c.is_object() || c.value("name", "").empty()) {
        return InvalidField(r, pod, base + ".name", FieldErrorType::kRequired);
      }
      if (!c.contains("resources")) continue;
      for (const char* kind : {"requests", "limits"}) {
        if (c["resources"].contains(kind)) {
          auto ok = CheckResourceList(r, pod, c["resources"][kind],
                                      fmt::format("{}.resources.{}", base, kind));
          if (!ok.ok()) return ok;
        }
      }
    }
  }
  if (spec.contains("overhead")) {
    if (auto ok = CheckResourceList(r, pod, spec["overhead"], "spec.overhead"); !ok.ok()) return ok;
  }
  // Defaults apply to every write, as kube-apiserver decodes every body with them: an update
  // that leaves a defaulted field out keeps its default.
  DefaultPodSpec(spec);
  DefaultPod(spec);
  if (!is_create) return {};
  // Before validation, which sees the merged selectors (as kube-apiserver's PrepareForCreate).
  MergeLabelKeys(pod);
  // Priority admission.
  std::string class_name = spec.value("priorityClassName", "");
  std::optional<Json> pc = lookup ? lookup(class_name) : std::nullopt;
  if (!class_name.empty() && !pc) {
    return Error{fmt::format("pods \"{}\" is forbidden: no PriorityClass with name {} was found",
                             pod["metadata"].value("name", ""), class_name),
                 ErrorCode::kForbidden};
  }
  int64_t priority = pc ? pc->value("value", int64_t{0}) : 0;
  if (spec.contains("priority") && spec["priority"].is_number_integer() &&
      spec["priority"].get<int64_t>() != priority) {
    return Error{
        fmt::format("pods \"{}\" is forbidden: the integer value of priority ({}) must "
                    "not be provided in pod spec; priority admission controller computed "
                    "{} from the given PriorityClass name",
                    pod["metadata"].value("name", ""), spec["priority"].get<int64_t>(), priority),
        ErrorCode::kForbidden};
  }
  spec["priority"] = priority;
  // The globalDefault class is named on the pod, as kube-apiserver's priority admission does.
  if (pc) spec["priorityClassName"] = (*pc)["metadata"].value("name", class_name);
  if (pc && pc->contains("preemptionPolicy") && !spec.contains("preemptionPolicy")) {
    spec["preemptionPolicy"] = (*pc)["preemptionPolicy"];
  } else if (!spec.contains("preemptionPolicy")) {
    spec["preemptionPolicy"] = "PreemptLowerPriority";
  }
  // Status the kubelet would otherwise start from.
  Json& status = pod["status"];
  if (!status.is_object()) status = Json::object();
  if (!status.contains("phase")) status["phase"] = "Pending";
  status["qosClass"] = ComputePodQos(spec);
  return {};
}

// The resource lists of nodes' status, claims, volumes and quotas: checked and canonicalized
// like a pod's.
VoidResult CheckQuantities(const ResourceInfo& r, Json& obj) {
  if (r.group.empty() && r.plural == "nodes" && obj.contains("status")) {
    for (const char* field : {"capacity", "allocatable"}) {
      if (obj["status"].contains(field)) {
        auto ok = CheckResourceList(r, obj, obj["status"][field], std::string("status.") + field);
        if (!ok.ok()) return ok;
      }
    }
  }
  // The other kinds' resource lists, checked and canonicalized the same way.
  struct QuantityList {
    const char* plural;
    std::initializer_list<const char*> path;
  };
  for (const QuantityList& q :
       {QuantityList{"persistentvolumeclaims", {"spec", "resources", "requests"}},
        QuantityList{"persistentvolumeclaims", {"spec", "resources", "limits"}},
        QuantityList{"persistentvolumes", {"spec", "capacity"}},
        QuantityList{"resourcequotas", {"spec", "hard"}}}) {
    if (!r.group.empty() || r.plural != q.plural) continue;
    Json* list = &obj;
    std::string field;
    for (const char* step : q.path) {
      auto it = list->is_object() ? list->find(step) : list->end();
      list = it == list->end() ? nullptr : &*it;
      if (list == nullptr) break;
      field += field.empty() ? step : std::string(".") + step;
    }
    if (list == nullptr) continue;
    if (auto ok = CheckResourceList(r, obj, *list, field); !ok.ok()) return ok;
  }
  return {};
}

// A new namespace: its name label, phase Active and the namespace deleter's finalizer.
void DefaultNewNamespace(Json& obj, const std::string& name) {
  obj["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
  if (!obj.contains("status")) obj["status"] = {{"phase", "Active"}};
  // The namespace deleter's finalizer, which kube-apiserver adds to every new namespace.
  Json& spec = obj["spec"];
  if (!spec.is_object()) spec = Json::object();
  Json& finalizers = spec["finalizers"];
  if (!finalizers.is_array()) finalizers = Json::array();
  if (std::find(finalizers.begin(), finalizers.end(), "kubernetes") == finalizers.end()) {
    finalizers.push_back("kubernetes");
  }
}

// One default PriorityClass at most, and a value only system classes may exceed 1e9.
VoidResult AdmitPriorityClass(const ResourceInfo& r, Json& obj, const std::string& name,
                              const PriorityClassLookup& priority_classes) {
  if (obj.value("globalDefault", false) && priority_classes) {
    if (auto existing = priority_classes("");
        existing && (*existing)["metadata"].value("name", "") != name) {
      return Error{fmt::format("PriorityClass {} is already marked as default. Only one "
                               "default can exist",
                               (*existing)["metadata"].value("name", "")),
                   ErrorCode::kForbidden};
    }
  }
  if (!obj.contains("value") || !obj["value"].is_number_integer()) {
    return InvalidField(r, obj, "value", FieldErrorType::kRequired);
  }
  if (obj["value"].get<int64_t>() > 1000000000 && name.rfind("system-", 0) != 0) {
    return InvalidField(r, obj, "value", FieldErrorType::kInvalid,
                        "must be no greater than 1000000000 for non-system classes");
  }
  return {};
}

}  // namespace

VoidResult Admit(const ResourceInfo& r, Json& obj, bool is_create,
                 const PriorityClassLookup& priority_classes, const ValidationOptions& validation) {
  if (!obj.is_object()) return Error{"the object must be a JSON object", ErrorCode::kBadRequest};
  // CustomResourceDefinitions and custom objects have admission of their own (crd_admission.h).
  if (IsCrdResource(r)) return AdmitCrd(r, obj, is_create);
  if (const CustomResourceVersion* custom = CustomResourceOf(r)) {
    auto ok = AdmitCustomObject(*custom, obj, is_create);
    // A built-in kind's own rules; an update's run in ValidateUpdate, against the stored object.
    if (ok.ok() && is_create && custom->validate) return custom->validate(obj, nullptr);
    return ok;
  }
  // Whatever path the object came by (a patch, a status write, an apply), nothing of the wrong
  // type is stored: every typed reader of the list would fail on it.
  if (const FieldSchema* schema = FindFieldSchema(r.group, r.kind)) {
    if (auto bad = FindFieldTypeError(*schema, obj)) {
      return Error{fmt::format("{} in version \"{}\" cannot be handled as a {}: {}", r.kind,
                               r.version, r.kind, *bad),
                   ErrorCode::kBadRequest};
    }
  }
  // A name is checked when it is chosen; an update cannot change it.
  if (is_create) {
    if (auto ok = ValidateNewName(r, obj); !ok.ok()) return ok;
  }
  const std::string name = obj.contains("metadata") && obj["metadata"].is_object()
                               ? obj["metadata"].value("name", "")
                               : "";
  if (r.group.empty() && r.plural == "pods") {
    if (auto ok = AdmitPod(r, obj, is_create, priority_classes); !ok.ok()) return ok;
    if (auto ok = ValidateObject(r, obj, validation); !ok.ok() || !is_create) return ok;
    return CheckLabelKeys(r, obj);
  }
  if (auto ok = CheckQuantities(r, obj); !ok.ok()) return ok;
  DefaultOther(r, obj);
  if (r.group == "batch") DefaultBatch(r, obj, is_create);
  if ((r.group == "apps" && r.plural != "controllerrevisions") ||
      (r.group.empty() && r.plural == "replicationcontrollers")) {
    DefaultWorkload(r, obj);
  }
  if (r.group.empty() && r.plural == "namespaces" && is_create) DefaultNewNamespace(obj, name);
  if (r.group == "scheduling.k8s.io" && r.plural == "priorityclasses") {
    if (auto ok = AdmitPriorityClass(r, obj, name, priority_classes); !ok.ok()) return ok;
  }
  if (IsResourceApi(r)) {
    DefaultResourceObject(r, obj, is_create, FormatTimestamp(NowUnixSeconds()));
    // An update is validated against the stored object, in ValidateUpdate.
    if (is_create) {
      if (auto ok = ValidateResourceObject(r, obj, nullptr); !ok.ok()) return ok;
    }
  }
  // Pod templates' label keys on create; an update checks them in ValidateUpdate.
  if (auto ok = ValidateObject(r, obj, validation); !ok.ok() || !is_create) return ok;
  return CheckLabelKeys(r, obj);
}

namespace {

// The value at `path`, null when absent (FieldAt, as a value to compare).
const Json& At(const Json& obj, std::string_view path) {
  static const Json kNull;
  const Json* v = FieldAt(obj, path);
  return v != nullptr ? *v : kNull;
}

// `v` as a typed decode and an omitempty encode leave it, for comparing two writes of one
// object: nulls, empty strings, lists and maps dropped, quantities (under requests, limits and
// overhead) in canonical form ("0.5" and 0.5 are "500m").
Json Canonical(const Json& v, bool quantities = false) {
  if (quantities && (v.is_string() || v.is_number())) {
    // By value: "1e3", "1k" and 1000 are one quantity.
    auto q = Quantity::Parse(v.is_string() ? v.get<std::string>() : v.dump());
    return q.ok() ? Json(Quantity::FromMilli(q->MilliValue()).String()) : v;
  }
  if (v.is_object()) {
    Json out = Json::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      const bool q = it.key() == "requests" || it.key() == "limits" || it.key() == "overhead";
      Json c = Canonical(it.value(), quantities || (q && it->is_object()));
      if (c.is_null() || ((c.is_object() || c.is_array() || c.is_string()) && c.empty())) continue;
      out[it.key()] = std::move(c);
    }
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (const auto& e : v) out.push_back(Canonical(e));
    return out;
  }
  return v;
}

// Whether every item of `part` is in `whole`, compared canonically.
bool Within(const Json& part, const Json& whole) {
  if (!part.is_array()) return true;
  if (!whole.is_array()) return part.empty();
  std::vector<Json> have;
  for (const auto& w : whole) have.push_back(Canonical(w));
  return std::all_of(part.begin(), part.end(), [&](const Json& p) {
    return std::find(have.begin(), have.end(), Canonical(p)) != have.end();
  });
}

// The part of a pod spec an update may not change: the spec without the fields it may.
Json FixedPodSpec(Json spec) {
  if (!spec.is_object()) return spec;
  for (const char* field : {"activeDeadlineSeconds", "terminationGracePeriodSeconds", "tolerations",
                            "schedulingGates"}) {
    spec.erase(field);
  }
  for (const char* list : {"initContainers", "containers", "ephemeralContainers"}) {
    auto it = spec.find(list);
    if (it == spec.end() || !it->is_array()) continue;
    for (Json& c : *it) {
      if (c.is_object()) c.erase("image");
    }
  }
  return spec;
}

}  // namespace

VoidResult ValidateUpdate(const ResourceInfo& r, const Json& current, Json& next) {
  if (IsCrdResource(r)) return ValidateCrdUpdate(current, next);
  if (const CustomResourceVersion* custom = CustomResourceOf(r); custom && custom->validate) {
    return custom->validate(next, &current);
  }
  if (IsResourceApi(r)) {
    PrepareResourceUpdate(r, current, next, FormatTimestamp(NowUnixSeconds()));
    return ValidateResourceObject(r, next, &current);
  }
  // An object stored with label keys that no longer pass (written before they were checked)
  // may still be updated, as kube-apiserver lets pods that violated the older rules be.
  if (CheckLabelKeys(r, current).ok()) {
    if (auto ok = CheckLabelKeys(r, next); !ok.ok()) return ok;
  }
  const Json& old_spec = At(current, "spec");
  if (r.group.empty() && r.plural == "pods" && old_spec.is_object() && next["spec"].is_object()) {
    // Priority admission keeps what it set at creation.
    for (const char* field : {"priority", "preemptionPolicy", "priorityClassName"}) {
      if (old_spec.contains(field) && !next["spec"].contains(field)) {
        next["spec"][field] = old_spec[field];
      }
    }
  }
  const Json& new_spec = At(next, "spec");
  if (r.group.empty() && r.plural == "pods") {
    if (auto ok = ValidatePodExtendedResourceClaimStatus(r, next); !ok.ok()) return ok;
    const bool fixed_same = Canonical(FixedPodSpec(old_spec)) == Canonical(FixedPodSpec(new_spec));
    const bool tolerations_added = Within(At(old_spec, "tolerations"), At(new_spec, "tolerations"));
    const bool gates_removed =
        Within(At(new_spec, "schedulingGates"), At(old_spec, "schedulingGates"));
    if (fixed_same && tolerations_added && gates_removed) return {};
    return InvalidField(
        r, next, "spec", FieldErrorType::kForbidden,
        "pod updates may not change fields other than "
        "`spec.containers[*].image`,`spec.initContainers[*].image`,"
        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing "
        "tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if "
        "it was previously negative)");
  }
  if ((r.group == "apps" && r.plural != "controllerrevisions") &&
      Canonical(At(old_spec, "selector")) != Canonical(At(new_spec, "selector"))) {
    return InvalidField(r, next, "spec.selector", FieldErrorType::kInvalid,
                        fmt::format("{}: field is immutable", At(new_spec, "selector").dump()));
  }
  if (r.group == "scheduling.k8s.io" && r.plural == "priorityclasses" &&
      At(current, "value") != At(next, "value")) {
    return InvalidField(r, next, "value", FieldErrorType::kForbidden,
                        "may not be changed in an update.");
  }
  return {};
}

}  // namespace berth::apiserver
