#include "apiserver/resource_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "api/validation.h"
#include "apiserver/name_validation.h"
#include "apiserver/resource_validation_internal.h"
#include "apiserver/selectors.h"
#include "cel/dra.h"

namespace berth::apiserver {
namespace resource_validation {

// Limits of pkg/apis/resource (types.go).
constexpr size_t kDeviceRequestsMaxSize = 32;
constexpr size_t kDeviceConstraintsMaxSize = 32;
constexpr size_t kDeviceConfigMaxSize = 32;
constexpr size_t kFirstAvailableMaxSize = 8;
constexpr size_t kDeviceSelectorsMaxSize = 32;
constexpr size_t kReservedForMaxSize = 256;
constexpr size_t kOpaqueParametersMaxLength = 10 * 1024;
constexpr size_t kAllocationResultsMaxSize = 32;
constexpr size_t kDriverNameMaxLength = 63;
constexpr size_t kPoolNameMaxLength = 253;
constexpr size_t kDeviceMaxIdLength = 32;

std::string Shown(const Json& v) {
  if (v.is_number() || v.is_boolean()) return v.dump();
  if (v.is_null()) return "\"null\"";
  return v.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void FieldErrors::NotSupported(const std::string& path, const Json& value,
                               const std::vector<std::string>& supported) {
  std::string list;
  for (const auto& s : supported) {
    if (!list.empty()) list += ", ";
    list += Json(s).dump();
  }
  Add(FieldErrorType::kNotSupported, path,
      fmt::format("{}: supported values: {}", Shown(value), list));
}

const Json& Member(const Json& v, const char* key) {
  static const Json kNull;
  if (!v.is_object()) return kNull;
  auto it = v.find(key);
  return it == v.end() ? kNull : *it;
}

const Json& Items(const Json& v, const char* key) {
  static const Json kEmpty = Json::array();
  const Json& m = Member(v, key);
  return m.is_array() ? m : kEmpty;
}

std::string Str(const Json& v, const char* key) {
  const Json& m = Member(v, key);
  return m.is_string() ? m.get<std::string>() : std::string();
}

namespace {

// `v` without nulls and empty lists, which decode to the same Go value as an absent field.
Json Decoded(const Json& v) {
  if (v.is_object()) {
    Json out = Json::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (it->is_null() || (it->is_array() && it->empty())) continue;
      out[it.key()] = Decoded(*it);
    }
    return out;
  }
  if (v.is_array()) {
    Json out = Json::array();
    for (const Json& e : v) out.push_back(Decoded(e));
    return out;
  }
  return v;
}

}  // namespace

bool SemanticEqual(const Json& a, const Json& b) {
  if (a == b) return true;
  Json x = Decoded(a), y = Decoded(b);
  auto empty = [](const Json& j) { return j.is_null() || (j.is_array() && j.empty()); };
  return (empty(x) && empty(y)) || x == y;
}

namespace {

const ResourceInfo& NodesInfo() {
  static const ResourceInfo kNodes = [] {
    ResourceInfo r;
    r.plural = "nodes";
    r.kind = "Node";
    return r;
  }();
  return kNodes;
}

const ResourceInfo& LabelRule() {
  static const ResourceInfo kNamespaces = [] {
    ResourceInfo r;
    r.plural = "namespaces";
    r.kind = "Namespace";
    return r;
  }();
  return kNamespaces;
}

bool IsCIdentifier(std::string_view s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s.front())) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

void CIdentifier(FieldErrors& e, const std::string& path, const std::string& id) {
  if (id.size() > kDeviceMaxIdLength) e.TooLong(path, kDeviceMaxIdLength);
  if (!IsCIdentifier(id)) {
    e.Invalid(path, id,
              "a valid C identifier must start with alphabetic character or '_', followed by a "
              "string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or "
              "'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')");
  }
}

}  // namespace

void DnsLabel(FieldErrors& e, const std::string& path, const std::string& value) {
  if (std::string p = NameProblem(LabelRule(), value, false); !p.empty()) {
    e.Invalid(path, value, p);
  }
}

void DnsSubdomain(FieldErrors& e, const std::string& path, const std::string& value) {
  if (std::string p = NameProblem(NodesInfo(), value, false); !p.empty()) {
    e.Invalid(path, value, p);
  }
}

void NodeName(FieldErrors& e, const std::string& path, const std::string& value) {
  DnsSubdomain(e, path, value);
}

void DriverName(FieldErrors& e, const std::string& path, const std::string& value) {
  if (value.empty()) return e.Required(path);
  if (value.size() > kDriverNameMaxLength) e.TooLong(path, kDriverNameMaxLength);
  std::string lower = value;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (std::string p = NameProblem(NodesInfo(), lower, false); !p.empty()) {
    e.Invalid(path, value, p);
  }
}

void PoolName(FieldErrors& e, const std::string& path, const std::string& value) {
  if (value.empty()) return e.Required(path);
  if (value.size() > kPoolNameMaxLength) e.TooLong(path, kPoolNameMaxLength);
  size_t start = 0;
  while (true) {
    size_t slash = value.find('/', start);
    DnsSubdomain(e, path, value.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
}

void QualifiedName(FieldErrors& e, const std::string& path, const std::string& value) {
  size_t slash = value.find('/');
  if (slash == std::string::npos) return CIdentifier(e, path, value);
  if (value.find('/', slash + 1) != std::string::npos) {
    return e.Invalid(path, value, "must not contain more than one slash");
  }
  const std::string domain = value.substr(0, slash), id = value.substr(slash + 1);
  if (domain.empty()) {
    e.Invalid(path, "", "the domain must not be empty");
  } else {
    DriverName(e, path, domain);
  }
  if (id.empty()) {
    e.Invalid(path, "", "the name must not be empty");
  } else {
    CIdentifier(e, path, id);
  }
}

void FullyQualifiedName(FieldErrors& e, const std::string& path, const std::string& value) {
  QualifiedName(e, path, value);
  if (value.find('/') == std::string::npos) {
    e.Invalid(path, value,
              "a fully qualified name must be a domain and a name separated by a slash");
  }
}

void LabelName(FieldErrors& e, const std::string& path, const std::string& value) {
  if (std::string p = validation::QualifiedNameProblem(value); !p.empty()) {
    e.Invalid(path, value, p);
  }
}

void LabelValue(FieldErrors& e, const std::string& path, const std::string& value) {
  if (std::string p = validation::LabelValueProblem(value); !p.empty()) e.Invalid(path, value, p);
}

void NodeSelector(FieldErrors& e, const std::string& path, const Json& selector) {
  const Json& terms = Items(selector, "nodeSelectorTerms");
  static const std::vector<std::string> kOps = {"DoesNotExist", "Exists", "Gt",
                                                "In",           "Lt",     "NotIn"};
  for (size_t i = 0; i < terms.size(); ++i) {
    for (const char* list : {"matchExpressions", "matchFields"}) {
      const Json& reqs = Items(terms[i], list);
      for (size_t j = 0; j < reqs.size(); ++j) {
        const std::string at = fmt::format("{}.nodeSelectorTerms[{}].{}[{}]", path, i, list, j);
        const std::string op = Str(reqs[j], "operator");
        if (std::find(kOps.begin(), kOps.end(), op) == kOps.end()) {
          e.NotSupported(at + ".operator", op, kOps);
        }
        if (std::string_view(list) == "matchExpressions")
          LabelName(e, at + ".key", Str(reqs[j], "key"));
      }
    }
  }
}

const std::vector<std::string>& TaintEffects() {
  static const std::vector<std::string> kEffects = {"NoExecute", "NoSchedule", "None"};
  return kEffects;
}

namespace {

// The request names of a claim's spec.devices, each with its subrequests' names.
using RequestNames = std::map<std::string, std::set<std::string>>;

RequestNames GatherRequestNames(const Json& devices) {
  RequestNames names;
  for (const Json& req : Items(devices, "requests")) {
    auto& subs = names[Str(req, "name")];
    for (const Json& sub : Items(req, "firstAvailable")) subs.insert(Str(sub, "name"));
  }
  return names;
}

bool HasRequest(const RequestNames& names, const std::string& ref) {
  size_t slash = ref.find('/');
  auto it = names.find(ref.substr(0, slash));
  if (it == names.end()) return false;
  if (slash == std::string::npos) return true;
  const std::string sub = ref.substr(slash + 1);
  return sub.find('/') == std::string::npos && it->second.count(sub) > 0;
}

void RequestNameRef(FieldErrors& e, const std::string& path, const std::string& ref,
                    const RequestNames& names) {
  constexpr std::string_view kDetail =
      "must be the name of a request in the claim or the name of a request and a subrequest "
      "separated by '/'";
  std::vector<std::string> segments;
  size_t start = 0;
  while (true) {
    size_t slash = ref.find('/', start);
    segments.push_back(ref.substr(start, slash == std::string::npos ? slash : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  if (segments.size() > 2) return e.Invalid(path, ref, kDetail);
  for (const auto& s : segments) DnsLabel(e, path, s);
  if (!HasRequest(names, ref)) e.Invalid(path, ref, kDetail);
}

// A list of request references: at most 32, unique, each naming a request.
void RequestRefs(FieldErrors& e, const std::string& path, const Json& refs,
                 const RequestNames& names) {
  if (refs.size() > kDeviceRequestsMaxSize)
    return e.TooMany(path, refs.size(), kDeviceRequestsMaxSize);
  std::set<std::string> seen;
  for (size_t i = 0; i < refs.size(); ++i) {
    const std::string ref = refs[i].is_string() ? refs[i].get<std::string>() : "";
    RequestNameRef(e, Idx(path, i), ref, names);
  }
  for (size_t i = 0; i < refs.size(); ++i) {
    const std::string ref = refs[i].is_string() ? refs[i].get<std::string>() : "";
    if (!seen.insert(ref).second) e.Duplicate(Idx(path, i), ref);
  }
}

void CelSelector(FieldErrors& e, const std::string& path, const Json& selector, bool stored) {
  const Json& cel = Member(selector, "cel");
  if (!cel.is_object()) return e.Required(path + ".cel");
  if (stored) return;
  const std::string at = path + ".cel.expression";
  const std::string expression = Str(cel, "expression");
  if (expression.size() > cel::dra::kSelectorMaxLength) {
    return e.TooLong(at, cel::dra::kSelectorMaxLength);
  }
  if (expression.empty()) return e.Required(at, "expression must not be empty");
  auto compiled = cel::dra::Selector::Compile(expression);
  if (!compiled.ok()) return e.Invalid(at, expression, compiled.error().message);
  if (compiled->max_cost() > cel::dra::kSelectorMaxCost) {
    e.Forbidden(at, "too complex, exceeds cost limit");
  }
}

void Selectors(FieldErrors& e, const std::string& path, const Json& selectors, bool stored) {
  if (selectors.size() > kDeviceSelectorsMaxSize) {
    return e.TooMany(path, selectors.size(), kDeviceSelectorsMaxSize);
  }
  for (size_t i = 0; i < selectors.size(); ++i) CelSelector(e, Idx(path, i), selectors[i], stored);
}

void Toleration(FieldErrors& e, const std::string& path, const Json& t) {
  if (const std::string key = Str(t, "key"); !key.empty()) LabelName(e, path + ".key", key);
  const std::string op = Str(t, "operator"), value = Str(t, "value");
  if (op == "Exists") {
    if (!value.empty()) e.Invalid(path + ".value", value, "must be empty for operator `Exists`");
  } else if (op == "Equal") {
    LabelValue(e, path + ".value", value);
  } else if (op.empty()) {
    e.Required(path + ".operator");
  } else {
    e.NotSupported(path + ".operator", op, {"Equal", "Exists"});
  }
  const std::string effect = Str(t, "effect");
  const auto& effects = TaintEffects();
  if (!effect.empty() && std::find(effects.begin(), effects.end(), effect) == effects.end()) {
    e.NotSupported(path + ".effect", effect, effects);
  }
}

void AllocationMode(FieldErrors& e, const std::string& path, const Json& request) {
  const std::string mode = Str(request, "allocationMode");
  const Json& count_field = Member(request, "count");
  const int64_t count = count_field.is_number_integer() ? count_field.get<int64_t>() : 0;
  if (mode == "All") {
    if (count != 0) {
      e.Invalid(path + ".count", count, "must not be specified when allocationMode is 'All'");
    }
  } else if (mode == "ExactCount") {
    if (count <= 0) e.Invalid(path + ".count", count, "must be greater than zero");
  } else {
    e.NotSupported(path + ".allocationMode", mode, {"All", "ExactCount"});
  }
}

// The part an exact request and a subrequest share.
void ClassSelectorsMode(FieldErrors& e, const std::string& path, const Json& request) {
  const std::string cls = Str(request, "deviceClassName");
  if (cls.empty()) {
    e.Required(path + ".deviceClassName");
  } else {
    DnsSubdomain(e, path + ".deviceClassName", cls);
  }
  Selectors(e, path + ".selectors", Items(request, "selectors"), false);
  AllocationMode(e, path, request);
  const Json& tolerations = Items(request, "tolerations");
  for (size_t i = 0; i < tolerations.size(); ++i) {
    Toleration(e, Idx(path + ".tolerations", i), tolerations[i]);
  }
}

void DeviceRequest(FieldErrors& e, const std::string& path, const Json& request) {
  DnsLabel(e, path + ".name", Str(request, "name"));
  const Json& first = Items(request, "firstAvailable");
  const bool has_first = !first.empty();
  const bool has_exactly = Member(request, "exactly").is_object();
  if (!has_first && !has_exactly) {
    return e.Required(path, "exactly one of `exactly` or `firstAvailable` is required");
  }
  if (has_first && has_exactly) {
    return e.Invalid(path, nullptr,
                     "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                     "fields are set");
  }
  if (has_exactly) return ClassSelectorsMode(e, path + ".exactly", Member(request, "exactly"));
  const std::string at = path + ".firstAvailable";
  if (first.size() > kFirstAvailableMaxSize) {
    return e.TooMany(at, first.size(), kFirstAvailableMaxSize);
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < first.size(); ++i) {
    DnsLabel(e, Idx(at, i) + ".name", Str(first[i], "name"));
    ClassSelectorsMode(e, Idx(at, i), first[i]);
  }
  for (size_t i = 0; i < first.size(); ++i) {
    if (!seen.insert(Str(first[i], "name")).second) e.Duplicate(Idx(at, i), Str(first[i], "name"));
  }
}

void OpaqueConfig(FieldErrors& e, const std::string& path, const Json& config) {
  const Json& opaque = Member(config, "opaque");
  if (!opaque.is_object()) return e.Required(path + ".opaque");
  DriverName(e, path + ".opaque.driver", Str(opaque, "driver"));
  const Json& params = Member(opaque, "parameters");
  const std::string at = path + ".opaque.parameters";
  if (params.is_null()) return e.Required(at);
  if (params.dump().size() > kOpaqueParametersMaxLength) {
    return e.TooLong(at, kOpaqueParametersMaxLength);
  }
  if (!params.is_object()) e.Invalid(at, "<value omitted>", "must be a valid JSON object");
}

void DeviceClaim(FieldErrors& e, const std::string& path, const Json& devices) {
  const RequestNames names = GatherRequestNames(devices);
  const Json& requests = Items(devices, "requests");
  const std::string rpath = path + ".requests";
  if (requests.size() > kDeviceRequestsMaxSize) {
    e.TooMany(rpath, requests.size(), kDeviceRequestsMaxSize);
  } else {
    std::set<std::string> seen;
    for (size_t i = 0; i < requests.size(); ++i) DeviceRequest(e, Idx(rpath, i), requests[i]);
    for (size_t i = 0; i < requests.size(); ++i) {
      const std::string name = Str(requests[i], "name");
      if (!seen.insert(name).second) e.Duplicate(Idx(rpath, i), name);
    }
  }
  const Json& constraints = Items(devices, "constraints");
  const std::string cpath = path + ".constraints";
  if (constraints.size() > kDeviceConstraintsMaxSize) {
    e.TooMany(cpath, constraints.size(), kDeviceConstraintsMaxSize);
  } else {
    for (size_t i = 0; i < constraints.size(); ++i) {
      const std::string at = Idx(cpath, i);
      RequestRefs(e, at + ".requests", Items(constraints[i], "requests"), names);
      if (Member(constraints[i], "matchAttribute").is_string()) {
        FullyQualifiedName(e, at + ".matchAttribute", Str(constraints[i], "matchAttribute"));
      } else if (Member(constraints[i], "distinctAttribute").is_string()) {
        FullyQualifiedName(e, at + ".distinctAttribute", Str(constraints[i], "distinctAttribute"));
      } else {
        e.Required(at,
                   "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but "
                   "multiple fields are set");
      }
    }
  }
  const Json& config = Items(devices, "config");
  const std::string fpath = path + ".config";
  if (config.size() > kDeviceConfigMaxSize) {
    return e.TooMany(fpath, config.size(), kDeviceConfigMaxSize);
  }
  for (size_t i = 0; i < config.size(); ++i) {
    RequestRefs(e, Idx(fpath, i) + ".requests", Items(config[i], "requests"), names);
    OpaqueConfig(e, Idx(fpath, i), config[i]);
  }
}

// IsExtendedResourceName of k8s.io/kubernetes/pkg/apis/core/v1/helper.
bool IsExtendedResourceName(const std::string& name) {
  if (name.find('/') == std::string::npos || name.find("kubernetes.io/") != std::string::npos) {
    return false;
  }
  if (name.rfind("requests.", 0) == 0) return false;
  return validation::IsQualifiedName("requests." + name);
}

void DeviceClassSpec(FieldErrors& e, const Json& spec, const Json* old_spec) {
  const bool selectors_stored = old_spec != nullptr && SemanticEqual(Member(*old_spec, "selectors"),
                                                                     Member(spec, "selectors"));
  Selectors(e, "spec.selectors", Items(spec, "selectors"), selectors_stored);
  const Json& config = Items(spec, "config");
  if (config.size() > kDeviceConfigMaxSize) {
    e.TooMany("spec.config", config.size(), kDeviceConfigMaxSize);
  } else {
    for (size_t i = 0; i < config.size(); ++i) OpaqueConfig(e, Idx("spec.config", i), config[i]);
  }
  const Json& ext = Member(spec, "extendedResourceName");
  if (ext.is_string() && !IsExtendedResourceName(ext.get<std::string>())) {
    e.Invalid("spec.extendedResourceName", ext, "must be a valid extended resource name");
  }
}

void ConsumerReference(FieldErrors& e, const std::string& path, const Json& ref) {
  for (const char* f : {"resource", "name", "uid"}) {
    if (Str(ref, f).empty()) e.Required(fmt::format("{}.{}", path, f));
  }
}

void AllocationResult(FieldErrors& e, const std::string& path, const Json& allocation,
                      const RequestNames& names) {
  const Json& results = Items(Member(allocation, "devices"), "results");
  const std::string rpath = path + ".devices.results";
  if (results.size() > kAllocationResultsMaxSize) {
    e.TooMany(rpath, results.size(), kAllocationResultsMaxSize);
  } else {
    for (size_t i = 0; i < results.size(); ++i) {
      const std::string at = Idx(rpath, i);
      RequestNameRef(e, at + ".request", Str(results[i], "request"), names);
      DriverName(e, at + ".driver", Str(results[i], "driver"));
      PoolName(e, at + ".pool", Str(results[i], "pool"));
      DnsLabel(e, at + ".device", Str(results[i], "device"));
      const Json& tolerations = Items(results[i], "tolerations");
      for (size_t j = 0; j < tolerations.size(); ++j) {
        Toleration(e, Idx(at + ".tolerations", j), tolerations[j]);
      }
    }
  }
  const Json& selector = Member(allocation, "nodeSelector");
  if (selector.is_object()) NodeSelector(e, path + ".nodeSelector", selector);
}

// validateResourceClaimStatusUpdate: reservedFor, devices' statuses and the allocation.
void ClaimStatus(FieldErrors& e, const Json& claim, const Json& old) {
  const Json& status = Member(claim, "status");
  const Json& old_status = Member(old, "status");
  const Json& reserved = Items(status, "reservedFor");
  if (reserved.size() > kReservedForMaxSize) {
    e.TooMany("status.reservedFor", reserved.size(), kReservedForMaxSize);
  } else {
    std::set<std::string> uids;
    for (size_t i = 0; i < reserved.size(); ++i) {
      ConsumerReference(e, Idx("status.reservedFor", i), reserved[i]);
    }
    for (size_t i = 0; i < reserved.size(); ++i) {
      const std::string uid = Str(reserved[i], "uid");
      if (!uids.insert(uid).second) e.Duplicate(Idx("status.reservedFor", i), uid);
    }
  }
  const Json& allocation = Member(status, "allocation");
  const Json& old_allocation = Member(old_status, "allocation");
  std::set<std::string> allocated;
  for (const Json& r : Items(Member(allocation, "devices"), "results")) {
    allocated.insert(fmt::format("{}/{}/{}", Str(r, "driver"), Str(r, "pool"), Str(r, "device")) +
                     (Str(r, "shareID").empty() ? "" : "/" + Str(r, "shareID")));
  }
  const Json& devices = Items(status, "devices");
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string at = Idx("status.devices", i);
    DriverName(e, at + ".driver", Str(devices[i], "driver"));
    PoolName(e, at + ".pool", Str(devices[i], "pool"));
    DnsLabel(e, at + ".device", Str(devices[i], "device"));
    const std::string id =
        fmt::format("{}/{}/{}", Str(devices[i], "driver"), Str(devices[i], "pool"),
                    Str(devices[i], "device")) +
        (Str(devices[i], "shareID").empty() ? "" : "/" + Str(devices[i], "shareID"));
    if (allocated.count(id) == 0) {
      e.InvalidText(at, id, "must be an allocated device in the claim");
    }
  }
  if (!reserved.empty()) {
    if (!allocation.is_object()) {
      e.Forbidden("status.reservedFor", "may not be specified when `allocated` is not set");
    } else if (!FieldValue(claim, "metadata.deletionTimestamp").empty()) {
      std::set<std::string> before;
      for (const Json& r : Items(old_status, "reservedFor")) before.insert(r.dump());
      for (const Json& r : reserved) {
        if (before.count(r.dump()) == 0) {
          e.Forbidden("status.reservedFor",
                      "new entries may not be added while `deallocationRequested` or "
                      "`deletionTimestamp` are set");
          break;
        }
      }
    }
  }
  if (old_allocation.is_object() && allocation.is_object()) {
    if (!SemanticEqual(old_allocation, allocation)) {
      e.Invalid("status.allocation", allocation, "field is immutable");
    }
  } else if (allocation.is_object()) {
    AllocationResult(e, "status.allocation", allocation,
                     GatherRequestNames(Member(Member(claim, "spec"), "devices")));
  }
}

void TemplateMetadata(FieldErrors& e, const Json& meta) {
  const Json& labels = Member(meta, "labels");
  if (!labels.is_object()) return;
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    LabelName(e, "spec.metadata.labels", it.key());
    if (it->is_string()) LabelValue(e, "spec.metadata.labels", it->get<std::string>());
  }
}

void DefaultRequest(Json& request) {
  if (!request.is_object()) return;
  if (Str(request, "allocationMode").empty()) request["allocationMode"] = "ExactCount";
  const Json& count = Member(request, "count");
  if (request["allocationMode"] == "ExactCount" && (count.is_null() || count == 0)) {
    request["count"] = 1;
  }
  auto t = request.find("tolerations");
  if (t == request.end() || !t->is_array()) return;
  for (Json& toleration : *t) {
    if (toleration.is_object() && Str(toleration, "operator").empty()) {
      toleration["operator"] = "Equal";
    }
  }
}

// The value at `path` in `obj`, null when a step is missing.
Json* MutableAt(Json& obj, std::initializer_list<const char*> path) {
  Json* at = &obj;
  for (const char* step : path) {
    auto it = at->is_object() ? at->find(step) : at->end();
    if (!at->is_object() || it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

void DefaultClaimSpec(Json& spec) {
  if (!spec.is_object()) return;
  auto devices = spec.find("devices");
  if (devices == spec.end() || !devices->is_object()) return;
  auto requests = devices->find("requests");
  if (requests == devices->end() || !requests->is_array()) return;
  for (Json& request : *requests) {
    if (!request.is_object()) continue;
    if (auto exactly = request.find("exactly"); exactly != request.end()) DefaultRequest(*exactly);
    if (auto first = request.find("firstAvailable"); first != request.end() && first->is_array()) {
      for (Json& sub : *first) DefaultRequest(sub);
    }
  }
}

}  // namespace
}  // namespace resource_validation

using namespace resource_validation;  // NOLINT(build/namespaces): this file's own helpers

void DefaultResourceObject(const ResourceInfo& r, Json& obj, bool is_create,
                           const std::string& now) {
  if (!obj.is_object()) return;
  if (r.plural == "resourceclaims") {
    if (is_create) obj.erase("status");
    if (auto spec = obj.find("spec"); spec != obj.end()) DefaultClaimSpec(*spec);
    // An allocation's results carry the requests' tolerations, defaulted the same way.
    Json* results = MutableAt(obj, {"status", "allocation", "devices", "results"});
    if (results != nullptr && results->is_array()) {
      for (Json& result : *results) {
        auto t = result.is_object() ? result.find("tolerations") : result.end();
        if (!result.is_object() || t == result.end() || !t->is_array()) continue;
        for (Json& toleration : *t) {
          if (toleration.is_object() && Str(toleration, "operator").empty()) {
            toleration["operator"] = "Equal";
          }
        }
      }
    }
  } else if (r.plural == "resourceclaimtemplates") {
    Json* spec = MutableAt(obj, {"spec", "spec"});
    if (spec != nullptr) DefaultClaimSpec(*spec);
  } else if (r.plural == "resourceslices") {
    DefaultResourceSlice(obj, now);
  } else if (r.plural == "devicetaintrules") {
    DefaultDeviceTaintRule(obj, is_create, now);
  }
}

FieldErrorList ResourceFieldErrors(const ResourceInfo& r, const Json& obj, const Json* old) {
  FieldErrors e;
  const Json& spec = Member(obj, "spec");
  if (r.plural == "deviceclasses") {
    DeviceClassSpec(e, spec, old != nullptr ? &Member(*old, "spec") : nullptr);
  } else if (r.plural == "resourceclaims") {
    if (old == nullptr) {
      DeviceClaim(e, "spec.devices", Member(spec, "devices"));
    } else {
      if (!SemanticEqual(Member(*old, "spec"), spec)) e.Invalid("spec", spec, "field is immutable");
      ClaimStatus(e, obj, *old);
    }
  } else if (r.plural == "resourceclaimtemplates") {
    if (old == nullptr) {
      TemplateMetadata(e, Member(spec, "metadata"));
      DeviceClaim(e, "spec.spec.devices", Member(Member(spec, "spec"), "devices"));
    } else if (!SemanticEqual(Member(*old, "spec"), spec)) {
      e.Invalid("spec", spec, "field is immutable");
    }
  } else if (r.plural == "resourceslices") {
    ValidateResourceSlice(e, obj, old);
  } else if (r.plural == "devicetaintrules") {
    ValidateDeviceTaintRule(e, obj, old);
  }
  // errors.NewInvalid reports each distinct message once.
  FieldErrorList unique;
  for (auto& m : e.list) {
    if (std::find(unique.begin(), unique.end(), m) == unique.end()) unique.push_back(std::move(m));
  }
  return unique;
}

ApiError ResourceInvalid(const ResourceInfo& r, const Json& obj, FieldErrorList errors) {
  return InvalidObject(fmt::format("{}.{}", r.kind, r.group), FieldValue(obj, "metadata.name"),
                       std::move(errors));
}

void PrepareResourceUpdate(const ResourceInfo& r, const Json& current, Json& next,
                           const std::string& now) {
  if (r.plural == "devicetaintrules") PrepareDeviceTaintRuleUpdate(current, next, now);
}

VoidResult ValidateResourceObject(const ResourceInfo& r, const Json& obj, const Json* old) {
  if (!IsResourceApi(r) || !obj.is_object()) return {};
  FieldErrorList errors = ResourceFieldErrors(r, obj, old);
  if (errors.empty()) return {};
  return ResourceInvalid(r, obj, std::move(errors));
}

}  // namespace berth::apiserver
