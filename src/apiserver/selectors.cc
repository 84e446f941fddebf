#include "apiserver/selectors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "api/label_selector.h"

namespace berth::apiserver {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// Splits on commas outside parentheses.
std::vector<std::string_view> SplitTerms(std::string_view text) {
  std::vector<std::string_view> out;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      auto t = Trim(text.substr(start, i - start));
      if (!t.empty()) out.push_back(t);
      start = i + 1;
    } else if (text[i] == '(') {
      ++depth;
    } else if (text[i] == ')') {
      --depth;
    }
  }
  return out;
}

const nlohmann::json* Labels(const nlohmann::json& obj) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return nullptr;
  auto l = m->find("labels");
  if (l == m->end() || !l->is_object()) return nullptr;
  return &*l;
}

// A label's value (null when absent or not a string).
const std::string* LabelValue(const nlohmann::json* labels, const std::string& key) {
  if (labels == nullptr) return nullptr;
  auto it = labels->find(key);
  if (it == labels->end() || !it->is_string()) return nullptr;
  return &it->get_ref<const std::string&>();
}

// One requirement of a selector in label-selector syntax, as kube-apiserver prints it.
std::string Requirement(const nlohmann::json& expr) {
  const std::string key = FieldValue(expr, "key");
  const std::string op = FieldValue(expr, "operator");
  std::vector<std::string> values;
  if (auto it = expr.find("values"); it != expr.end() && it->is_array()) {
    for (const auto& v : *it)
      if (v.is_string()) values.push_back(v.get<std::string>());
  }
  std::sort(values.begin(), values.end());
  if (op == "Exists") return key;
  if (op == "DoesNotExist") return "!" + key;
  const std::string list = fmt::format("{}", fmt::join(values, ","));
  if (op == "In") return fmt::format("{} in ({})", key, list);
  if (op == "NotIn") return fmt::format("{} notin ({})", key, list);
  return fmt::format("{} {} ({})", key, op, list);
}

}  // namespace

const nlohmann::json* FieldAt(const nlohmann::json& obj, std::string_view path) {
  const nlohmann::json* cur = &obj;
  while (!path.empty()) {
    size_t dot = path.find('.');
    if (!cur->is_object()) return nullptr;
    auto it = cur->find(path.substr(0, dot));
    if (it == cur->end()) return nullptr;
    cur = &*it;
    if (dot == std::string_view::npos) break;
    path.remove_prefix(dot + 1);
  }
  return cur;
}

std::string FieldValue(const nlohmann::json& obj, std::string_view path) {
  const nlohmann::json* cur = FieldAt(obj, path);
  if (cur == nullptr) return "";
  if (cur->is_string()) return cur->get<std::string>();
  if (cur->is_boolean()) return cur->get<bool>() ? "true" : "false";
  if (cur->is_number()) return cur->dump();
  return "";
}

Result<ObjectFilter> ParseLabelSelector(std::string_view text) {
  BERTH_TRY_ASSIGN(reqs, labels::ParseSelectorText(text));
  if (reqs.empty()) return ObjectFilter();
  return ObjectFilter([reqs = std::move(reqs)](const nlohmann::json& obj) {
    const nlohmann::json* labels = Labels(obj);
    for (const auto& r : reqs) {
      if (!labels::Matches(r.op, r.values, LabelValue(labels, r.key), /*sorted=*/true)) {
        return false;
      }
    }
    return true;
  });
}

Result<ObjectFilter> ParseFieldSelector(const ResourceInfo& r, std::string_view text) {
  struct FieldReq {
    std::string path, value;
    bool negate;
  };
  std::vector<std::string> allowed = {"metadata.name", "metadata.namespace"};
  if (r.group.empty() && r.plural == "pods") {
    allowed.insert(allowed.end(), {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                                   "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                                   "status.podIP", "status.nominatedNodeName"});
  } else if (r.group.empty() && r.plural == "nodes") {
    allowed.push_back("spec.unschedulable");
  } else if (r.plural == "events") {
    allowed.insert(
        allowed.end(),
        {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
         "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
         "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type",
         "regarding.kind", "regarding.name", "regarding.namespace", "regarding.uid"});
  } else if (r.plural == "namespaces") {
    allowed.push_back("status.phase");
  } else if (r.group.empty() && r.plural == "secrets") {
    allowed.push_back("type");
  } else if (r.group.empty() && r.plural == "services") {
    allowed.insert(allowed.end(), {"spec.clusterIP", "spec.type"});
  } else if ((r.group.empty() && r.plural == "replicationcontrollers") ||
             (r.group == "apps" && r.plural == "replicasets")) {
    allowed.push_back("status.replicas");
  } else if (r.group == "resource.k8s.io" && r.plural == "resourceslices") {
    allowed.insert(allowed.end(), {"spec.nodeName", "spec.driver"});
  }
  std::vector<FieldReq> reqs;
  for (auto term : SplitTerms(text)) {
    FieldReq f;
    size_t op = term.find("!=");
    size_t len = 2;
    f.negate = op != std::string_view::npos;
    if (!f.negate) {
      op = term.find("==");
      if (op == std::string_view::npos) {
        op = term.find('=');
        len = 1;
      }
    }
    if (op == std::string_view::npos) {
      return Error{fmt::format("invalid field selector: {}", term), ErrorCode::kBadRequest};
    }
    f.path = std::string(Trim(term.substr(0, op)));
    f.value = std::string(Trim(term.substr(op + len)));
    if (std::find(allowed.begin(), allowed.end(), f.path) == allowed.end()) {
      return Error{fmt::format("field label not supported: {}", f.path), ErrorCode::kBadRequest};
    }
    // Events have no "source" string: kube-apiserver maps it to source.component.
    if (f.path == "source") f.path = "source.component";
    reqs.push_back(std::move(f));
  }
  if (reqs.empty()) return ObjectFilter();
  return ObjectFilter([reqs = std::move(reqs)](const nlohmann::json& obj) {
    for (const auto& f : reqs) {
      std::string value = FieldValue(obj, f.path);
      // kube-apiserver's field sets hold an unset boolean as "false".
      if (value.empty() && (f.path == "spec.hostNetwork" || f.path == "spec.unschedulable")) {
        value = "false";
      } else if (value.empty() && f.path == "status.replicas") {
        value = "0";
      }
      if ((value == f.value) == f.negate) return false;
    }
    return true;
  });
}

std::string FormatSelector(const nlohmann::json& selector) {
  if (!selector.is_object()) return {};
  std::vector<std::pair<std::string, std::string>> parts;  // key, requirement
  const bool label_selector =
      selector.contains("matchLabels") || selector.contains("matchExpressions") || selector.empty();
  const nlohmann::json* labels = label_selector ? nullptr : &selector;
  if (label_selector) {
    if (auto it = selector.find("matchLabels"); it != selector.end() && it->is_object())
      labels = &*it;
    if (auto it = selector.find("matchExpressions"); it != selector.end() && it->is_array()) {
      for (const auto& e : *it)
        if (e.is_object()) parts.emplace_back(FieldValue(e, "key"), Requirement(e));
    }
  }
  if (labels != nullptr) {
    for (const auto& [k, v] : labels->items())
      parts.emplace_back(k, k + "=" + (v.is_string() ? v.get<std::string>() : v.dump()));
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  for (const auto& [key, text] : parts) {
    if (!out.empty()) out += ",";
    out += text;
  }
  return out;
}

}  // namespace berth::apiserver
