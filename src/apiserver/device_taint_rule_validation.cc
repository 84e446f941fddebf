// DeviceTaintRule validation and defaulting (resource.k8s.io/v1): the selector's driver, pool
// and device names, the taint, the status conditions written through the status subresource,
// and the taint's timeAdded, which the server sets on create and again when the effect
// changes (so that it tells since when the effect holds, which toleration seconds count from).
#include <re2/re2.h>

#include <algorithm>
#include <set>
#include <string>

#include "apiserver/resource_validation_internal.h"

namespace berth::apiserver::resource_validation {
namespace {

constexpr size_t kMaxConditions = 8;
constexpr size_t kMaxReasonLength = 1024;
constexpr size_t kMaxMessageLength = 32768;

void Selector(FieldErrors& e, const Json& selector) {
  if (!selector.is_object()) return;
  if (const Json& v = Member(selector, "driver"); v.is_string()) {
    DriverName(e, "spec.deviceSelector.driver", v.get<std::string>());
  }
  if (const Json& v = Member(selector, "pool"); v.is_string()) {
    PoolName(e, "spec.deviceSelector.pool", v.get<std::string>());
  }
  if (const Json& v = Member(selector, "device"); v.is_string()) {
    DnsLabel(e, "spec.deviceSelector.device", v.get<std::string>());
  }
}

// The taint; its effect only when it is new or changed (a stored effect stays valid).
void Taint(FieldErrors& e, const Json& taint, const Json* old_taint) {
  LabelName(e, "spec.taint.key", Str(taint, "key"));
  if (const std::string v = Str(taint, "value"); !v.empty()) LabelValue(e, "spec.taint.value", v);
  const std::string effect = Str(taint, "effect");
  if (old_taint != nullptr && Str(*old_taint, "effect") == effect) return;
  const auto& effects = TaintEffects();
  if (effect.empty()) {
    e.Required("spec.taint.effect");
  } else if (std::find(effects.begin(), effects.end(), effect) == effects.end()) {
    e.NotSupported("spec.taint.effect", effect, effects);
  }
}

void Condition(FieldErrors& e, const std::string& path, const Json& c) {
  LabelName(e, path + ".type", Str(c, "type"));
  const std::string status = Str(c, "status");
  if (status != "True" && status != "False" && status != "Unknown") {
    e.NotSupported(path + ".status", status, {"False", "True", "Unknown"});
  }
  if (const Json& g = Member(c, "observedGeneration"); g.is_number_integer() && g < 0) {
    e.Invalid(path + ".observedGeneration", g, "must be greater than or equal to zero");
  }
  if (Str(c, "lastTransitionTime").empty()) e.Required(path + ".lastTransitionTime", "must be set");
  const std::string reason = Str(c, "reason");
  static const re2::RE2 kReason("[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?");
  if (reason.empty()) {
    e.Required(path + ".reason", "must be set");
  } else {
    if (!re2::RE2::FullMatch(reason, kReason)) {
      e.Invalid(path + ".reason", reason,
                "a condition reason must start with alphabetic character, optionally followed "
                "by a string of alphanumeric characters or '_,:', and must end with an "
                "alphanumeric character or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  "
                "or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is "
                "'[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')");
    }
    if (reason.size() > kMaxReasonLength) e.TooLong(path + ".reason", kMaxReasonLength);
  }
  if (Str(c, "message").size() > kMaxMessageLength) {
    e.TooLong(path + ".message", kMaxMessageLength);
  }
}

void Conditions(FieldErrors& e, const Json& status) {
  const Json& conditions = Items(status, "conditions");
  std::set<std::string> seen;
  for (size_t i = 0; i < conditions.size(); ++i) {
    const std::string path = Idx("status.conditions", i);
    Condition(e, path, conditions[i]);
    const std::string type = Str(conditions[i], "type");
    if (!seen.insert(type).second) e.Duplicate(path + ".type", type);
  }
  if (conditions.size() > kMaxConditions) {
    e.TooMany("status.conditions", conditions.size(), kMaxConditions);
  }
}

}  // namespace

void ValidateDeviceTaintRule(FieldErrors& e, const Json& obj, const Json* old) {
  const Json& spec = Member(obj, "spec");
  const Json* old_spec = old != nullptr ? &Member(*old, "spec") : nullptr;
  Selector(e, Member(spec, "deviceSelector"));
  Taint(e, Member(spec, "taint"), old_spec != nullptr ? &Member(*old_spec, "taint") : nullptr);
  // Status is written only through the status subresource, after the rule exists.
  if (old != nullptr) Conditions(e, Member(obj, "status"));
}

void DefaultDeviceTaintRule(Json& obj, bool is_create, const std::string& now) {
  if (is_create) obj.erase("status");
  auto spec = obj.find("spec");
  if (spec == obj.end() || !spec->is_object()) return;
  auto taint = spec->find("taint");
  if (taint == spec->end() || !taint->is_object()) return;
  if (Member(*taint, "timeAdded").is_null()) (*taint)["timeAdded"] = now;
}

void PrepareDeviceTaintRuleUpdate(const Json& current, Json& next, const std::string& now) {
  const Json& old_taint = Member(Member(current, "spec"), "taint");
  auto spec = next.find("spec");
  if (spec == next.end() || !spec->is_object()) return;
  auto taint = spec->find("taint");
  if (taint == spec->end() || !taint->is_object()) return;
  // A new effect with the old time: the time becomes the effect's.
  if (Str(*taint, "effect") != Str(old_taint, "effect") &&
      Member(*taint, "timeAdded") == Member(old_taint, "timeAdded")) {
    (*taint)["timeAdded"] = now;
  }
}

}  // namespace berth::apiserver::resource_validation
