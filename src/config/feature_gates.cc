#include "config/feature_gates.h"

#include <fmt/format.h>

#include <algorithm>

namespace berth::config {
namespace {

constexpr std::string_view kAllAlpha = "AllAlpha";
constexpr std::string_view kAllBeta = "AllBeta";

std::string_view TrimSpace(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// Go's strconv.ParseBool, with its error text.
Result<bool> ParseGoBool(std::string_view v) {
  if (v == "1" || v == "t" || v == "T" || v == "TRUE" || v == "true" || v == "True") return true;
  if (v == "0" || v == "f" || v == "F" || v == "FALSE" || v == "false" || v == "False")
    return false;
  std::string quoted;
  for (char c : v) {
    if (c == '"' || c == '\\') quoted.push_back('\\');
    quoted.push_back(c);
  }
  return Error{fmt::format("strconv.ParseBool: parsing \"{}\": invalid syntax", quoted),
               ErrorCode::kInvalid};
}

std::string_view GoBool(bool v) { return v ? "true" : "false"; }

using GateMap = std::map<std::string, bool, std::less<>>;

bool EnabledIn(const GateMap& enabled, std::string_view name) {
  if (auto it = enabled.find(name); it != enabled.end()) return it->second;
  const FeatureGateSpec* spec = FindFeatureGate(name);
  return spec != nullptr && spec->default_value;
}

// AllAlpha / AllBeta: every gate of that stage not set explicitly takes the value.
void SetUnsetOfStage(FeatureStage stage, bool value, GateMap* enabled) {
  for (const FeatureGateSpec& g : KnownFeatureGates()) {
    if (g.name == kAllAlpha || g.name == kAllBeta || g.stage != stage) continue;
    enabled->emplace(std::string(g.name), value);
  }
}

// upstream's unsafeSetFromMap: resolves the raw gates into `enabled`, or returns the errors.
std::vector<std::string> Resolve(const GateMap& raw, GateMap* enabled,
                                 std::vector<std::string>* warnings) {
  std::vector<std::string> errors;
  // Explicit values first so that AllAlpha / AllBeta fill in only what they leave unset.
  for (const auto& [name, value] : raw) {
    const FeatureGateSpec* spec = FindFeatureGate(name);
    // The first unknown gate ends validation, as upstream's early return does.
    if (spec == nullptr) return {fmt::format("unrecognized feature gate: {}", name)};
    if (spec->lock_to_default && spec->default_value != value) {
      errors.push_back(fmt::format("cannot set feature gate {} to {}, feature is locked to {}",
                                   name, GoBool(value), GoBool(spec->default_value)));
      continue;
    }
    if (name == kAllAlpha || name == kAllBeta) continue;
    (*enabled)[name] = value;
    if (spec->stage == FeatureStage::kDeprecated) {
      warnings->push_back(fmt::format(
          "Setting deprecated feature gate {}={}. It will be removed in a future release.", name,
          GoBool(value)));
    } else if (spec->stage == FeatureStage::kGA) {
      warnings->push_back(
          fmt::format("Setting GA feature gate {}={}. It will be removed in a future release.",
                      name, GoBool(value)));
    }
  }
  if (!errors.empty()) return errors;
  for (auto [special, stage] :
       {std::pair{kAllAlpha, FeatureStage::kAlpha}, std::pair{kAllBeta, FeatureStage::kBeta}}) {
    if (auto it = raw.find(special); it != raw.end()) {
      SetUnsetOfStage(stage, it->second, enabled);
      (*enabled)[std::string(special)] = it->second;
    }
  }
  for (const FeatureGateDependency& dep : FeatureGateDependencies()) {
    if (!EnabledIn(*enabled, dep.feature)) continue;
    std::vector<std::string_view> disabled;
    for (std::string_view need : dep.requires_enabled)
      if (!EnabledIn(*enabled, need)) disabled.push_back(need);
    if (!disabled.empty()) {
      // Go prints a slice as [A B].
      errors.push_back(fmt::format("{} is enabled, but depends on features that are disabled: [{}]",
                                   dep.feature, fmt::join(disabled, " ")));
    }
  }
  return errors;
}

}  // namespace

std::string_view FeatureStageName(FeatureStage stage) {
  switch (stage) {
    case FeatureStage::kAlpha:
      return "ALPHA";
    case FeatureStage::kBeta:
      return "BETA";
    case FeatureStage::kGA:
      return "GA";
    case FeatureStage::kDeprecated:
      return "DEPRECATED";
  }
  return "";
}

VoidResult FeatureGates::Set(std::string_view value, std::vector<std::string>* warnings) {
  GateMap given;
  size_t start = 0;
  while (start <= value.size()) {
    size_t comma = value.find(',', start);
    if (comma == std::string_view::npos) comma = value.size();
    std::string_view item = value.substr(start, comma - start);
    start = comma + 1;
    if (item.empty()) continue;
    const size_t eq = item.find('=');
    std::string_view key = TrimSpace(item.substr(0, eq));
    if (eq == std::string_view::npos) {
      return Error{fmt::format("missing bool value for {}", key), ErrorCode::kInvalid};
    }
    std::string_view text = TrimSpace(item.substr(eq + 1));
    auto parsed = ParseGoBool(text);
    if (!parsed.ok()) {
      return Error{
          fmt::format("invalid value of {}={}, err: {}", key, text, parsed.error().message),
          ErrorCode::kInvalid};
    }
    given[std::string(key)] = *parsed;
  }
  GateMap raw = raw_;
  for (auto& [k, v] : given) raw[k] = v;
  GateMap enabled;
  std::vector<std::string> notes;
  std::vector<std::string> errors = Resolve(raw, &enabled, &notes);
  if (errors.size() == 1) return Error{errors[0], ErrorCode::kInvalid};
  if (!errors.empty()) {
    // An aggregate of several errors reads [a, b].
    return Error{fmt::format("[{}]", fmt::join(errors, ", ")), ErrorCode::kInvalid};
  }
  raw_ = std::move(raw);
  enabled_ = std::move(enabled);
  warnings->insert(warnings->end(), notes.begin(), notes.end());
  return {};
}

bool FeatureGates::Enabled(std::string_view name) const { return EnabledIn(enabled_, name); }

std::string FeatureGates::FlagValue() const {
  std::string out;
  for (const auto& [name, value] : raw_) {
    if (!out.empty()) out.push_back(',');
    out += fmt::format("{}={}", name, GoBool(value));
  }
  return out;
}

Result<FeatureGates> ParseFeatureGatesFlags(const std::vector<std::string>& values,
                                            std::vector<std::string>* warnings) {
  FeatureGates gates;
  for (const std::string& v : values) {
    if (VoidResult r = gates.Set(v, warnings); !r.ok()) {
      return Error{fmt::format("invalid argument \"{}\" for \"--feature-gates\" flag: {}", v,
                               r.error().message),
                   ErrorCode::kInvalid};
    }
  }
  return gates;
}

}  // namespace berth::config
