#include "config/policy.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>

#include "api/codec.h"
#include "api/read_file.h"
#include "api/text.h"
#include "config/in_tree_plugins.h"
#include "config/load.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace {

using nlohmann::json;

Error Problem(std::string_view source, std::string_view path, std::string_view what) {
  return Error{fmt::format("{}: {}: {}", source, path, what), ErrorCode::kInvalid};
}

// Field `name` of a legacy object, matched in any letter case (the legacy API decoded so).
const json* Get(const json& obj, std::string_view name) {
  if (!obj.is_object()) return nullptr;
  for (auto it = obj.begin(); it != obj.end(); ++it)
    if (EqualsIgnoreCase(it.key(), name)) return it->is_null() ? nullptr : &*it;
  return nullptr;
}

// The legacy extender spelling (enableHttps, httpTimeout in nanoseconds) in v1's.
Result<json> TranslateExtender(const json& e, std::string_view source, const std::string& path) {
  if (!e.is_object()) return Problem(source, path, "expected an object");
  json out = json::object();
  static const std::pair<std::string_view, std::string_view> kCopied[] = {
      {"urlPrefix", "urlPrefix"},
      {"filterVerb", "filterVerb"},
      {"preemptVerb", "preemptVerb"},
      {"prioritizeVerb", "prioritizeVerb"},
      {"weight", "weight"},
      {"bindVerb", "bindVerb"},
      {"enableHttps", "enableHTTPS"},
      {"tlsConfig", "tlsConfig"},
      {"nodeCacheCapable", "nodeCacheCapable"},
      {"managedResources", "managedResources"},
      {"ignorable", "ignorable"}};
  std::set<std::string> known;
  for (const auto& [legacy, v1] : kCopied) {
    known.insert(std::string(legacy));
    if (const json* v = Get(e, legacy)) out[std::string(v1)] = *v;
  }
  known.insert("httpTimeout");
  if (const json* t = Get(e, "httpTimeout")) {
    if (!t->is_number_integer() || t->get<int64_t>() < 0)
      return Problem(source, path + ".httpTimeout",
                     "expected nanoseconds (a non-negative integer)");
    const int64_t ns = t->get<int64_t>();
    if (ns > 0) out["httpTimeout"] = fmt::format("{}ms", std::max<int64_t>(1, ns / 1000000));
  }
  for (auto it = e.begin(); it != e.end(); ++it) {
    bool ok = false;
    for (const auto& k : known) ok = ok || EqualsIgnoreCase(it.key(), k);
    if (!ok) return Problem(source, path + "." + it.key(), "unknown field");
  }
  return out;
}

}  // namespace

bool IsPolicy(const json& doc) {
  return doc.is_object() && doc.contains("kind") && doc["kind"] == kPolicyKind;
}

namespace {
Result<PolicyTranslation> TranslatePolicyOrThrow(const json& doc, std::string_view source,
                                                 const Registry& registry);
}  // namespace

Result<PolicyTranslation> TranslatePolicy(const json& doc, std::string_view source,
                                          const Registry& registry) {
  // A field of an unexpected type makes nlohmann throw; report it instead.
  try {
    return TranslatePolicyOrThrow(doc, source, registry);
  } catch (const json::exception& e) {
    return Problem(source, "(document)", fmt::format("unexpected value: {}", e.what()));
  }
}

namespace {

// Translates one Policy document: its predicates to filter plugins, its priorities to weighted
// score plugins (with the args their arguments carry), then one v1 profile.
class PolicyTranslator {
 public:
  PolicyTranslator(const json& doc, std::string_view source, const Registry& registry)
      : doc_(doc), source_(source), registry_(registry) {}

  Result<PolicyTranslation> Translate() {
    if (auto r = CheckFields(); !r.ok()) return r.error();
    if (auto r = TranslatePredicates(); !r.ok()) return r.error();
    if (auto r = TranslatePriorities(); !r.ok()) return r.error();
    auto profile = BuildProfile();
    if (!profile.ok()) return profile.error();
    return Finish(std::move(profile).value());
  }

 private:
  VoidResult CheckFields() {
    if (!IsPolicy(doc_)) return Problem(source_, "kind", "expected \"Policy\"");
    if (const json* v = Get(doc_, "apiVersion"); v && *v != "v1")
      return Problem(
          source_, "apiVersion",
          fmt::format("unsupported value {} for kind Policy: supported \"v1\"", v->dump()));
    for (auto it = doc_.begin(); it != doc_.end(); ++it) {
      static const std::string_view kKnown[] = {"kind",
                                                "apiVersion",
                                                "predicates",
                                                "priorities",
                                                "extenders",
                                                "hardPodAffinitySymmetricWeight",
                                                "alwaysCheckAllPredicates"};
      if (std::none_of(std::begin(kKnown), std::end(kKnown),
                       [&](std::string_view k) { return EqualsIgnoreCase(it.key(), k); }))
        return Problem(source_, it.key(), "unknown field");
    }
    return {};
  }

  void AddFilter(std::string_view p) {
    if (std::find(filters_.begin(), filters_.end(), p) == filters_.end()) filters_.emplace_back(p);
  }
  void AddScore(std::string_view p, int64_t w) {
    for (auto& [name, weight] : scores_) {
      if (name == p) {
        weight += w;
        return;
      }
    }
    scores_.emplace_back(p, w);
  }
  VoidResult UseFit(std::string_view strategy, const std::string& path) {
    if (!fit_strategy_.empty() && fit_strategy_ != strategy)
      return Problem(source_, path,
                     fmt::format("{} cannot be combined with {}: one resource scoring strategy "
                                 "per profile",
                                 strategy, fit_strategy_));
    fit_strategy_ = std::string(strategy);
    return {};
  }

  VoidResult TranslatePredicates() {
    const json* predicates = Get(doc_, "predicates");
    if (predicates && !predicates->is_array())
      return Problem(source_, "predicates", "expected a list");
    if (!predicates) {
      t_.notes.push_back("predicates absent: the legacy default set");
      for (const auto& m : PolicyPredicates()) {
        if (!m.in_default_set) continue;
        for (auto p : m.plugins) AddFilter(p);
        if (m.plugins.empty()) t_.notes.push_back(fmt::format("dropped {}: {}", m.name, m.note));
      }
    } else {
      // Listed predicates run in kube-scheduler's fixed order, custom ones after.
      std::vector<std::string> custom;
      std::set<std::string> listed;
      for (size_t i = 0; i < predicates->size(); ++i) {
        const std::string path = fmt::format("predicates[{}]", i);
        const json& p = (*predicates)[i];
        const json* name = Get(p, "name");
        if (!name || !name->is_string() || name->get<std::string>().empty())
          return Problem(source_, path + ".name", "required value");
        const std::string n = name->get<std::string>();
        if (const json* arg = Get(p, "argument")) {
          if (const json* sa = Get(*arg, "serviceAffinity")) {
            // Any name with this argument is CheckServiceAffinity: the legacy ServiceAffinity.
            const json* labels = Get(*sa, "labels");
            if (!labels || !labels->is_array())
              return Problem(source_, path + ".argument.serviceAffinity.labels", "expected a list");
            json& list = service_affinity_["affinityLabels"];
            if (!list.is_array()) list = json::array();
            for (const json& l : *labels) list.push_back(l);
            custom.emplace_back(names::kServiceAffinity);
            t_.notes.push_back(fmt::format("predicate {} (serviceAffinity) -> {} (filter)", n,
                                           names::kServiceAffinity));
            continue;
          }
          if (const json* lp = Get(*arg, "labelsPresence")) {
            // Any name with this argument is CheckNodeLabelPresence: the legacy NodeLabel filter.
            const json* labels = Get(*lp, "labels");
            if (!labels || !labels->is_array())
              return Problem(source_, path + ".argument.labelsPresence.labels", "expected a list");
            const json* presence = Get(*lp, "presence");
            json& list =
                node_label_[presence && *presence == true ? "presentLabels" : "absentLabels"];
            if (!list.is_array()) list = json::array();
            for (const json& l : *labels) list.push_back(l);
            custom.emplace_back(names::kNodeLabel);
            t_.notes.push_back(
                fmt::format("predicate {} (labelsPresence) -> {} (filter)", n, names::kNodeLabel));
            continue;
          }
        }
        const bool known = std::any_of(PolicyPredicates().begin(), PolicyPredicates().end(),
                                       [&](const PolicyPredicate& m) { return m.name == n; });
        if (known) {
          listed.insert(n);
        } else if (registry_.Find(n)) {
          custom.push_back(n);
          t_.notes.push_back(fmt::format("custom predicate {} -> plugin {} (filter)", n, n));
        } else {
          return Problem(source_, path + ".name", fmt::format("unknown predicate \"{}\"", n));
        }
      }
      // The taint and unschedulable checks stay whatever the policy lists.
      for (const auto& m : PolicyPredicates()) {
        if (m.mandatory && listed.insert(std::string(m.name)).second)
          t_.notes.push_back(fmt::format("mandatory predicate {} kept", m.name));
      }
      for (const auto& m : PolicyPredicates()) {
        if (!listed.count(std::string(m.name))) continue;
        if (m.plugins.empty()) {
          t_.notes.push_back(fmt::format("dropped predicate {}: {}", m.name, m.note));
          continue;
        }
        for (auto p : m.plugins) AddFilter(p);
        t_.notes.push_back(
            fmt::format("predicate {} -> {} (filter)", m.name, fmt::join(m.plugins, ", ")));
      }
      for (const auto& c : custom) AddFilter(c);
    }

    return {};
  }

  VoidResult TranslatePriorities() {
    const json* priorities = Get(doc_, "priorities");
    if (priorities && !priorities->is_array())
      return Problem(source_, "priorities", "expected a list");
    if (!priorities) {
      UseDefaultPriorities();
      return {};
    }
    for (size_t i = 0; i < priorities->size(); ++i) {
      auto ok = TranslatePriority((*priorities)[i], fmt::format("priorities[{}]", i));
      if (!ok.ok()) return ok;
    }
    return {};
  }

  // No priorities in the policy: the legacy default set, at its default weights.
  void UseDefaultPriorities() {
    t_.notes.push_back("priorities absent: the legacy default set");
    t_.notes.push_back(
        "default set: SelectorSpreadPriority's spreading is PodTopologySpread's system defaults "
        "(as with DefaultPodTopologySpread, default since 1.20)");
    for (const auto& m : PolicyPriorities()) {
      if (m.default_weight <= 0) continue;
      if (m.plugin.empty()) {
        t_.notes.push_back(fmt::format("dropped {}: {}", m.name, m.note));
        continue;
      }
      if (!m.fit_strategy.empty()) (void)UseFit(m.fit_strategy, "priorities");
      AddScore(m.plugin, m.default_weight);
    }
  }

  // One entry of `priorities` (`path`): a known priority, an argument-defined one or a plugin.
  VoidResult TranslatePriority(const json& p, const std::string& path) {
    const json* name = Get(p, "name");
    if (!name || !name->is_string() || name->get<std::string>().empty())
      return Problem(source_, path + ".name", "required value");
    const std::string n = name->get<std::string>();
    const json* weight = Get(p, "weight");
    if (!weight || !weight->is_number_integer() || weight->get<int64_t>() <= 0)
      return Problem(source_, path + ".weight",
                     fmt::format("priority \"{}\" needs a positive weight", n));
    const int64_t w = weight->get<int64_t>();
    const json* arg = Get(p, "argument");
    if (const json* anti = arg ? Get(*arg, "serviceAntiAffinity") : nullptr) {
      const json* label = Get(*anti, "label");
      if (!label || !label->is_string())
        return Problem(source_, path + ".argument.serviceAntiAffinity.label", "expected a string");
      json& list = service_affinity_["antiAffinityLabelsPreference"];
      if (!list.is_array()) list = json::array();
      list.push_back(*label);
      AddScore(names::kServiceAffinity, w);
      t_.notes.push_back(fmt::format("priority {} (serviceAntiAffinity) -> {} (score, weight {})",
                                     n, names::kServiceAffinity, w));
      return {};
    }
    if (const json* pref = arg ? Get(*arg, "labelPreference") : nullptr) {
      // Any name with this argument is a label preference: the legacy NodeLabel score.
      const json* label = Get(*pref, "label");
      if (!label || !label->is_string())
        return Problem(source_, path + ".argument.labelPreference.label", "expected a string");
      const json* presence = Get(*pref, "presence");
      json& list = node_label_[presence && *presence == true ? "presentLabelsPreference"
                                                             : "absentLabelsPreference"];
      if (!list.is_array()) list = json::array();
      list.push_back(*label);
      AddScore(names::kNodeLabel, w);
      t_.notes.push_back(fmt::format("priority {} (labelPreference) -> {} (score, weight {})", n,
                                     names::kNodeLabel, w));
      return {};
    }
    auto m = std::find_if(PolicyPriorities().begin(), PolicyPriorities().end(),
                          [&](const PolicyPriority& x) { return x.name == n; });
    if (m == PolicyPriorities().end()) {
      if (!registry_.Find(n))
        return Problem(source_, path + ".name", fmt::format("unknown priority \"{}\"", n));
      AddScore(n, w);
      t_.notes.push_back(
          fmt::format("custom priority {} -> plugin {} (score, weight {})", n, n, w));
      return {};
    }
    if (m->plugin.empty()) {
      t_.notes.push_back(fmt::format("dropped priority {}: {}", n, m->note));
      return {};
    }
    if (!m->fit_strategy.empty()) {
      if (auto r = UseFit(m->fit_strategy, path + ".name"); !r.ok()) return r.error();
      if (m->fit_strategy == "RequestedToCapacityRatio") {
        const json* rtc = arg ? Get(*arg, "requestedToCapacityRatioArguments") : nullptr;
        if (!rtc)
          return Problem(source_, path + ".argument.requestedToCapacityRatioArguments",
                         "required value");
        fit_args_ = json::object();
        if (const json* shape = Get(*rtc, "shape")) {
          json points = json::array();
          for (const json& s : *shape)
            points.push_back(
                {{"utilization", s.value("utilization", 0)}, {"score", s.value("score", 0)}});
          fit_args_["shape"] = points;
        }
        if (const json* res = Get(*rtc, "resources")) fit_args_["resources"] = *res;
      }
    }
    AddScore(m->plugin, w);
    t_.notes.push_back(fmt::format("priority {} -> {} (score, weight {}){}", n, m->plugin, w,
                                   m->note.empty() ? "" : fmt::format(": {}", m->note)));
    return {};
  }

  // The v1 profile: the base plugins and every mapped plugin at MultiPoint, then each plugin
  // disabled at the points the policy did not ask for.
  Result<json> BuildProfile() {
    json multi_enabled = json::array();
    std::set<std::string> in_multi;
    auto enable = [&](const std::string& name, int64_t weight) {
      if (!in_multi.insert(name).second) return;
      json e = {{"name", name}};
      if (weight > 0) e["weight"] = weight;
      multi_enabled.push_back(std::move(e));
    };
    for (std::string_view b : PolicyBasePlugins()) enable(std::string(b), 0);
    for (const auto& f : filters_) {
      int64_t w = 0;
      for (const auto& [name, weight] : scores_)
        if (name == f) w = weight;
      enable(f, w);
    }
    for (const auto& [name, weight] : scores_) enable(name, weight);
    json not_filter = json::array(), not_score = json::array();
    for (const auto& [name, weight] : scores_)
      if (std::find(filters_.begin(), filters_.end(), name) == filters_.end())
        not_filter.push_back({{"name", name}});
    for (const auto& f : filters_) {
      const bool scored =
          std::any_of(scores_.begin(), scores_.end(), [&](const auto& s) { return s.first == f; });
      if (!scored) not_score.push_back({{"name", f}});
    }
    json plugins = {{"multiPoint", {{"enabled", multi_enabled}, {"disabled", {{{"name", "*"}}}}}}};
    if (!not_filter.empty()) {
      plugins["preFilter"] = {{"disabled", not_filter}};
      plugins["filter"] = {{"disabled", not_filter}};
    }
    if (!not_score.empty()) {
      plugins["preScore"] = {{"disabled", not_score}};
      plugins["score"] = {{"disabled", not_score}};
    }
    json profile = {{"schedulerName", std::string(kDefaultSchedulerName)}, {"plugins", plugins}};
    json plugin_config = json::array();
    if (!fit_strategy_.empty()) {
      json strategy = {{"type", fit_strategy_}};
      if (fit_strategy_ == "RequestedToCapacityRatio") {
        if (fit_args_.contains("resources")) strategy["resources"] = fit_args_["resources"];
        strategy["requestedToCapacityRatio"] = {{"shape", fit_args_.value("shape", json::array())}};
      }
      plugin_config.push_back(
          {{"name", names::kNodeResourcesFit}, {"args", {{"scoringStrategy", strategy}}}});
    }
    if (!node_label_.empty())
      plugin_config.push_back({{"name", names::kNodeLabel}, {"args", node_label_}});
    if (!service_affinity_.empty())
      plugin_config.push_back({{"name", names::kServiceAffinity}, {"args", service_affinity_}});
    if (const json* w = Get(doc_, "hardPodAffinitySymmetricWeight")) {
      if (!w->is_number_integer())
        return Problem(source_, "hardPodAffinitySymmetricWeight", "expected an integer");
      plugin_config.push_back(
          {{"name", names::kInterPodAffinity}, {"args", {{"hardPodAffinityWeight", *w}}}});
      t_.notes.push_back(fmt::format(
          "hardPodAffinitySymmetricWeight {} -> InterPodAffinity args hardPodAffinityWeight",
          w->dump()));
    }
    if (const json* all = Get(doc_, "alwaysCheckAllPredicates"); all && *all == true) {
      t_.notes.push_back(
          "alwaysCheckAllPredicates not honoured: filters stop at a node's first failure (the "
          "decision is the same; messages list one reason per node)");
    }
    if (!plugin_config.empty()) profile["pluginConfig"] = plugin_config;

    return profile;
  }

  Result<PolicyTranslation> Finish(json profile) {
    t_.config = {{"apiVersion", kConfigApiVersion},
                 {"kind", std::string(kConfigKind)},
                 {"profiles", json::array({profile})}};
    if (const json* extenders = Get(doc_, "extenders")) {
      if (!extenders->is_array()) return Problem(source_, "extenders", "expected a list");
      json out = json::array();
      for (size_t i = 0; i < extenders->size(); ++i) {
        auto e = TranslateExtender((*extenders)[i], source_, fmt::format("extenders[{}]", i));
        if (!e.ok()) return e.error();
        out.push_back(std::move(e).value());
      }
      if (!out.empty()) {
        t_.config["extenders"] = std::move(out);
        t_.notes.push_back(fmt::format("{} extender(s) in the v1 spelling", extenders->size()));
      }
    }
    return t_;
  }

  const json& doc_;
  std::string_view source_;
  const Registry& registry_;
  PolicyTranslation t_;
  std::vector<std::string> filters_;                     // filter plugins, in order
  std::vector<std::pair<std::string, int64_t>> scores_;  // score plugin -> weight
  std::string fit_strategy_;
  json fit_args_;                           // requestedToCapacityRatio arguments
  json node_label_ = json::object();        // NodeLabel args from labelsPresence / labelPreference
  json service_affinity_ = json::object();  // ServiceAffinity args
};

Result<PolicyTranslation> TranslatePolicyOrThrow(const json& doc, std::string_view source,
                                                 const Registry& registry) {
  return PolicyTranslator(doc, source, registry).Translate();
}
}  // namespace

bool IsPolicyFile(const std::string& path) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) return false;
  auto docs = ParseDocuments(*text, path);
  return docs.ok() && docs->size() == 1 && IsPolicy((*docs)[0]);
}

Result<PolicyTranslation> TranslatePolicyFile(const std::string& path, const Registry& registry) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) return text.error();
  auto docs = ParseDocuments(*text, path);
  if (!docs.ok()) return docs.error();
  if (docs->size() != 1) return Error{fmt::format("{}: expected one Policy document", path)};
  return TranslatePolicy((*docs)[0], path, registry);
}

}  // namespace berth::config
