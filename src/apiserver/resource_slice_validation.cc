// ResourceSlice validation and defaulting (validateResourceSliceSpec and SetDefaults_DeviceTaint
// of kube-apiserver's resource.k8s.io).
#include <fmt/format.h>
#include <re2/re2.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "apiserver/resource_validation_internal.h"

namespace berth::apiserver::resource_validation {
namespace {

constexpr size_t kMaxDevices = 128;
// With taints or counter consumption in any device.
constexpr size_t kMaxDevicesWithAdvancedFeatures = 64;
constexpr size_t kMaxAttributesAndCapacities = 32;
constexpr size_t kAttributeMaxValueLength = 64;
constexpr size_t kMaxCounterSets = 8;
constexpr size_t kMaxCountersPerSet = 32;
constexpr size_t kMaxConsumptionsPerDevice = 2;
constexpr size_t kMaxTaints = 16;

bool IsSemver(const std::string& v) {
  static const re2::RE2 kSemver(
      R"((0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*))"
      R"((-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?)"
      R"((\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?)");
  return re2::RE2::FullMatch(v, kSemver);
}

void Attribute(FieldErrors& e, const std::string& path, const Json& attr) {
  int set = 0;
  for (const char* f : {"bool", "int", "string", "version"}) {
    if (!Member(attr, f).is_null()) ++set;
  }
  if (const Json& s = Member(attr, "string"); s.is_string()) {
    if (s.get<std::string>().size() > kAttributeMaxValueLength) {
      e.TooLong(path + ".string", kAttributeMaxValueLength);
    }
  }
  if (const Json& v = Member(attr, "version"); v.is_string()) {
    if (!IsSemver(v.get<std::string>())) {
      e.Invalid(path + ".version", v, "must be a string compatible with semver.org spec 2.0.0");
    }
    if (v.get<std::string>().size() > kAttributeMaxValueLength) {
      e.TooLong(path + ".version", kAttributeMaxValueLength);
    }
  }
  // The list-typed values (DRAListTypeAttributes).
  for (const char* f : {"bools", "ints", "strings", "versions"}) {
    const Json& list = Member(attr, f);
    if (list.is_null()) continue;
    ++set;
    const std::string at = fmt::format("{}.{}", path, f);
    if (!list.is_array() || list.empty()) e.Invalid(at, list, "must not be empty if specified");
    if (!list.is_array()) continue;
    for (size_t i = 0; i < list.size(); ++i) {
      if (!list[i].is_string()) continue;
      const std::string v = list[i].get<std::string>();
      if (std::string_view(f) == "versions" && !IsSemver(v)) {
        e.Invalid(Idx(at, i), v, "must be a string compatible with semver.org spec 2.0.0");
      }
      if (v.size() > kAttributeMaxValueLength) e.TooLong(Idx(at, i), kAttributeMaxValueLength);
    }
  }
  if (set == 0) e.Invalid(path, "", "exactly one value must be specified");
  if (set > 1) e.Invalid(path, attr, "exactly one value must be specified");
}

void Counters(FieldErrors& e, const std::string& path, const Json& counters) {
  if (!counters.is_object() || counters.empty()) return e.Required(path);
  if (counters.size() > kMaxCountersPerSet) {
    return e.TooMany(path, counters.size(), kMaxCountersPerSet);
  }
  for (auto it = counters.begin(); it != counters.end(); ++it) DnsLabel(e, path, it.key());
}

void Taint(FieldErrors& e, const std::string& path, const Json& taint) {
  LabelName(e, path + ".key", Str(taint, "key"));
  if (const std::string v = Str(taint, "value"); !v.empty()) LabelValue(e, path + ".value", v);
  const std::string effect = Str(taint, "effect");
  const auto& effects = TaintEffects();
  if (effect.empty()) {
    e.Required(path + ".effect");
  } else if (std::find(effects.begin(), effects.end(), effect) == effects.end()) {
    e.NotSupported(path + ".effect", effect, effects);
  }
}

void BindingConditions(FieldErrors& e, const std::string& path, const Json& device) {
  const Json& conditions = Items(device, "bindingConditions");
  const Json& failures = Items(device, "bindingFailureConditions");
  if (conditions.empty() && !failures.empty()) {
    e.Invalid(path + ".bindingConditions", conditions,
              "bindingConditions are required to use bindingFailureConditions");
  }
  if (failures.empty() && !conditions.empty()) {
    e.Invalid(path + ".bindingFailureConditions", failures,
              "bindingFailureConditions are required to use bindingConditions");
  }
}

// Where a device may be used, when the slice leaves that to each device.
void PerDeviceNode(FieldErrors& e, const std::string& path, const Json& device, bool per_device) {
  const Json& node = Member(device, "nodeName");
  const Json& selector = Member(device, "nodeSelector");
  const Json& all = Member(device, "allNodes");
  if (!per_device) {
    if (!node.is_null() || !selector.is_null() || !all.is_null()) {
      e.Invalid(path, nullptr,
                "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                "`perDeviceNodeSelection` is set to true in the ResourceSlice spec");
    }
    return;
  }
  std::vector<std::string> set;
  if (node.is_string()) {
    if (node.get<std::string>().empty()) {
      e.Invalid(path + ".nodeName", node, "must not be empty");
    } else {
      set.push_back("`nodeName`");
      NodeName(e, path + ".nodeName", node.get<std::string>());
    }
  }
  if (selector.is_object()) {
    set.push_back("`nodeSelector`");
    NodeSelector(e, path + ".nodeSelector", selector);
  }
  if (all.is_boolean()) {
    if (all.get<bool>()) {
      set.push_back("`allNodes`");
    } else {
      e.Invalid(path + ".allNodes", all, "must be either unset or set to true");
    }
  }
  constexpr std::string_view kDetail =
      "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
      "`perDeviceNodeSelection` is set to true in the ResourceSlice spec";
  if (set.empty()) e.Required(path, kDetail);
  if (set.size() > 1) e.Invalid(path, fmt::format("{{{}}}", fmt::join(set, ", ")), kDetail);
}

void Device(FieldErrors& e, const std::string& path, const Json& device, const Json* old_device,
            bool per_device) {
  DnsLabel(e, path + ".name", Str(device, "name"));
  const Json& attributes = Member(device, "attributes");
  const Json& capacity = Member(device, "capacity");
  const size_t n = (attributes.is_object() ? attributes.size() : 0) +
                   (capacity.is_object() ? capacity.size() : 0);
  if (n > kMaxAttributesAndCapacities) {
    e.Invalid(path, n,
              fmt::format("the total number of attributes and capacities must not exceed {}",
                          kMaxAttributesAndCapacities));
  }
  if (attributes.is_object()) {
    for (auto it = attributes.begin(); it != attributes.end(); ++it) {
      QualifiedName(e, path + ".attributes", it.key());
      Attribute(e, Key(path + ".attributes", it.key()), *it);
    }
  }
  const bool multi = Member(device, "allowMultipleAllocations") == true;
  if (capacity.is_object() &&
      (old_device == nullptr || !SemanticEqual(Member(*old_device, "capacity"), capacity))) {
    for (auto it = capacity.begin(); it != capacity.end(); ++it) {
      QualifiedName(e, path + ".capacity", it.key());
      if (!multi && !Member(*it, "requestPolicy").is_null()) {
        e.Forbidden(Key(path + ".capacity", it.key()) + ".requestPolicy",
                    "allowMultipleAllocations must be true");
      }
    }
  }
  const Json& taints = Items(device, "taints");
  if (old_device == nullptr ||
      !SemanticEqual(Member(*old_device, "taints"), Member(device, "taints"))) {
    if (taints.size() > kMaxTaints) {
      e.TooMany(path + ".taints", taints.size(), kMaxTaints);
    } else {
      for (size_t i = 0; i < taints.size(); ++i) Taint(e, Idx(path + ".taints", i), taints[i]);
    }
  }
  const Json& consumes = Items(device, "consumesCounters");
  const std::string cpath = path + ".consumesCounters";
  if (consumes.size() > kMaxConsumptionsPerDevice) {
    e.TooMany(cpath, consumes.size(), kMaxConsumptionsPerDevice);
  } else {
    std::set<std::string> seen;
    for (size_t i = 0; i < consumes.size(); ++i) {
      const std::string set = Str(consumes[i], "counterSet");
      if (set.empty()) {
        e.Required(Idx(cpath, i) + ".counterSet");
      } else {
        DnsLabel(e, Idx(cpath, i) + ".counterSet", set);
      }
      Counters(e, Idx(cpath, i) + ".counters", Member(consumes[i], "counters"));
    }
    for (size_t i = 0; i < consumes.size(); ++i) {
      const std::string set = Str(consumes[i], "counterSet");
      if (!seen.insert(set).second) e.Duplicate(Idx(cpath, i), set);
    }
  }
  PerDeviceNode(e, path, device, per_device);
  BindingConditions(e, path, device);
}

// Exactly one of nodeName, nodeSelector, allNodes and perDeviceNodeSelection.
void NodeSelection(FieldErrors& e, const Json& spec) {
  std::vector<std::string> set;
  if (const Json& node = Member(spec, "nodeName"); node.is_string()) {
    if (node.get<std::string>().empty()) {
      e.Invalid("spec.nodeName", node, "must be either unset or set to a non-empty string");
    } else {
      set.push_back("`nodeName`");
      NodeName(e, "spec.nodeName", node.get<std::string>());
    }
  }
  if (const Json& selector = Member(spec, "nodeSelector"); selector.is_object()) {
    set.push_back("`nodeSelector`");
    NodeSelector(e, "spec.nodeSelector", selector);
    const Json& terms = Items(selector, "nodeSelectorTerms");
    if (terms.size() != 1) {
      e.Invalid("spec.nodeSelector.nodeSelectorTerms", terms,
                "must have exactly one node selector term");
    }
  }
  for (const char* flag : {"allNodes", "perDeviceNodeSelection"}) {
    const Json& v = Member(spec, flag);
    if (!v.is_boolean()) continue;
    if (v.get<bool>()) {
      set.push_back(fmt::format("`{}`", flag));
    } else {
      e.Invalid(fmt::format("spec.{}", flag), v, "must be either unset or set to true");
    }
  }
  constexpr std::string_view kDetail =
      "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is "
      "required";
  if (set.empty()) e.Required("spec", kDetail);
  if (set.size() > 1) {
    e.Invalid("spec", fmt::format("{{{}}}", fmt::join(set, ", ")),
              fmt::format("{}, but multiple fields are set", kDetail));
  }
}

void SharedCounters(FieldErrors& e, const Json& sets) {
  if (sets.size() > kMaxCounterSets) {
    return e.TooMany("spec.sharedCounters", sets.size(), kMaxCounterSets);
  }
  std::set<std::string> seen;
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string at = Idx("spec.sharedCounters", i);
    const std::string name = Str(sets[i], "name");
    if (name.empty()) {
      e.Required(at + ".name");
    } else {
      DnsLabel(e, at + ".name", name);
    }
    Counters(e, at + ".counters", Member(sets[i], "counters"));
  }
  for (size_t i = 0; i < sets.size(); ++i) {
    const std::string name = Str(sets[i], "name");
    if (!seen.insert(name).second) e.Duplicate(Idx("spec.sharedCounters", i), name);
  }
}

}  // namespace

void ValidateResourceSlice(FieldErrors& e, const Json& obj, const Json* old) {
  const Json& spec = Member(obj, "spec");
  DriverName(e, "spec.driver", Str(spec, "driver"));
  const Json& pool = Member(spec, "pool");
  PoolName(e, "spec.pool.name", Str(pool, "name"));
  const Json& count = Member(pool, "resourceSliceCount");
  if (!count.is_number_integer() || count.get<int64_t>() <= 0) {
    e.Invalid("spec.pool.resourceSliceCount", count.is_number() ? count : Json(0),
              "must be greater than zero");
  }
  if (const Json& gen = Member(pool, "generation"); gen.is_number_integer() && gen < 0) {
    e.Invalid("spec.pool.generation", gen, "must be greater than or equal to zero");
  }
  const Json* old_spec = old != nullptr ? &Member(*old, "spec") : nullptr;
  if (old_spec != nullptr) {
    auto immutable = [&](const std::string& path, const Json& now, const Json& before) {
      if (!SemanticEqual(now, before))
        e.Invalid(path, now.is_null() ? Json("") : now, "field is immutable");
    };
    immutable("spec.pool.name", Member(pool, "name"), Member(Member(*old_spec, "pool"), "name"));
    immutable("spec.driver", Member(spec, "driver"), Member(*old_spec, "driver"));
    immutable("spec.nodeName", Member(spec, "nodeName"), Member(*old_spec, "nodeName"));
  }
  NodeSelection(e, spec);
  const Json& devices = Items(spec, "devices");
  const Json& shared = Items(spec, "sharedCounters");
  if (!Member(spec, "sharedCounters").is_null() && !Member(spec, "devices").is_null()) {
    e.Invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed");
  }
  bool advanced = false;
  for (const Json& d : devices) {
    advanced = advanced || !Items(d, "taints").empty() || !Items(d, "consumesCounters").empty();
  }
  const size_t max = advanced ? kMaxDevicesWithAdvancedFeatures : kMaxDevices;
  if (devices.size() > max) {
    e.TooMany("spec.devices", devices.size(), max);
  } else {
    const bool per_device = Member(spec, "perDeviceNodeSelection") == true;
    std::set<std::string> seen;
    for (size_t i = 0; i < devices.size(); ++i) {
      const Json* old_device = nullptr;
      if (old_spec != nullptr) {
        for (const Json& d : Items(*old_spec, "devices")) {
          if (Str(d, "name") == Str(devices[i], "name")) old_device = &d;
        }
      }
      Device(e, Idx("spec.devices", i), devices[i], old_device, per_device);
    }
    for (size_t i = 0; i < devices.size(); ++i) {
      const std::string name = Str(devices[i], "name");
      if (!seen.insert(name).second) e.Duplicate(Idx("spec.devices", i), name);
    }
  }
  SharedCounters(e, shared);
}

void DefaultResourceSlice(Json& obj, const std::string& now) {
  auto spec = obj.find("spec");
  if (spec == obj.end() || !spec->is_object()) return;
  auto devices = spec->find("devices");
  if (devices == spec->end() || !devices->is_array()) return;
  for (Json& device : *devices) {
    auto taints = device.is_object() ? device.find("taints") : device.end();
    if (!device.is_object() || taints == device.end() || !taints->is_array()) continue;
    for (Json& taint : *taints) {
      if (taint.is_object() && Member(taint, "timeAdded").is_null()) taint["timeAdded"] = now;
    }
  }
}

}  // namespace berth::apiserver::resource_validation
