#include "berth/api/selectors.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <string>
#include <utility>

#include "api/label_selector.h"
#include "api/tolerations.h"
#include "api/validation.h"

namespace berth {
namespace {

std::string Quote(std::string_view s) {
  std::string out = "\"";
  out.append(s);
  out.push_back('"');
  return out;
}

// Validates a requirement the way labels.NewRequirement does; returns the reason on failure.
std::optional<std::string> CheckRequirement(std::string_view key, std::string_view op,
                                            const std::vector<std::string>& values) {
  if (!validation::IsQualifiedName(key)) {
    return "key " + Quote(key) + ": must be a valid qualified name";
  }
  if (op == "In" || op == "NotIn") {
    if (values.empty())
      return "key " + Quote(key) + ": for 'in', 'notin' operators, values set can't be empty";
  } else if (op == "Exists" || op == "DoesNotExist") {
    if (!values.empty()) {
      return "key " + Quote(key) + ": values set must be empty for exists and does not exist";
    }
  } else if (op == "Gt" || op == "Lt") {
    if (values.size() != 1) {
      return "key " + Quote(key) + ": for 'Gt', 'Lt' operators, exactly one value is required";
    }
    int64_t ignored = 0;
    if (!labels::ParseInt64(values[0], ignored)) {
      return "key " + Quote(key) + ": for 'Gt', 'Lt' operators, the value must be an integer";
    }
  } else {
    return Quote(op) + " is not a valid label selector operator";
  }
  for (const std::string& v : values) {
    if (!validation::IsValidLabelValue(v)) {
      return "key " + Quote(key) + ": invalid label value " + Quote(v);
    }
  }
  return std::nullopt;
}

// Evaluates one (already validated) node selector requirement against node labels.
bool NodeRequirementMatches(const NodeSelectorRequirement& r, const Labels& labels) {
  const std::string_view op = r.op;
  const labels::Op lop = op == "In"             ? labels::Op::kIn
                         : op == "NotIn"        ? labels::Op::kNotIn
                         : op == "Exists"       ? labels::Op::kExists
                         : op == "DoesNotExist" ? labels::Op::kDoesNotExist
                         : op == "Gt"           ? labels::Op::kGt
                                                : labels::Op::kLt;
  auto it = labels.find(r.key);
  return labels::Matches(lop, r.values, it != labels.end() ? &it->second : nullptr,
                         /*sorted=*/false);
}

bool NodeFieldRequirementValid(const NodeSelectorRequirement& r) {
  return (r.op == "In" || r.op == "NotIn") && r.values.size() == 1;
}

}  // namespace

// ---------------------------------------------------------------- CompiledSelector

CompiledSelector CompiledSelector::Everything() {
  CompiledSelector s;
  s.everything_ = true;
  return s;
}

Result<CompiledSelector> CompiledSelector::Compile(const LabelSelector& ls) {
  CompiledSelector s = Everything();
  s.reqs_.reserve(ls.match_labels.size() + ls.match_expressions.size());
  static const std::vector<std::string> kNoValues;
  for (const auto& [k, v] : ls.match_labels) {
    std::vector<std::string> values{v};
    if (auto err = CheckRequirement(k, "In", values)) return Error{*err};
    s.reqs_.push_back(Req{k, Req::Op::kIn, std::move(values)});
  }
  for (const LabelSelectorRequirement& e : ls.match_expressions) {
    Req::Op op;
    if (e.op == "In") {
      op = Req::Op::kIn;
    } else if (e.op == "NotIn") {
      op = Req::Op::kNotIn;
    } else if (e.op == "Exists") {
      op = Req::Op::kExists;
    } else if (e.op == "DoesNotExist") {
      op = Req::Op::kDoesNotExist;
    } else {
      return Error{Quote(e.op) + " is not a valid label selector operator"};
    }
    if (auto err = CheckRequirement(e.key, e.op, e.values)) return Error{*err};
    std::vector<std::string> values = e.values;
    std::sort(values.begin(), values.end());
    s.reqs_.push_back(Req{e.key, op, std::move(values)});
  }
  std::stable_sort(s.reqs_.begin(), s.reqs_.end(),
                   [](const Req& a, const Req& b) { return a.key < b.key; });
  return s;
}

CompiledSelector CompiledSelector::FromOptional(const std::optional<LabelSelector>& s) {
  if (!s) return Nothing();
  auto compiled = Compile(*s);
  if (!compiled.ok()) return Nothing();
  return std::move(compiled).value();
}

CompiledSelector CompiledSelector::FromSet(const Labels& set) {
  CompiledSelector s = Everything();
  s.reqs_.reserve(set.size());
  for (const auto& [k, v] : set) s.reqs_.push_back(Req{k, Req::Op::kIn, {v}});
  return s;
}

bool CompiledSelector::Matches(const Labels& labels) const {
  if (!everything_) return false;
  for (const Req& r : reqs_) {
    // Req::Op lists labels::Op's first four operators in the same order.
    static_assert(static_cast<int>(Req::Op::kDoesNotExist) ==
                  static_cast<int>(labels::Op::kDoesNotExist));
    auto it = labels.find(r.key);
    if (!labels::Matches(static_cast<labels::Op>(r.op), r.values,
                         it != labels.end() ? &it->second : nullptr, /*sorted=*/true)) {
      return false;
    }
  }
  return true;
}

void CompiledSelector::AddIn(std::string key, std::string value) {
  Req r{std::move(key), Req::Op::kIn, {std::move(value)}};
  auto pos = std::upper_bound(reqs_.begin(), reqs_.end(), r.key,
                              [](const std::string& k, const Req& x) { return k < x.key; });
  reqs_.insert(pos, std::move(r));
}

void CompiledSelector::AddNotIn(std::string key, std::string value) {
  Req r{std::move(key), Req::Op::kNotIn, {std::move(value)}};
  auto pos = std::upper_bound(reqs_.begin(), reqs_.end(), r.key,
                              [](const std::string& k, const Req& x) { return k < x.key; });
  reqs_.insert(pos, std::move(r));
}

// ---------------------------------------------------------------- node selectors

bool NodeSelectorTermMatches(const NodeSelectorTerm& term, const Node& node) {
  if (term.match_expressions.empty() && term.match_fields.empty()) return false;
  // A term that does not parse never matches, whatever the node.
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    if (CheckRequirement(r.key, r.op, r.values)) return false;
  }
  for (const NodeSelectorRequirement& r : term.match_fields) {
    if (!NodeFieldRequirementValid(r)) return false;
  }
  for (const NodeSelectorRequirement& r : term.match_expressions) {
    if (!NodeRequirementMatches(r, node.metadata.labels)) return false;
  }
  // Field requirements are only checked when the node has a name, as kube-scheduler does.
  if (!term.match_fields.empty() && !node.metadata.name.empty()) {
    for (const NodeSelectorRequirement& r : term.match_fields) {
      std::string_view field_value =
          r.key == "metadata.name" ? std::string_view(node.metadata.name) : std::string_view();
      const bool equal = field_value == r.values[0];
      if (r.op == "In" ? !equal : equal) return false;
    }
  }
  return true;
}

bool NodeSelectorMatches(const NodeSelector& selector, const Node& node) {
  for (const NodeSelectorTerm& term : selector.terms) {
    if (NodeSelectorTermMatches(term, node)) return true;
  }
  return false;
}

bool PodMatchesNodeSelectorAndAffinityTerms(const Pod& pod, const Node& node) {
  const Labels& labels = node.metadata.labels;
  for (const auto& [k, v] : pod.spec.node_selector) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  const auto& affinity = pod.spec.affinity;
  if (affinity && affinity->node_affinity && affinity->node_affinity->required) {
    return NodeSelectorMatches(*affinity->node_affinity->required, node);
  }
  return true;
}

// ---------------------------------------------------------------- taints

std::optional<int64_t> ParseTaintInteger(std::string_view value) {
  // Kubernetes' content.IsDecimalInteger: "0", or an optional '-' and no leading zero.
  std::string_view digits = value;
  if (!digits.empty() && digits.front() == '-') digits.remove_prefix(1);
  if (digits.empty() || (digits.front() == '0' && value != "0")) return std::nullopt;
  for (char c : digits)
    if (c < '0' || c > '9') return std::nullopt;
  int64_t out = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
  if (ec != std::errc() || end != value.data() + value.size()) return std::nullopt;  // range
  return out;
}

bool TolerationToleratesTaint(const Toleration& t, const Taint& taint, bool comparison_operators) {
  if (!t.effect.empty() && t.effect != taint.effect) return false;
  if (!t.key.empty() && t.key != taint.key) return false;
  if (t.op.empty() || t.op == "Equal") return t.value == taint.value;
  if (t.op == "Exists") return true;
  if ((t.op != "Lt" && t.op != "Gt") || !comparison_operators) return false;
  const std::optional<int64_t> bound = ParseTaintInteger(t.value);
  const std::optional<int64_t> value = ParseTaintInteger(taint.value);
  if (!bound || !value) return false;
  return t.op == "Lt" ? *value < *bound : *value > *bound;
}

bool TolerationToleratesTaint(const Toleration& t, const Taint& taint) {
  return TolerationToleratesTaint(t, taint, false);
}

const Taint* FindUntoleratedTaint(std::span<const Taint> taints,
                                  std::span<const Toleration> tolerations,
                                  bool (*effect_filter)(const Taint&)) {
  return FindUntoleratedTaint(taints, tolerations, effect_filter, false);
}

const Taint* FindUntoleratedTaint(std::span<const Taint> taints,
                                  std::span<const Toleration> tolerations,
                                  bool (*effect_filter)(const Taint&), bool comparison_operators) {
  for (const Taint& taint : taints) {
    if (effect_filter != nullptr && !effect_filter(taint)) continue;
    bool tolerated = false;
    for (const Toleration& t : tolerations) {
      if (TolerationToleratesTaint(t, taint, comparison_operators)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) return &taint;
  }
  return nullptr;
}

bool IsScheduleBlockingTaint(const Taint& t) {
  return t.effect == "NoSchedule" || t.effect == "NoExecute";
}

}  // namespace berth
