#include "config/load.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "api/codec.h"
#include "api/read_file.h"
#include "config/decode_util.h"
#include "config/legacy_versions.h"
#include "config/plugin_args_codec.h"
#include "config/policy.h"

namespace berth::config {

using internal::ChildPath;
using internal::Fields;
using internal::IndexPath;
using internal::Problems;
using internal::Quote;
using internal::Unsupported;

namespace {

struct ExtensionPoint {
  std::string_view key;
  PluginSet Plugins::*set;
};

// Order of `plugins` keys as kube-scheduler lists them; multiPoint last.
constexpr ExtensionPoint kExtensionPoints[] = {
    {"preEnqueue", &Plugins::pre_enqueue},
    {"queueSort", &Plugins::queue_sort},
    {"preFilter", &Plugins::pre_filter},
    {"filter", &Plugins::filter},
    {"postFilter", &Plugins::post_filter},
    {"preScore", &Plugins::pre_score},
    {"score", &Plugins::score},
    {"reserve", &Plugins::reserve},
    {"permit", &Plugins::permit},
    {"preBind", &Plugins::pre_bind},
    {"bind", &Plugins::bind},
    {"postBind", &Plugins::post_bind},
    {"multiPoint", &Plugins::multi_point},
};

// Plugins removed from the v1 API; naming them is a configuration error.
constexpr std::string_view kRemovedPlugins[] = {"AzureDiskLimits", "CinderLimits", "EBSLimits",
                                                "GCEPDLimits"};

bool IsRemovedPlugin(std::string_view name) {
  return std::find(std::begin(kRemovedPlugins), std::end(kRemovedPlugins), name) !=
         std::end(kRemovedPlugins);
}

std::string RemovedPluginProblem(std::string_view name) {
  return fmt::format("invalid value {}: invalid plugin name, removed in {}", Quote(name),
                     kConfigApiVersion);
}

// ------------------------------------------------------------------ decoding

std::vector<PluginRef> DecodePluginList(Fields& set, std::string_view key, Problems& p) {
  std::vector<PluginRef> out;
  auto list = set.List(key);
  if (!list) return out;
  const std::string list_path = set.PathOf(key);
  for (size_t i = 0; i < list->size(); ++i) {
    Fields f((*list)[i], IndexPath(list_path, i), p, {"name", "weight"});
    PluginRef ref;
    ref.name = f.String("name").value_or("");
    ref.weight = f.Int32("weight").value_or(0);
    out.push_back(std::move(ref));
  }
  return out;
}

Plugins DecodePlugins(const nlohmann::json* raw, const std::string& path, Problems& p) {
  Plugins plugins;
  Fields f(raw, path, p,
           {"preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
            "reserve", "permit", "preBind", "bind", "postBind", "multiPoint"});
  for (const ExtensionPoint& point : kExtensionPoints) {
    Fields set(f.Get(point.key), f.PathOf(point.key), p, {"enabled", "disabled"});
    PluginSet& out = plugins.*point.set;
    out.enabled = DecodePluginList(set, "enabled", p);
    for (PluginRef& ref : DecodePluginList(set, "disabled", p)) {
      out.disabled.push_back(std::move(ref.name));
    }
  }
  return plugins;
}

std::vector<PluginConfig> DecodePluginConfig(const nlohmann::json* raw, const std::string& path,
                                             const Registry& registry, Problems& p) {
  std::vector<PluginConfig> out;
  if (raw == nullptr || raw->is_null()) return out;
  if (!raw->is_array()) {
    p.Add(path, "expected a list");
    return out;
  }
  for (size_t i = 0; i < raw->size(); ++i) {
    const std::string item_path = IndexPath(path, i);
    Fields f(&(*raw)[i], item_path, p, {"name", "args"});
    PluginConfig config;
    config.name = f.String("name").value_or("");
    const nlohmann::json* args = f.Get("args");
    const PluginRegistration* reg = registry.Find(config.name);
    if (reg != nullptr && reg->decode_args) {
      auto decoded = reg->decode_args(args, f.PathOf("args"));
      if (decoded.ok()) {
        config.args = std::move(decoded).value();
      } else {
        p.AddMessage(decoded.error().message);
      }
    } else if (args != nullptr) {
      config.raw_args = std::make_shared<const nlohmann::json>(*args);
    }
    out.push_back(std::move(config));
  }
  return out;
}

// Appends defaulted args for every enabled plugin that has a decoder and no entry yet.
void AppendDefaultArgs(Profile& profile, const std::string& path, const Registry& registry,
                       Problems& p) {
  std::set<std::string, std::less<>> enabled;
  for (const ExtensionPoint& point : kExtensionPoints) {
    for (const PluginRef& ref : (profile.plugins.*point.set).enabled) enabled.insert(ref.name);
  }
  std::set<std::string, std::less<>> configured;
  for (const PluginConfig& config : profile.plugin_config) configured.insert(config.name);
  for (const std::string& name : enabled) {
    if (configured.contains(name)) continue;
    const PluginRegistration* reg = registry.Find(name);
    if (reg == nullptr || !reg->decode_args) continue;
    auto decoded = reg->decode_args(nullptr, ChildPath(path, "pluginConfig"));
    if (!decoded.ok()) {
      // A decoder that rejects its own defaults is a bug in its registration, but report it
      // rather than run with missing args.
      p.AddMessage(decoded.error().message);
      continue;
    }
    if (decoded.value() == nullptr) continue;
    profile.plugin_config.push_back(PluginConfig{name, std::move(decoded).value(), nullptr});
  }
}

struct DecodedProfile {
  Profile profile;
  Plugins custom;  // the file's plugin sets before merging, for messages naming them
  bool name_given = false;
};

DecodedProfile DecodeProfile(const nlohmann::json* raw, const std::string& path,
                             const Registry& registry, Problems& p) {
  DecodedProfile out;
  Fields f(raw, path, p, {"schedulerName", "percentageOfNodesToScore", "plugins", "pluginConfig"});
  if (auto name = f.String("schedulerName")) {
    out.profile.scheduler_name = *name;
    out.name_given = true;
  } else {
    out.profile.scheduler_name.clear();
  }
  out.profile.percentage_of_nodes_to_score = f.Int32("percentageOfNodesToScore");
  out.custom = DecodePlugins(f.Get("plugins"), f.PathOf("plugins"), p);
  out.profile.plugins = MergePlugins(DefaultPlugins(), out.custom);
  out.profile.plugin_config =
      DecodePluginConfig(f.Get("pluginConfig"), f.PathOf("pluginConfig"), registry, p);
  return out;
}

Extender DecodeExtender(const nlohmann::json* raw, const std::string& path, Problems& p) {
  Extender e;
  Fields f(raw, path, p,
           {"urlPrefix", "filterVerb", "preemptVerb", "prioritizeVerb", "weight", "bindVerb",
            "enableHTTPS", "tlsConfig", "httpTimeout", "nodeCacheCapable", "managedResources",
            "ignorable"});
  e.url_prefix = f.String("urlPrefix").value_or("");
  e.filter_verb = f.String("filterVerb").value_or("");
  e.preempt_verb = f.String("preemptVerb").value_or("");
  e.prioritize_verb = f.String("prioritizeVerb").value_or("");
  e.weight = f.Int64("weight").value_or(0);
  e.bind_verb = f.String("bindVerb").value_or("");
  e.enable_https = f.Bool("enableHTTPS").value_or(false);
  if (const nlohmann::json* tls_raw = f.Get("tlsConfig")) {
    Fields t(tls_raw, f.PathOf("tlsConfig"), p,
             {"insecure", "serverName", "certFile", "keyFile", "caFile", "certData", "keyData",
              "caData"});
    ExtenderTLSConfig tls;
    tls.insecure = t.Bool("insecure").value_or(false);
    tls.server_name = t.String("serverName").value_or("");
    tls.cert_file = t.String("certFile").value_or("");
    tls.key_file = t.String("keyFile").value_or("");
    tls.ca_file = t.String("caFile").value_or("");
    tls.cert_data = t.Base64("certData").value_or("");
    tls.key_data = t.Base64("keyData").value_or("");
    tls.ca_data = t.Base64("caData").value_or("");
    e.tls_config = std::move(tls);
  }
  if (auto timeout = f.DurationMs("httpTimeout")) {
    if (*timeout < 0) {
      p.Add(f.PathOf("httpTimeout"),
            fmt::format("invalid value {}: must not be negative", Quote(*f.String("httpTimeout"))));
    } else if (*timeout > 0) {
      e.http_timeout_ms = *timeout;  // zero keeps the 5s default, as kube-scheduler does
    }
  }
  e.node_cache_capable = f.Bool("nodeCacheCapable").value_or(false);
  if (auto list = f.List("managedResources")) {
    const std::string list_path = f.PathOf("managedResources");
    for (size_t i = 0; i < list->size(); ++i) {
      Fields r((*list)[i], IndexPath(list_path, i), p, {"name", "ignoredByScheduler"});
      ExtenderManagedResource resource;
      resource.name = r.String("name").value_or("");
      resource.ignored_by_scheduler = r.Bool("ignoredByScheduler").value_or(false);
      e.managed_resources.push_back(std::move(resource));
    }
  }
  e.ignorable = f.Bool("ignorable").value_or(false);
  return e;
}

void DecodeLeaderElection(const nlohmann::json* raw, const std::string& path, LeaderElection& le,
                          Problems& p) {
  Fields f(raw, path, p,
           {"leaderElect", "leaseDuration", "renewDeadline", "retryPeriod", "resourceLock",
            "resourceName", "resourceNamespace"});
  if (auto v = f.Bool("leaderElect")) le.leader_elect = *v;
  // Zero durations and empty strings take the defaults, as kube-scheduler's defaulting does.
  if (auto v = f.DurationMs("leaseDuration"); v && *v != 0) le.lease_duration_ms = *v;
  if (auto v = f.DurationMs("renewDeadline"); v && *v != 0) le.renew_deadline_ms = *v;
  if (auto v = f.DurationMs("retryPeriod"); v && *v != 0) le.retry_period_ms = *v;
  if (auto v = f.String("resourceLock"); v && !v->empty()) le.resource_lock = *v;
  if (auto v = f.String("resourceName"); v && !v->empty()) le.resource_name = *v;
  if (auto v = f.String("resourceNamespace"); v && !v->empty()) le.resource_namespace = *v;
}

void DecodeClientConnection(const nlohmann::json* raw, const std::string& path,
                            ClientConnection& cc, Problems& p) {
  Fields f(raw, path, p, {"kubeconfig", "acceptContentTypes", "contentType", "qps", "burst"});
  cc.kubeconfig = f.String("kubeconfig").value_or("");
  cc.accept_content_types = f.String("acceptContentTypes").value_or("");
  if (auto v = f.String("contentType"); v && !v->empty()) cc.content_type = *v;
  if (auto v = f.Number("qps"); v && *v != 0) cc.qps = static_cast<float>(*v);
  if (auto v = f.Int32("burst"); v && *v != 0) cc.burst = *v;
}

// ------------------------------------------------------------------ validation

void ValidatePercentage(const std::optional<int32_t>& value, const std::string& path, Problems& p) {
  if (value && (*value < 0 || *value > 100)) {
    p.Add(path, fmt::format("invalid value {}: not in valid range [0-100]", *value));
  }
}

bool SamePluginSet(const PluginSet& a, const PluginSet& b) {
  if (a.enabled.size() != b.enabled.size() || a.disabled != b.disabled) return false;
  for (size_t i = 0; i < a.enabled.size(); ++i) {
    if (a.enabled[i].name != b.enabled[i].name || a.enabled[i].weight != b.enabled[i].weight) {
      return false;
    }
  }
  return true;
}

nlohmann::json EncodeArgs(const PluginConfig& config) {
  if (config.args) {
    nlohmann::json out = nlohmann::json::object();
    config.args->Encode(out);
    return out;
  }
  if (config.raw_args) return *config.raw_args;
  return nullptr;
}

void ValidateQueueSort(const std::vector<Profile>& profiles, Problems& p) {
  const PluginSet& canon = profiles[0].plugins.queue_sort;
  if (canon.enabled.size() > 1) {
    p.Add("profiles[0].plugins.queueSort.enabled",
          fmt::format("invalid value {}: only one queue sort plugin can be enabled",
                      canon.enabled.size()));
  }
  std::string sort_name = canon.enabled.empty() ? "" : canon.enabled[0].name;
  nlohmann::json sort_args = nullptr;
  for (const PluginConfig& config : profiles[0].plugin_config) {
    if (!sort_name.empty() && config.name == sort_name) sort_args = EncodeArgs(config);
  }
  for (size_t i = 1; i < profiles.size(); ++i) {
    const std::string path = IndexPath("profiles", i);
    if (!SamePluginSet(canon, profiles[i].plugins.queue_sort)) {
      p.Add(ChildPath(path, "plugins.queueSort"),
            "invalid value: must be the same for all profiles");
    }
    const auto& configs = profiles[i].plugin_config;
    for (size_t j = 0; j < configs.size(); ++j) {
      if (configs[j].name == sort_name && EncodeArgs(configs[j]) != sort_args) {
        p.Add(ChildPath(IndexPath(ChildPath(path, "pluginConfig"), j), "args"),
              "invalid value: queueSort must be the same for all profiles");
      }
    }
  }
}

bool ValidExtenderUrl(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (url.substr(0, scheme.size()) != scheme) continue;
    std::string_view rest = url.substr(scheme.size());
    const size_t host_end = rest.find_first_of("/?#");
    std::string_view host = rest.substr(0, host_end);
    return !host.empty() && host.front() != ':' &&
           host.find_first_of(" \t") == std::string_view::npos;
  }
  return false;
}

// Extended resources an extender manages with ignoredByScheduler are not checked by
// NodeResourcesFit; as upstream, they replace its ignoredResources in every profile.
void ApplyExtenderIgnoredResources(SchedulerConfiguration& c) {
  std::vector<std::string> ignored;
  for (const Extender& e : c.extenders)
    for (const auto& r : e.managed_resources)
      if (r.ignored_by_scheduler) ignored.push_back(r.name);
  if (ignored.empty()) return;
  for (Profile& profile : c.profiles) {
    for (PluginConfig& pc : profile.plugin_config) {
      const auto* fit = dynamic_cast<const NodeResourcesFitArgs*>(pc.args.get());
      if (pc.name != "NodeResourcesFit" || !fit) continue;
      auto updated = std::make_shared<NodeResourcesFitArgs>(*fit);
      updated->ignored_resources = ignored;
      pc.args = std::move(updated);
    }
  }
}

void ValidateExtenders(const std::vector<Extender>& extenders, Problems& p) {
  int binders = 0;
  std::set<std::string, std::less<>> managed;
  for (size_t i = 0; i < extenders.size(); ++i) {
    const Extender& e = extenders[i];
    const std::string path = IndexPath("extenders", i);
    if (e.url_prefix.empty()) {
      p.Add(ChildPath(path, "urlPrefix"), "required value");
    } else if (!ValidExtenderUrl(e.url_prefix)) {
      p.Add(ChildPath(path, "urlPrefix"),
            fmt::format("invalid value {}: must be an http:// or https:// URL with a host",
                        Quote(e.url_prefix)));
    }
    if (!e.prioritize_verb.empty() && e.weight <= 0) {
      p.Add(ChildPath(path, "weight"),
            fmt::format("invalid value {}: must have a positive weight applied to it", e.weight));
    }
    if (!e.bind_verb.empty()) ++binders;
    for (size_t j = 0; j < e.managed_resources.size(); ++j) {
      const std::string& name = e.managed_resources[j].name;
      const std::string name_path =
          ChildPath(IndexPath(ChildPath(path, "managedResources"), j), "name");
      std::string problem = internal::QualifiedNameProblem(name);
      if (!problem.empty()) {
        p.Add(name_path, fmt::format("invalid value {}: {}", Quote(name), problem));
      } else if (!internal::IsExtendedResourceName(name)) {
        p.Add(name_path,
              fmt::format("invalid value {}: is an invalid extended resource name", Quote(name)));
      }
      if (!managed.insert(name).second) {
        p.Add(name_path, fmt::format("invalid value {}: duplicate extender managed resource name",
                                     Quote(name)));
      }
    }
  }
  if (binders > 1) {
    p.Add("extenders",
          fmt::format("invalid value \"found {} extenders implementing bind\": only one extender "
                      "can implement bind",
                      binders));
  }
}

void ValidateConfiguration(const SchedulerConfiguration& c,
                           const std::vector<DecodedProfile>& decoded, Problems& p) {
  if (c.client_connection.burst < 0) {
    p.Add("clientConnection.burst",
          fmt::format("invalid value {}: must be non-negative", c.client_connection.burst));
  }
  const LeaderElection& le = c.leader_election;
  if (le.leader_elect) {
    auto positive = [&](int64_t ms, std::string_view field) {
      if (ms <= 0) {
        p.Add(ChildPath("leaderElection", field),
              fmt::format("invalid value {}: must be greater than zero",
                          Quote(internal::FormatGoDurationMs(ms))));
      }
    };
    positive(le.lease_duration_ms, "leaseDuration");
    positive(le.renew_deadline_ms, "renewDeadline");
    positive(le.retry_period_ms, "retryPeriod");
    if (le.lease_duration_ms <= le.renew_deadline_ms) {
      p.Add("leaderElection.leaseDuration",
            fmt::format("invalid value {}: must be greater than renewDeadline ({})",
                        Quote(internal::FormatGoDurationMs(le.lease_duration_ms)),
                        internal::FormatGoDurationMs(le.renew_deadline_ms)));
    }
    if (le.resource_lock != "leases") {
      p.Add("leaderElection.resourceLock",
            fmt::format("invalid value {}: resourceLock value must be \"leases\"",
                        Quote(le.resource_lock)));
    }
  }
  if (c.parallelism <= 0) {
    p.Add("parallelism",
          fmt::format("invalid value {}: should be an integer value greater than zero",
                      c.parallelism));
  }
  std::map<std::string, size_t, std::less<>> names;
  for (size_t i = 0; i < c.profiles.size(); ++i) {
    const Profile& profile = c.profiles[i];
    const std::string path = IndexPath("profiles", i);
    if (profile.scheduler_name.empty()) p.Add(ChildPath(path, "schedulerName"), "required value");
    ValidatePercentage(profile.percentage_of_nodes_to_score,
                       ChildPath(path, "percentageOfNodesToScore"), p);
    // Removed plugins are reported where the file names them.
    const Plugins& custom = decoded[i].custom;
    for (const ExtensionPoint& point : kExtensionPoints) {
      const auto& enabled = (custom.*point.set).enabled;
      for (size_t j = 0; j < enabled.size(); ++j) {
        if (IsRemovedPlugin(enabled[j].name)) {
          p.Add(IndexPath(ChildPath(ChildPath(path, "plugins"), point.key) + ".enabled", j),
                RemovedPluginProblem(enabled[j].name));
        }
      }
    }
    std::set<std::string, std::less<>> seen;
    for (size_t j = 0; j < profile.plugin_config.size(); ++j) {
      const std::string& name = profile.plugin_config[j].name;
      const std::string item = IndexPath(ChildPath(path, "pluginConfig"), j);
      if (!seen.insert(name).second) p.Add(item, fmt::format("duplicate value {}", Quote(name)));
      if (IsRemovedPlugin(name)) p.Add(item, RemovedPluginProblem(name));
    }
    auto [it, inserted] = names.emplace(profile.scheduler_name, i);
    if (!inserted) {
      p.Add(ChildPath(path, "schedulerName"),
            fmt::format("duplicate value {} (also profiles[{}].schedulerName)",
                        Quote(profile.scheduler_name), it->second));
    }
  }
  if (!c.profiles.empty()) ValidateQueueSort(c.profiles, p);
  ValidatePercentage(c.percentage_of_nodes_to_score, "percentageOfNodesToScore", p);
  if (c.pod_initial_backoff_seconds <= 0) {
    p.Add("podInitialBackoffSeconds",
          fmt::format("invalid value {}: must be greater than 0", c.pod_initial_backoff_seconds));
  }
  // Backoffs are kept in nanoseconds; past about 292 years they would overflow.
  constexpr int64_t kMaxBackoffSeconds = int64_t{1} << 32;
  for (auto [field, v] :
       {std::pair<const char*, int64_t>{"podInitialBackoffSeconds", c.pod_initial_backoff_seconds},
        {"podMaxBackoffSeconds", c.pod_max_backoff_seconds}}) {
    if (v > kMaxBackoffSeconds) {
      p.Add(field, fmt::format("invalid value {}: must be at most {}", v, kMaxBackoffSeconds));
    }
  }
  if (c.pod_max_backoff_seconds < c.pod_initial_backoff_seconds) {
    p.Add("podMaxBackoffSeconds",
          fmt::format("invalid value {}: must be greater than or equal to podInitialBackoffSeconds",
                      c.pod_max_backoff_seconds));
  }
  ValidateExtenders(c.extenders, p);
}

// ------------------------------------------------------------------ encoding

nlohmann::json EncodePluginSet(const PluginSet& set) {
  nlohmann::json out = nlohmann::json::object();
  if (!set.enabled.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const PluginRef& ref : set.enabled) {
      nlohmann::json item = {{"name", ref.name}};
      if (ref.weight != 0) item["weight"] = ref.weight;
      list.push_back(std::move(item));
    }
    out["enabled"] = std::move(list);
  }
  if (!set.disabled.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& name : set.disabled) list.push_back({{"name", name}});
    out["disabled"] = std::move(list);
  }
  return out;
}

nlohmann::json EncodeProfile(const Profile& profile) {
  nlohmann::json out = {{"schedulerName", profile.scheduler_name}};
  if (profile.percentage_of_nodes_to_score) {
    out["percentageOfNodesToScore"] = *profile.percentage_of_nodes_to_score;
  }
  nlohmann::json plugins = nlohmann::json::object();
  for (const ExtensionPoint& point : kExtensionPoints) {
    nlohmann::json set = EncodePluginSet(profile.plugins.*point.set);
    if (!set.empty()) plugins[std::string(point.key)] = std::move(set);
  }
  out["plugins"] = std::move(plugins);
  if (!profile.plugin_config.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const PluginConfig& config : profile.plugin_config) {
      nlohmann::json item = {{"name", config.name}};
      nlohmann::json args = EncodeArgs(config);
      if (!args.is_null()) item["args"] = std::move(args);
      list.push_back(std::move(item));
    }
    out["pluginConfig"] = std::move(list);
  }
  return out;
}

nlohmann::json EncodeExtender(const Extender& e) {
  nlohmann::json out = {{"urlPrefix", e.url_prefix}};
  auto put_string = [&out](const char* key, const std::string& v) {
    if (!v.empty()) out[key] = v;
  };
  put_string("filterVerb", e.filter_verb);
  put_string("preemptVerb", e.preempt_verb);
  put_string("prioritizeVerb", e.prioritize_verb);
  put_string("bindVerb", e.bind_verb);
  if (e.weight != 0) out["weight"] = e.weight;
  if (e.enable_https) out["enableHTTPS"] = true;
  if (e.tls_config) {
    const ExtenderTLSConfig& t = *e.tls_config;
    nlohmann::json tls = nlohmann::json::object();
    if (t.insecure) tls["insecure"] = true;
    auto put = [&tls](const char* key, const std::string& v) {
      if (!v.empty()) tls[key] = v;
    };
    put("serverName", t.server_name);
    put("certFile", t.cert_file);
    put("keyFile", t.key_file);
    put("caFile", t.ca_file);
    put("certData", t.cert_data);
    put("keyData", t.key_data);
    put("caData", t.ca_data);
    out["tlsConfig"] = std::move(tls);
  }
  out["httpTimeout"] = internal::FormatGoDurationMs(e.http_timeout_ms);
  if (e.node_cache_capable) out["nodeCacheCapable"] = true;
  if (!e.managed_resources.empty()) {
    nlohmann::json list = nlohmann::json::array();
    for (const ExtenderManagedResource& r : e.managed_resources) {
      list.push_back({{"name", r.name}, {"ignoredByScheduler", r.ignored_by_scheduler}});
    }
    out["managedResources"] = std::move(list);
  }
  if (e.ignorable) out["ignorable"] = true;
  return out;
}

// The shortest text that reads back as the same float ("12.5", not 12.5000004...); whole
// numbers come out as integers (qps: 50).
nlohmann::json EncodeNumber(float v) {
  if (!std::isfinite(v)) return 0;
  return nlohmann::json::parse(fmt::format("{}", v));
}

// ------------------------------------------------------------------ YAML output

bool LooksLikeNonString(const std::string& s) {
  if (s.empty()) return true;
  static const std::set<std::string, std::less<>> kWords = {
      "y",    "Y",    "yes",   "Yes",   "YES",   "n",     "N",     "no",   "No",
      "NO",   "true", "True",  "TRUE",  "false", "False", "FALSE", "on",   "On",
      "ON",   "off",  "Off",   "OFF",   "null",  "Null",  "NULL",  "~",    ".inf",
      ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan",  ".NaN", ".NAN"};
  if (kWords.contains(s)) return true;
  // Anything number-like ("10", "1e3", "0x1f", "1_000", "-5", "1:30") is quoted.
  char c = s[0];
  if ((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.') {
    bool all_numberish = std::all_of(s.begin(), s.end(), [](char ch) {
      return (ch >= '0' && ch <= '9') || ch == '-' || ch == '+' || ch == '.' || ch == 'e' ||
             ch == 'E' || ch == 'x' || ch == 'X' || ch == 'o' || ch == '_' || ch == ':' ||
             (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');
    });
    if (all_numberish) return true;
  }
  return false;
}

void EmitYaml(YAML::Emitter& out, const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, value] : v.items()) {
        out << YAML::Key;
        if (LooksLikeNonString(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        EmitYaml(out, value);
      }
      out << YAML::EndMap;
      return;
    case nlohmann::json::value_t::array:
      if (v.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& item : v) EmitYaml(out, item);
      out << YAML::EndSeq;
      return;
    case nlohmann::json::value_t::string: {
      const auto& s = v.get_ref<const std::string&>();
      if (LooksLikeNonString(s)) out << YAML::DoubleQuoted;
      out << s;
      return;
    }
    case nlohmann::json::value_t::boolean:
      out << v.get<bool>();
      return;
    case nlohmann::json::value_t::number_integer:
      out << v.get<int64_t>();
      return;
    case nlohmann::json::value_t::number_unsigned:
      out << v.get<uint64_t>();
      return;
    case nlohmann::json::value_t::number_float:
      // JSON's shortest round-trip form is also a valid YAML float.
      out << v.dump();
      return;
    default:
      out << YAML::Null;
      return;
  }
}

}  // namespace

PluginSet MergePluginSet(const PluginSet& defaults, const PluginSet& custom) {
  PluginSet out;
  std::set<std::string, std::less<>> disabled;
  for (const std::string& name : custom.disabled) {
    out.disabled.push_back(name);
    disabled.insert(name);
  }
  for (const std::string& name : defaults.disabled) {
    out.disabled.push_back(name);
    disabled.insert(name);
  }
  // For a name enabled twice the later entry replaces the default; the earlier one is appended
  // and the framework rejects the duplicate.
  std::map<std::string, size_t, std::less<>> custom_index;
  for (size_t i = 0; i < custom.enabled.size(); ++i) custom_index[custom.enabled[i].name] = i;
  std::vector<bool> replaced(custom.enabled.size(), false);
  if (!disabled.contains("*")) {
    for (const PluginRef& plugin : defaults.enabled) {
      if (disabled.contains(plugin.name)) continue;
      auto it = custom_index.find(plugin.name);
      if (it != custom_index.end()) {
        out.enabled.push_back(custom.enabled[it->second]);
        replaced[it->second] = true;
      } else {
        out.enabled.push_back(plugin);
      }
    }
  }
  for (size_t i = 0; i < custom.enabled.size(); ++i) {
    if (!replaced[i]) out.enabled.push_back(custom.enabled[i]);
  }
  return out;
}

Plugins MergePlugins(const Plugins& defaults, const Plugins& custom) {
  Plugins out;
  for (const ExtensionPoint& point : kExtensionPoints) {
    out.*point.set = MergePluginSet(defaults.*point.set, custom.*point.set);
  }
  return out;
}

Plugins DefaultPlugins() {
  Plugins plugins;
  plugins.multi_point.enabled = {
      {"SchedulingGates", 0},    {"PrioritySort", 0},
      {"NodeUnschedulable", 0},  {"NodeName", 0},
      {"TaintToleration", 3},    {"NodeAffinity", 2},
      {"NodePorts", 0},          {"NodeResourcesFit", 1},
      {"VolumeRestrictions", 0}, {"NodeVolumeLimits", 0},
      {"VolumeBinding", 0},      {"VolumeZone", 0},
      {"PodTopologySpread", 2},  {"InterPodAffinity", 2},
      {"DefaultPreemption", 0},  {"NodeResourcesBalancedAllocation", 1},
      {"ImageLocality", 1},      {"DefaultBinder", 0},
  };
  return plugins;
}

Result<SchedulerConfiguration> DecodeConfiguration(const nlohmann::json& doc,
                                                   const Registry& registry) {
  Problems p;
  if (!doc.is_object()) return Error{"expected a KubeSchedulerConfiguration object"};
  // The type comes first: without the right one nothing else can be interpreted.
  auto api_version = doc.find("apiVersion");
  if (api_version == doc.end() || api_version->is_null()) {
    return Error{fmt::format("apiVersion: required value: must be {}", Quote(kConfigApiVersion))};
  }
  if (!api_version->is_string() || api_version->get<std::string>() != kConfigApiVersion) {
    std::string given =
        api_version->is_string() ? api_version->get<std::string>() : api_version->dump();
    return Error{fmt::format("apiVersion: {}", Unsupported(given, {kConfigApiVersion}))};
  }
  auto kind = doc.find("kind");
  if (kind == doc.end() || kind->is_null()) {
    return Error{fmt::format("kind: required value: must be {}", Quote(kConfigKind))};
  }
  if (!kind->is_string() || kind->get<std::string>() != kConfigKind) {
    std::string given = kind->is_string() ? kind->get<std::string>() : kind->dump();
    return Error{fmt::format("kind: {}", Unsupported(given, {kConfigKind}))};
  }

  Fields f(
      &doc, "", p,
      {"apiVersion", "kind", "parallelism", "leaderElection", "clientConnection", "enableProfiling",
       "enableContentionProfiling", "percentageOfNodesToScore", "podInitialBackoffSeconds",
       "podMaxBackoffSeconds", "profiles", "extenders", "delayCacheUntilActive"});
  SchedulerConfiguration c;
  if (auto v = f.Int32("parallelism")) c.parallelism = *v;
  DecodeLeaderElection(f.Get("leaderElection"), "leaderElection", c.leader_election, p);
  DecodeClientConnection(f.Get("clientConnection"), "clientConnection", c.client_connection, p);
  c.enable_profiling = f.Bool("enableProfiling").value_or(true);
  c.enable_contention_profiling = f.Bool("enableContentionProfiling").value_or(c.enable_profiling);
  if (auto v = f.Int32("percentageOfNodesToScore")) c.percentage_of_nodes_to_score = *v;
  if (auto v = f.Int64("podInitialBackoffSeconds")) c.pod_initial_backoff_seconds = *v;
  if (auto v = f.Int64("podMaxBackoffSeconds")) c.pod_max_backoff_seconds = *v;
  c.delay_cache_until_active = f.Bool("delayCacheUntilActive").value_or(false);

  std::vector<DecodedProfile> profiles;
  if (auto list = f.List("profiles")) {
    for (size_t i = 0; i < list->size(); ++i) {
      profiles.push_back(DecodeProfile((*list)[i], IndexPath("profiles", i), registry, p));
    }
  }
  if (profiles.empty()) profiles.push_back(DecodeProfile(nullptr, "profiles[0]", registry, p));
  if (profiles.size() == 1 && !profiles[0].name_given) {
    profiles[0].profile.scheduler_name = kDefaultSchedulerName;
  }
  for (size_t i = 0; i < profiles.size(); ++i) {
    AppendDefaultArgs(profiles[i].profile, IndexPath("profiles", i), registry, p);
    c.profiles.push_back(profiles[i].profile);
  }

  if (auto list = f.List("extenders")) {
    for (size_t i = 0; i < list->size(); ++i) {
      c.extenders.push_back(DecodeExtender((*list)[i], IndexPath("extenders", i), p));
    }
  }
  if (!p.ok()) return p.error();

  ValidateConfiguration(c, profiles, p);
  if (!p.ok()) return p.error();
  ApplyExtenderIgnoredResources(c);
  return c;
}

Result<SchedulerConfiguration> LoadConfig(std::string_view yaml, std::string_view source,
                                          const Registry& registry) {
  auto docs = ParseDocuments(yaml, source);
  if (!docs.ok()) return docs.error();
  if (docs->size() != 1) {
    return Error{fmt::format("{}: expected one KubeSchedulerConfiguration document, found {}",
                             source, docs->size())};
  }
  if (IsLegacyConfigVersion((*docs)[0])) {
    // An older apiVersion runs as its v1 translation with that version's defaults.
    const std::string base_dir = std::filesystem::path(std::string(source)).parent_path().string();
    auto translated = TranslateLegacyConfig((*docs)[0], source, base_dir, registry);
    if (!translated.ok()) return translated.error();
    auto config = DecodeConfiguration(translated->config, registry);
    if (!config.ok())
      return Error{fmt::format("{}: translated {}: {}", source, (*docs)[0].value("apiVersion", ""),
                               config.error().message)};
    config->policy_configmap_namespace = translated->policy_configmap_namespace;
    config->policy_configmap_name = translated->policy_configmap_name;
    return config;
  }
  if (IsPolicy((*docs)[0])) {
    // A legacy Policy runs as its v1 translation (policy.h).
    auto translated = TranslatePolicy((*docs)[0], source, registry);
    if (!translated.ok()) return translated.error();
    auto config = DecodeConfiguration(translated->config, registry);
    if (!config.ok())
      return Error{fmt::format("{}: translated Policy: {}", source, config.error().message)};
    return config;
  }
  auto config = DecodeConfiguration((*docs)[0], registry);
  if (!config.ok()) return Error{fmt::format("{}: {}", source, config.error().message)};
  return config;
}

Result<SchedulerConfiguration> LoadConfigFile(const std::string& path, const Registry& registry) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) return text.error();
  return LoadConfig(*text, path, registry);
}

SchedulerConfiguration DefaultConfiguration(const Registry& registry) {
  nlohmann::json doc = {{"apiVersion", kConfigApiVersion}, {"kind", kConfigKind}};
  auto config = DecodeConfiguration(doc, registry);
  if (config.ok()) return std::move(config).value();
  // Only a registry whose decoders reject their own defaults gets here; run without args.
  SchedulerConfiguration fallback;
  Profile profile;
  profile.plugins = DefaultPlugins();
  fallback.profiles.push_back(std::move(profile));
  return fallback;
}

nlohmann::json EncodeConfiguration(const SchedulerConfiguration& c) {
  nlohmann::json out = {
      {"apiVersion", kConfigApiVersion},
      {"kind", kConfigKind},
      {"parallelism", c.parallelism},
      {"enableProfiling", c.enable_profiling},
      {"enableContentionProfiling", c.enable_contention_profiling},
      {"percentageOfNodesToScore", c.percentage_of_nodes_to_score},
      {"podInitialBackoffSeconds", c.pod_initial_backoff_seconds},
      {"podMaxBackoffSeconds", c.pod_max_backoff_seconds},
      {"delayCacheUntilActive", c.delay_cache_until_active},
  };
  const LeaderElection& le = c.leader_election;
  out["leaderElection"] = {
      {"leaderElect", le.leader_elect},
      {"leaseDuration", internal::FormatGoDurationMs(le.lease_duration_ms)},
      {"renewDeadline", internal::FormatGoDurationMs(le.renew_deadline_ms)},
      {"retryPeriod", internal::FormatGoDurationMs(le.retry_period_ms)},
      {"resourceLock", le.resource_lock},
      {"resourceName", le.resource_name},
      {"resourceNamespace", le.resource_namespace},
  };
  const ClientConnection& cc = c.client_connection;
  out["clientConnection"] = {
      {"kubeconfig", cc.kubeconfig},
      {"acceptContentTypes", cc.accept_content_types},
      {"contentType", cc.content_type},
      {"qps", EncodeNumber(cc.qps)},
      {"burst", cc.burst},
  };
  nlohmann::json profiles = nlohmann::json::array();
  for (const Profile& profile : c.profiles) profiles.push_back(EncodeProfile(profile));
  out["profiles"] = std::move(profiles);
  if (!c.extenders.empty()) {
    nlohmann::json extenders = nlohmann::json::array();
    for (const Extender& e : c.extenders) extenders.push_back(EncodeExtender(e));
    out["extenders"] = std::move(extenders);
  }
  return out;
}

std::string JsonToYaml(const nlohmann::json& doc) {
  YAML::Emitter out;
  out.SetIndent(2);
  out.SetSeqFormat(YAML::Block);
  out.SetMapFormat(YAML::Block);
  EmitYaml(out, doc);
  std::string text = out.c_str();
  if (text.empty() || text.back() != '\n') text += '\n';
  return text;
}

std::string AnnotatedYaml(std::string_view what, const std::vector<std::string>& notes,
                          const nlohmann::json& doc) {
  std::string out = fmt::format("# Translated from {}:\n", what);
  for (const auto& n : notes) out += "#   " + n + "\n";
  return out + JsonToYaml(doc);
}

std::string EncodeConfigurationYaml(const SchedulerConfiguration& config) {
  return JsonToYaml(EncodeConfiguration(config));
}

}  // namespace berth::config
