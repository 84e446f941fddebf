#include "apiserver/pod_label_keys.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "api/validation.h"
#include "apiserver/selectors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

constexpr const char* kAffinityKinds[] = {"podAffinity", "podAntiAffinity"};
constexpr const char* kRequired = "requiredDuringSchedulingIgnoredDuringExecution";
constexpr const char* kPreferred = "preferredDuringSchedulingIgnoredDuringExecution";

// `obj[key]` when `obj` is an object that has it, else null.
Json* Member(Json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

const Json* Member(const Json& obj, const char* key) { return Member(const_cast<Json&>(obj), key); }

// The strings of the list `obj[key]` (a typed decode drops nothing else here: the field types
// were checked before admission).
std::vector<std::string> Strings(const Json& obj, const char* key) {
  std::vector<std::string> out;
  const Json* list = Member(obj, key);
  if (list == nullptr || !list->is_array()) return out;
  for (const Json& s : *list)
    if (s.is_string()) out.push_back(s.get<std::string>());
  return out;
}

// A term's labelSelector, null when it is absent or null (a nil selector).
const Json* SelectorOf(const Json& term) {
  const Json* selector = Member(term, "labelSelector");
  return selector != nullptr && selector->is_object() ? selector : nullptr;
}

// Appends `key <op> (value)` to `selector` for each of `keys` the pod has a label for.
void AppendRequirements(Json& selector, const std::vector<std::string>& keys, const char* op,
                        const Json& labels) {
  for (const std::string& key : keys) {
    const Json* value = Member(labels, key.c_str());
    if (value == nullptr || !value->is_string()) continue;
    Json& expressions = selector["matchExpressions"];
    if (!expressions.is_array()) expressions = Json::array();
    expressions.push_back({{"key", key}, {"operator", op}, {"values", Json::array({*value})}});
  }
}

// The merge for one term (an affinity term, or a spread constraint: no mismatchLabelKeys).
void MergeTerm(Json& term, const Json& labels) {
  Json* selector = Member(term, "labelSelector");
  // A nil selector matches no pod, with or without the keys' requirements.
  if (selector == nullptr || !selector->is_object()) return;
  AppendRequirements(*selector, Strings(term, "matchLabelKeys"), "In", labels);
  AppendRequirements(*selector, Strings(term, "mismatchLabelKeys"), "NotIn", labels);
}

// Calls `fn(term, path)` for each pod affinity and anti-affinity term of `spec` at `field`, in
// the order kube-apiserver validates them (required terms, then preferred, per kind).
template <class J, class Fn>
void ForEachAffinityTerm(J& spec, const std::string& field, Fn fn) {
  auto* affinity = Member(spec, "affinity");
  if (affinity == nullptr) return;
  for (const char* kind : kAffinityKinds) {
    auto* terms = Member(*affinity, kind);
    if (terms == nullptr) continue;
    const std::string base = fmt::format("{}.affinity.{}", field, kind);
    if (auto* required = Member(*terms, kRequired); required && required->is_array()) {
      for (size_t i = 0; i < required->size(); ++i)
        fn((*required)[i], fmt::format("{}.{}[{}]", base, kRequired, i));
    }
    if (auto* preferred = Member(*terms, kPreferred); preferred && preferred->is_array()) {
      for (size_t i = 0; i < preferred->size(); ++i) {
        if (auto* term = Member((*preferred)[i], "podAffinityTerm"))
          fn(*term, fmt::format("{}.{}[{}].podAffinityTerm", base, kPreferred, i));
      }
    }
  }
}

template <class J, class Fn>
void ForEachSpreadConstraint(J& spec, const std::string& field, Fn fn) {
  auto* constraints = Member(spec, "topologySpreadConstraints");
  if (constraints == nullptr || !constraints->is_array()) return;
  for (size_t i = 0; i < constraints->size(); ++i)
    fn((*constraints)[i], fmt::format("{}.topologySpreadConstraints[{}]", field, i));
}

std::string Quoted(const std::string& s) { return Json(s).dump(); }

// validateLabelKeys: the list needs a selector, and each key must be a label name.
void KeyListErrors(const std::string& path, const std::vector<std::string>& keys,
                   const Json* selector, FieldErrorList& out) {
  if (keys.empty()) return;
  if (selector == nullptr) {
    out.push_back(
        {FieldErrorType::kForbidden, path, "must not be specified when labelSelector is not set"});
    return;
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    std::string problem = validation::QualifiedNameProblem(keys[i]);
    if (!problem.empty()) {
      out.push_back({FieldErrorType::kInvalid, fmt::format("{}[{}]", path, i),
                     fmt::format("{}: {}", Quoted(keys[i]), problem)});
    }
  }
}

// ValidateMatchLabelKeysAndMismatchLabelKeys for the term at `path`. On a pod the selector
// already holds the merged requirements, so a key of matchLabelKeys the user also put in the
// selector shows up twice: that second sighting is the error (a template, not merged, only
// errs when the user named the key twice). The index is the key's last one in
// matchLabelKeys, and the path is the term's own indexed, as kube-apiserver writes them.
void TermErrors(const std::string& path, const Json& term, FieldErrorList& out) {
  const Json* selector = SelectorOf(term);
  const std::vector<std::string> match = Strings(term, "matchLabelKeys");
  const std::vector<std::string> mismatch = Strings(term, "mismatchLabelKeys");
  KeyListErrors(path + ".matchLabelKeys", match, selector, out);
  KeyListErrors(path + ".mismatchLabelKeys", mismatch, selector, out);
  if (selector != nullptr) {
    std::map<std::string, size_t> last_index;
    for (size_t i = 0; i < match.size(); ++i) last_index[match[i]] = i;
    std::set<std::string> seen;
    if (const Json* labels = Member(*selector, "matchLabels"); labels && labels->is_object()) {
      for (auto it = labels->begin(); it != labels->end(); ++it) seen.insert(it.key());
    }
    if (const Json* exprs = Member(*selector, "matchExpressions"); exprs && exprs->is_array()) {
      for (const Json& e : *exprs) {
        const Json* k = Member(e, "key");
        const std::string key = k != nullptr && k->is_string() ? k->get<std::string>() : "";
        if (auto at = last_index.find(key); at != last_index.end() && seen.count(key)) {
          out.push_back(
              {FieldErrorType::kInvalid, fmt::format("{}[{}]", path, at->second),
               fmt::format("{}: exists in both matchLabelKeys and labelSelector", Quoted(key))});
        }
        seen.insert(key);
      }
    }
  }
  const std::set<std::string> mismatch_set(mismatch.begin(), mismatch.end());
  for (size_t i = 0; i < match.size(); ++i) {
    if (mismatch_set.count(match[i])) {
      out.push_back({FieldErrorType::kInvalid, fmt::format("{}.matchLabelKeys[{}]", path, i),
                     fmt::format("{}: exists in both matchLabelKeys and mismatchLabelKeys",
                                 Quoted(match[i]))});
    }
  }
}

// Where `r`'s objects keep a pod spec, as a dotted path; empty for kinds without one.
std::string PodSpecPath(const ResourceInfo& r) {
  if (r.group.empty() && r.plural == "pods") return "spec";
  if (r.group.empty() && r.plural == "podtemplates") return "template.spec";
  if (r.group.empty() && r.plural == "replicationcontrollers") return "spec.template.spec";
  if (r.group == "apps" && r.plural != "controllerrevisions") return "spec.template.spec";
  if (r.group == "batch" && r.plural == "jobs") return "spec.template.spec";
  if (r.group == "batch" && r.plural == "cronjobs") return "spec.jobTemplate.spec.template.spec";
  return "";
}

}  // namespace

void MergeLabelKeys(Json& pod) {
  Json* spec = Member(pod, "spec");
  if (spec == nullptr) return;
  static const Json kNoLabels = Json::object();
  const Json* meta = Member(pod, "metadata");
  const Json* labels = meta != nullptr ? Member(*meta, "labels") : nullptr;
  const Json& pod_labels = labels != nullptr && labels->is_object() ? *labels : kNoLabels;
  auto merge = [&](Json& term, const std::string&) { MergeTerm(term, pod_labels); };
  ForEachAffinityTerm(*spec, "spec", merge);
  ForEachSpreadConstraint(*spec, "spec", merge);
}

FieldErrorList LabelKeyErrors(const Json& spec, const std::string& field) {
  FieldErrorList out;
  auto check = [&](const Json& term, const std::string& path) { TermErrors(path, term, out); };
  ForEachAffinityTerm(spec, field, check);
  ForEachSpreadConstraint(spec, field, check);
  return out;
}

VoidResult CheckLabelKeys(const ResourceInfo& r, const Json& obj) {
  const std::string path = PodSpecPath(r);
  const Json* spec = path.empty() ? nullptr : FieldAt(obj, path);
  if (spec == nullptr || !spec->is_object()) return {};
  FieldErrorList errors = LabelKeyErrors(*spec, path);
  if (errors.empty()) return {};
  // An aggregate says each message once (InvalidObject).
  return InvalidObject(r.kind, FieldValue(obj, "metadata.name"), std::move(errors));
}

}  // namespace berth::apiserver
