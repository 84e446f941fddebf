#include "config/legacy_versions.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "config/in_tree_plugins.h"
#include "config/load.h"
#include "config/plugin_args_codec.h"
#include "config/policy.h"

namespace berth::config {
namespace {

using nlohmann::json;

// Extension points of the versions with per-point lists, in framework order.
constexpr std::string_view kPoints[] = {"queueSort", "preFilter", "filter",  "postFilter",
                                        "preScore",  "score",     "reserve", "permit",
                                        "preBind",   "bind",      "postBind"};

struct Ref {
  std::string name;
  int64_t weight = 0;
};
using PointSets = std::map<std::string, std::vector<Ref>, std::less<>>;

// A version's default sets (in_tree_plugins.h) as lists per point.
PointSets DefaultsOf(ConfigVersion version) {
  PointSets out;
  for (const DefaultPointSet& set : DefaultPluginSets(version)) {
    std::vector<Ref>& list = out[std::string(set.point)];
    for (const DefaultPlugin& p : set.plugins) list.push_back({std::string(p.name), p.weight});
  }
  return out;
}

// Names no longer in Berth's (or v1's) set: renamed (the row says to what) or removed.
const InTreePlugin* FindRename(std::string_view name) {
  const InTreePlugin* plugin = FindInTreePlugin(name);
  if (plugin == nullptr) return nullptr;
  if (plugin->status != PluginStatus::kRenamed && plugin->status != PluginStatus::kRemoved) {
    return nullptr;
  }
  return plugin;
}

// obj[key] of an object, or null (const operator[] must not be used for absent keys).
const json* Child(const json* obj, std::string_view key) {
  if (!obj || !obj->is_object()) return nullptr;
  auto it = obj->find(key);
  return it == obj->end() ? nullptr : &*it;
}

Error Problem(std::string_view source, std::string_view path, std::string_view what) {
  return Error{fmt::format("{}: {}: {}", source, path, what), ErrorCode::kInvalid};
}

Result<std::vector<Ref>> RefList(const json* list, std::string_view source,
                                 const std::string& path) {
  std::vector<Ref> out;
  if (!list || list->is_null()) return out;
  if (!list->is_array()) return Problem(source, path, "expected a list");
  for (size_t i = 0; i < list->size(); ++i) {
    const json& e = (*list)[i];
    const std::string at = fmt::format("{}[{}]", path, i);
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string())
      return Problem(source, at + ".name", "required value");
    Ref r{e["name"].get<std::string>(), 0};
    if (e.contains("weight") && !e["weight"].is_null()) {
      if (!e["weight"].is_number_integer())
        return Problem(source, at + ".weight", "expected an integer");
      r.weight = e["weight"].get<int64_t>();
    }
    out.push_back(std::move(r));
  }
  return out;
}

// The merge of a file's set into a default set, as those versions merged.
std::vector<Ref> Merge(const std::vector<Ref>& defaults, const std::vector<Ref>& enabled,
                       const std::vector<Ref>& disabled) {
  std::set<std::string> off;
  for (const auto& d : disabled) off.insert(d.name);
  std::vector<Ref> out;
  std::vector<bool> used(enabled.size(), false);
  if (!off.count("*")) {
    for (const Ref& d : defaults) {
      if (off.count(d.name)) continue;
      Ref r = d;
      for (size_t i = 0; i < enabled.size(); ++i) {
        if (enabled[i].name == d.name) {
          r = enabled[i];
          used[i] = true;
        }
      }
      out.push_back(r);
    }
  }
  for (size_t i = 0; i < enabled.size(); ++i)
    if (!used[i]) out.push_back(enabled[i]);
  return out;
}

struct ProfileOut {
  json plugins = json::object();
  json plugin_config = json::array();
};

// A per-point profile's plugins after the defaults are merged in and the old names renamed; the
// one resource scoring strategy the old score plugins chose, with their args.
struct MergedPoints {
  std::map<std::string, std::vector<Ref>, std::less<>> lists;
  std::string fit_strategy;
  json fit_strategy_args;
};

Result<MergedPoints> MergePoints(const json* plugins, const PointSets& defaults,
                                 const std::map<std::string, json>& args, std::string_view source,
                                 const std::string& path, std::vector<std::string>* notes) {
  MergedPoints out;
  for (std::string_view point : kPoints) {
    const std::string ppath = fmt::format("{}.plugins.{}", path, point);
    const json* set = Child(plugins, point);
    BERTH_TRY_ASSIGN(enabled, RefList(Child(set, "enabled"), source, ppath + ".enabled"));
    BERTH_TRY_ASSIGN(disabled, RefList(Child(set, "disabled"), source, ppath + ".disabled"));
    auto it = defaults.find(point);
    const std::vector<Ref> merged =
        Merge(it == defaults.end() ? std::vector<Ref>{} : it->second, enabled, disabled);
    std::set<std::string> seen;
    for (const Ref& r : merged) {
      std::string name = r.name;

      if (const InTreePlugin* rn = FindRename(name)) {
        if (rn->renamed_to.empty()) {
          notes->push_back(fmt::format("{}: dropped {}: {}", ppath, name, rn->note));
          continue;
        }
        if (!rn->fit_strategy.empty()) {
          if (!out.fit_strategy.empty() && out.fit_strategy != rn->fit_strategy)
            return Problem(source, ppath,
                           fmt::format("{} cannot be combined with {}: one resource scoring "
                                       "strategy per profile",
                                       rn->fit_strategy, out.fit_strategy));
          out.fit_strategy = std::string(rn->fit_strategy);
          if (auto a = args.find(name); a != args.end()) out.fit_strategy_args = a->second;
        }
        notes->push_back(
            fmt::format("{}: {} -> {}{}{}", ppath, name, rn->renamed_to,
                        rn->fit_strategy.empty() ? "" : fmt::format(" ({})", rn->fit_strategy),
                        rn->note.empty() ? "" : fmt::format(": {}", rn->note)));
        name = std::string(rn->renamed_to);
      }
      if (!seen.insert(name).second) continue;
      out.lists[std::string(point)].push_back(
          {name, point == "score" ? (r.weight > 0 ? r.weight : 1) : 0});
    }
  }
  return out;
}

// The plugins section: filter and score plugins through MultiPoint, the other points as merged.
json PerPointPlugins(std::map<std::string, std::vector<Ref>, std::less<>>& lists) {
  json plugins = json::object();
  // Filter and score plugins go in through MultiPoint, so that each also runs the PreFilter /
  // PreScore its Filter / Score reads (Berth's plugins are today's, whose state comes from
  // there), and are switched off at the points the file did not ask for. The other points are
  // listed as merged.
  auto has = [&](std::string_view point, const std::string& name) {
    for (const Ref& r : lists[std::string(point)])
      if (r.name == name) return true;
    return false;
  };
  json multi = json::array();
  std::vector<std::string> multi_names;
  for (std::string_view point : {"filter", "score"}) {
    for (const Ref& r : lists[std::string(point)]) {
      if (std::find(multi_names.begin(), multi_names.end(), r.name) != multi_names.end()) continue;
      multi_names.push_back(r.name);
      json e = {{"name", r.name}};
      for (const Ref& sr : lists["score"])
        if (sr.name == r.name) e["weight"] = sr.weight;
      multi.push_back(std::move(e));
    }
  }
  plugins["multiPoint"] = {{"enabled", multi}, {"disabled", {{{"name", "*"}}}}};
  // Newer than these versions, but gates must keep gated pods out of the queue.
  plugins["preEnqueue"] = {{"enabled", {{{"name", names::kSchedulingGates}}}}};
  json not_filter = json::array(), not_score = json::array();
  for (const auto& n : multi_names) {
    if (!has("filter", n)) not_filter.push_back({{"name", n}});
    if (!has("score", n)) not_score.push_back({{"name", n}});
  }
  if (!not_filter.empty()) {
    plugins["preFilter"] = {{"disabled", not_filter}};
    plugins["filter"] = {{"disabled", not_filter}};
  }
  if (!not_score.empty()) {
    plugins["preScore"] = {{"disabled", not_score}};
    plugins["score"] = {{"disabled", not_score}};
  }
  for (std::string_view point :
       {"queueSort", "postFilter", "reserve", "permit", "preBind", "bind", "postBind"}) {
    json enabled = json::array(), disabled = json::array();
    for (const Ref& r : lists[std::string(point)]) enabled.push_back({{"name", r.name}});
    for (const auto& n : multi_names)
      if (!has(point, n)) disabled.push_back({{"name", n}});
    json set = json::object();
    if (!enabled.empty()) set["enabled"] = enabled;
    if (!disabled.empty()) set["disabled"] = disabled;
    if (!set.empty()) plugins[std::string(point)] = set;
  }

  return plugins;
}

// The pluginConfig: the args of the plugins kept, and the fit strategy folded into
// NodeResourcesFit's.
json PerPointPluginConfig(std::map<std::string, json>& args, const std::string& fit_strategy,
                          const json& fit_strategy_args) {
  json plugin_config = json::array();
  for (auto& [name, a] : args) {
    const InTreePlugin* rn = FindRename(name);
    if (rn) continue;  // folded into NodeResourcesFit below, or dropped with its plugin
    json entry = {{"name", name}, {"args", a}};
    if (name == names::kNodeResourcesFit && !fit_strategy.empty()) continue;
    plugin_config.push_back(std::move(entry));
  }
  if (!fit_strategy.empty()) {
    const std::string fit_name(names::kNodeResourcesFit);
    json fit = args.count(fit_name) ? args[fit_name] : json::object();
    if (!fit.is_object()) fit = json::object();
    json strategy = {{"type", fit_strategy}};
    if (fit_strategy_args.is_object() && fit_strategy_args.contains("resources"))
      strategy["resources"] = fit_strategy_args["resources"];
    if (fit_strategy == "RequestedToCapacityRatio") {
      json shape = fit_strategy_args.is_object() ? fit_strategy_args.value("shape", json::array())
                                                 : json::array();
      strategy["requestedToCapacityRatio"] = {{"shape", shape}};
    }
    fit["scoringStrategy"] = strategy;
    plugin_config.push_back({{"name", names::kNodeResourcesFit}, {"args", fit}});
  }
  // Args of those versions could carry their own type (apiVersion/kind): v1 infers it.
  for (json& pc : plugin_config) {
    json& a = pc["args"];
    if (a.is_object() && a.value("apiVersion", "").rfind(kConfigGroup, 0) == 0) {
      a.erase("kind");
      a.erase("apiVersion");
    }
  }
  return plugin_config;
}

// Translates one profile of a per-point version.
Result<ProfileOut> TranslatePerPointProfile(const json& profile, const PointSets& defaults,
                                            std::string_view source, const std::string& path,
                                            std::vector<std::string>* notes) {
  ProfileOut out;
  const json* plugins = Child(&profile, "plugins");
  std::map<std::string, json> args;  // pluginConfig by name
  if (profile.contains("pluginConfig") && profile["pluginConfig"].is_array()) {
    for (const json& pc : profile["pluginConfig"])
      if (pc.is_object() && pc.contains("name") && pc["name"].is_string())
        args[pc["name"].get<std::string>()] = pc.value("args", json::object());
  }
  BERTH_TRY_ASSIGN(merged, MergePoints(plugins, defaults, args, source, path, notes));
  out.plugins = PerPointPlugins(merged.lists);
  out.plugin_config = PerPointPluginConfig(args, merged.fit_strategy, merged.fit_strategy_args);
  return out;
}

// Top-level fields that v1 dropped, skipped with a note.
constexpr std::string_view kDroppedTopLevel[] = {
    "healthzBindAddress", "metricsBindAddress", "bindTimeoutSeconds",
    "algorithmSource",    "schedulerName",      "hardPodAffinitySymmetricWeight",
    "disablePreemption",  "enableProfiling",    "enableContentionProfiling"};

Result<LegacyConfigTranslation> TranslateLegacyConfigOrThrow(const json& doc,
                                                             std::string_view source,
                                                             const std::string& base_dir,
                                                             const Registry& registry);

}  // namespace

bool IsLegacyConfigVersion(const json& doc) {
  if (!doc.is_object()) return false;
  auto kind = doc.find("kind");
  auto api = doc.find("apiVersion");
  if (kind == doc.end() || api == doc.end() || !kind->is_string() || !api->is_string() ||
      *kind != kConfigKind)
    return false;
  const auto version = ParseConfigApiVersion(api->get<std::string>());
  return version.has_value() && *version != ConfigVersion::kV1;
}

Result<LegacyConfigTranslation> TranslateLegacyConfig(const json& doc, std::string_view source,
                                                      const std::string& base_dir,
                                                      const Registry& registry) {
  // A field of an unexpected type makes nlohmann throw; report it instead.
  try {
    return TranslateLegacyConfigOrThrow(doc, source, base_dir, registry);
  } catch (const json::exception& e) {
    return Problem(source, "(document)", fmt::format("unexpected value: {}", e.what()));
  }
}

namespace {

// The top-level fields v1 keeps, with v1alpha1's leader election lock names renamed.
json TopLevelFields(const json& doc, LegacyConfigTranslation& t) {
  json out = {{"apiVersion", kConfigApiVersion}, {"kind", std::string(kConfigKind)}};
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "apiVersion" || k == "kind" || k == "profiles") continue;
    if (k == "enableProfiling" || k == "enableContentionProfiling") {
      out[k] = *it;
      continue;
    }
    if (std::find(std::begin(kDroppedTopLevel), std::end(kDroppedTopLevel), k) !=
        std::end(kDroppedTopLevel)) {
      continue;  // handled below, or noted
    }
    out[k] = *it;
  }
  for (std::string_view k : {"healthzBindAddress", "metricsBindAddress"})
    if (doc.contains(k)) t.notes.push_back(fmt::format("dropped {}: served on --secure-port", k));
  if (doc.contains("leaderElection") && doc["leaderElection"].is_object()) {
    json& le = out["leaderElection"];
    // v1alpha1 named the lock object differently.
    if (le.contains("lockObjectNamespace")) {
      le["resourceNamespace"] = le["lockObjectNamespace"];
      le.erase("lockObjectNamespace");
      t.notes.push_back("leaderElection.lockObjectNamespace -> resourceNamespace");
    }
    if (le.contains("lockObjectName")) {
      le["resourceName"] = le["lockObjectName"];
      le.erase("lockObjectName");
      t.notes.push_back("leaderElection.lockObjectName -> resourceName");
    }
  }
  return out;
}

// v1beta3 has v1's plugin model and weights already; only removed plugins go.
void TranslateV1beta3(const json& doc, json out, LegacyConfigTranslation& t) {
  json profiles = doc.value("profiles", json::array());
  for (json& p : profiles) {
    if (!p.contains("plugins") || !p["plugins"].is_object()) continue;
    for (auto pt = p["plugins"].begin(); pt != p["plugins"].end(); ++pt) {
      for (const char* list : {"enabled", "disabled"}) {
        if (!pt->contains(list) || !(*pt)[list].is_array()) continue;
        json kept = json::array();
        for (json& e : (*pt)[list]) {
          const std::string name = e.value("name", "");
          if (const InTreePlugin* rn = FindRename(name); rn && rn->renamed_to.empty()) {
            t.notes.push_back(fmt::format("dropped {}: {}", name, rn->note));
            continue;
          }
          kept.push_back(e);
        }
        (*pt)[list] = kept;
      }
    }
  }
  if (!profiles.empty()) out["profiles"] = profiles;
  t.config = std::move(out);
  t.notes.push_back("v1beta3 -> v1: same defaults and weights");
}

// The profiles of a per-point version (v1alpha1 .. v1beta2), translated to v1's plugin model.
VoidResult TranslatePerPointProfiles(const json& doc, ConfigVersion v, std::string_view source,
                                     json& out, LegacyConfigTranslation& t) {
  const std::string_view version = ConfigVersionName(v);
  const PointSets defaults = DefaultsOf(v);
  t.notes.push_back(fmt::format(
      "{} defaults: per extension point, score weights 1 (PodTopologySpread 2)", version));
  json profiles_in = doc.value("profiles", json::array());
  if (v == ConfigVersion::kV1alpha1) {
    // One implicit profile.
    json p = {{"schedulerName", doc.value("schedulerName", std::string(kDefaultSchedulerName))}};
    if (doc.contains("plugins")) p["plugins"] = doc["plugins"];
    if (doc.contains("pluginConfig")) p["pluginConfig"] = doc["pluginConfig"];
    out.erase("plugins");
    out.erase("pluginConfig");
    profiles_in = json::array({p});
  }
  if (profiles_in.empty())
    profiles_in.push_back({{"schedulerName", std::string(kDefaultSchedulerName)}});
  json profiles_out = json::array();
  for (size_t i = 0; i < profiles_in.size(); ++i) {
    const std::string path = fmt::format("profiles[{}]", i);
    BERTH_TRY_ASSIGN(p, TranslatePerPointProfile(profiles_in[i], defaults, source, path, &t.notes));
    json prof = {{"plugins", p.plugins}};
    if (profiles_in[i].contains("schedulerName"))
      prof["schedulerName"] = profiles_in[i]["schedulerName"];
    if (!p.plugin_config.empty()) prof["pluginConfig"] = p.plugin_config;
    if (doc.value("disablePreemption", false)) {
      prof["plugins"].erase("postFilter");
      t.notes.push_back("disablePreemption: no PostFilter plugin");
    }
    if (doc.contains("hardPodAffinitySymmetricWeight")) {
      prof["pluginConfig"].push_back(
          {{"name", names::kInterPodAffinity},
           {"args", {{"hardPodAffinityWeight", doc["hardPodAffinitySymmetricWeight"]}}}});
      t.notes.push_back("hardPodAffinitySymmetricWeight -> InterPodAffinity hardPodAffinityWeight");
    }
    profiles_out.push_back(std::move(prof));
  }
  out["profiles"] = profiles_out;
  return {};
}

// v1alpha1's algorithmSource: a Policy file translated into the first profile, a Policy in a
// ConfigMap left for `berth scheduler` to read, or a provider.
VoidResult TranslateAlgorithmSource(const json& doc, std::string_view source,
                                    const std::string& base_dir, const Registry& registry,
                                    json& out, LegacyConfigTranslation& t) {
  if (doc.contains("algorithmSource") && doc["algorithmSource"].is_object()) {
    const json& src = doc["algorithmSource"];
    if (src.contains("policy") && src["policy"].is_object()) {
      const json& pol = src["policy"];
      if (pol.contains("file") && pol["file"].is_object()) {
        std::string file = pol["file"].value("path", "");
        if (file.empty())
          return Problem(source, "algorithmSource.policy.file.path", "required value");
        if (!std::filesystem::exists(file) && !base_dir.empty() &&
            std::filesystem::path(file).is_relative())
          file = (std::filesystem::path(base_dir) / file).string();
        BERTH_TRY_ASSIGN(policy, TranslatePolicyFile(file, registry));
        json& prof = out["profiles"][0];
        const json name = prof.value("schedulerName", json(std::string(kDefaultSchedulerName)));
        prof = policy.config["profiles"][0];
        prof["schedulerName"] = name;
        if (policy.config.contains("extenders")) {
          json& ext = out["extenders"];
          if (!ext.is_array()) ext = json::array();
          for (const auto& e : policy.config["extenders"]) ext.push_back(e);
        }
        t.notes.push_back(fmt::format("algorithmSource.policy.file {} -> the profile:", file));
        for (const auto& n : policy.notes) t.notes.push_back("  " + n);
      } else if (pol.contains("configMap") && pol["configMap"].is_object()) {
        t.policy_configmap_namespace = pol["configMap"].value("namespace", "kube-system");
        t.policy_configmap_name = pol["configMap"].value("name", "");
        if (t.policy_configmap_name.empty())
          return Problem(source, "algorithmSource.policy.configMap.name", "required value");
        t.notes.push_back(fmt::format(
            "algorithmSource.policy.configMap {}/{}: read through the API by berth scheduler",
            t.policy_configmap_namespace, t.policy_configmap_name));
      }
    } else if (src.contains("provider") && src["provider"] != "DefaultProvider") {
      if (src["provider"] == "ClusterAutoscalerProvider") {
        for (json& prof : out["profiles"]) {
          bool found = false;
          for (json& pc : prof["pluginConfig"])
            if (pc.value("name", "") == names::kNodeResourcesFit) {
              pc["args"]["scoringStrategy"] = {{"type", "MostAllocated"}};
              found = true;
            }
          if (!found)
            prof["pluginConfig"].push_back(
                {{"name", names::kNodeResourcesFit},
                 {"args", {{"scoringStrategy", {{"type", "MostAllocated"}}}}}});
        }
        t.notes.push_back("algorithmSource.provider ClusterAutoscalerProvider: MostAllocated");
      } else {
        return Problem(source, "algorithmSource.provider",
                       fmt::format("unsupported value {}", src["provider"].dump()));
      }
    }
  }
  return {};
}

Result<LegacyConfigTranslation> TranslateLegacyConfigOrThrow(const json& doc,
                                                             std::string_view source,
                                                             const std::string& base_dir,
                                                             const Registry& registry) {
  LegacyConfigTranslation t;
  const std::optional<ConfigVersion> parsed = ParseConfigApiVersion(doc.value("apiVersion", ""));
  if (!parsed || *parsed == ConfigVersion::kV1)
    return Problem(source, "apiVersion", "expected a version older than v1");
  const ConfigVersion v = *parsed;
  json out = TopLevelFields(doc, t);
  if (v == ConfigVersion::kV1beta3) {
    TranslateV1beta3(doc, std::move(out), t);
    return t;
  }
  if (auto ok = TranslatePerPointProfiles(doc, v, source, out, t); !ok.ok()) return ok.error();
  if (auto ok = TranslateAlgorithmSource(doc, source, base_dir, registry, out, t); !ok.ok())
    return ok.error();
  t.config = std::move(out);
  return t;
}

}  // namespace

}  // namespace berth::config
