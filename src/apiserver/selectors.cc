#include "apiserver/selectors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <vector>

#include "api/validation.h"

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

struct LabelReq {
  enum class Op { kEq, kNotEq, kIn, kNotIn, kExists, kNotExists, kGt, kLt } op;
  std::string key;
  std::vector<std::string> values;
};

const nlohmann::json* Labels(const nlohmann::json& obj) {
  auto m = obj.find("metadata");
  if (m == obj.end() || !m->is_object()) return nullptr;
  auto l = m->find("labels");
  if (l == m->end() || !l->is_object()) return nullptr;
  return &*l;
}

bool MatchLabel(const LabelReq& r, const nlohmann::json* labels) {
  const nlohmann::json* value = nullptr;
  if (labels) {
    auto it = labels->find(r.key);
    if (it != labels->end() && it->is_string()) value = &*it;
  }
  auto in = [&] {
    return value && std::find(r.values.begin(), r.values.end(),
                              value->get_ref<const std::string&>()) != r.values.end();
  };
  switch (r.op) {
    case LabelReq::Op::kEq:
    case LabelReq::Op::kIn:
      return in();
    case LabelReq::Op::kNotEq:
    case LabelReq::Op::kNotIn:
      return !in();
    case LabelReq::Op::kExists:
      return value != nullptr;
    case LabelReq::Op::kNotExists:
      return value == nullptr;
    case LabelReq::Op::kGt:
    case LabelReq::Op::kLt: {
      if (!value) return false;
      char* end = nullptr;
      const std::string& s = value->get_ref<const std::string&>();
      long long v = std::strtoll(s.c_str(), &end, 10);
      if (end == s.c_str() || *end) return false;
      long long bound = std::strtoll(r.values[0].c_str(), nullptr, 10);
      return r.op == LabelReq::Op::kGt ? v > bound : v < bound;
    }
  }
  return false;
}

Error BadSelector(std::string_view text, std::string_view why) {
  return Error{fmt::format("unable to parse requirement: {}: {}", text, why),
               ErrorCode::kBadRequest};
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
  std::vector<LabelReq> reqs;
  for (auto term : SplitTerms(text)) {
    LabelReq r;
    if (term.front() == '!') {
      r.op = LabelReq::Op::kNotExists;
      r.key = std::string(Trim(term.substr(1)));
    } else if (auto p = term.find(" notin "); p != std::string_view::npos) {
      r.op = LabelReq::Op::kNotIn;
      r.key = std::string(Trim(term.substr(0, p)));
      term = Trim(term.substr(p + 7));
    } else if (auto q = term.find(" in "); q != std::string_view::npos) {
      r.op = LabelReq::Op::kIn;
      r.key = std::string(Trim(term.substr(0, q)));
      term = Trim(term.substr(q + 4));
    } else if (auto ne = term.find("!="); ne != std::string_view::npos) {
      r.op = LabelReq::Op::kNotEq;
      r.key = std::string(Trim(term.substr(0, ne)));
      r.values.emplace_back(Trim(term.substr(ne + 2)));
    } else if (auto eq = term.find('='); eq != std::string_view::npos) {
      r.op = LabelReq::Op::kEq;
      r.key = std::string(Trim(term.substr(0, eq)));
      size_t skip = (eq + 1 < term.size() && term[eq + 1] == '=') ? 2 : 1;
      r.values.emplace_back(Trim(term.substr(eq + skip)));
    } else if (auto gt = term.find_first_of("<>"); gt != std::string_view::npos) {
      r.op = term[gt] == '>' ? LabelReq::Op::kGt : LabelReq::Op::kLt;
      r.key = std::string(Trim(term.substr(0, gt)));
      r.values.emplace_back(Trim(term.substr(gt + 1)));
    } else {
      r.op = LabelReq::Op::kExists;
      r.key = std::string(term);
    }
    if (r.op == LabelReq::Op::kIn || r.op == LabelReq::Op::kNotIn) {
      if (term.size() < 2 || term.front() != '(' || term.back() != ')') {
        return BadSelector(text, "expected a set of values in parentheses");
      }
      for (auto v : SplitTerms(term.substr(1, term.size() - 2))) r.values.emplace_back(v);
    }
    if (r.key.empty() || r.key.find_first_of(" ()") != std::string::npos) {
      return BadSelector(text, "invalid label key");
    }
    // kube-apiserver checks each key and value as labels' own rules do.
    if (std::string problem = validation::QualifiedNameProblem(r.key); !problem.empty()) {
      return Error{fmt::format("unable to parse requirement: key: Invalid value: \"{}\": {}", r.key,
                               problem),
                   ErrorCode::kBadRequest};
    }
    for (size_t i = 0; i < r.values.size(); ++i) {
      std::string problem = validation::LabelValueProblem(r.values[i]);
      if (problem.empty() && (r.op == LabelReq::Op::kGt || r.op == LabelReq::Op::kLt)) {
        const std::string& v = r.values[i];
        int64_t n;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
        if (v.empty() || ec != std::errc() || end != v.data() + v.size()) {
          problem = "for 'Gt', 'Lt' operators, the value must be an integer";
        }
      }
      if (!problem.empty()) {
        return Error{fmt::format("unable to parse requirement: values[{}][{}]: Invalid value: "
                                 "\"{}\": {}",
                                 i, r.key, r.values[i], problem),
                     ErrorCode::kBadRequest};
      }
    }
    reqs.push_back(std::move(r));
  }
  if (reqs.empty()) return ObjectFilter();
  return ObjectFilter([reqs = std::move(reqs)](const nlohmann::json& obj) {
    const nlohmann::json* labels = Labels(obj);
    for (const auto& r : reqs) {
      if (!MatchLabel(r, labels)) return false;
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
