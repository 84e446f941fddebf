// The configuration model as a kubescheduler.config.k8s.io/v1 document (what `berth config
// print-defaults` and /configz show); loading the document again yields the same model.
#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "config/decode_util.h"
#include "config/load.h"
#include "config/load_stages.h"
#include "config/plugin_args_codec.h"

namespace berth::config {
namespace internal {

nlohmann::json EncodeArgs(const PluginConfig& config) {
  if (config.args) {
    nlohmann::json out = nlohmann::json::object();
    config.args->Encode(out);
    return out;
  }
  if (config.raw_args) return *config.raw_args;
  return nullptr;
}

}  // namespace internal

namespace {

using internal::EncodeArgs;
using internal::ExtensionPoint;
using internal::kExtensionPoints;

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

}  // namespace

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

std::string EncodeConfigurationYaml(const SchedulerConfiguration& config) {
  return JsonToYaml(EncodeConfiguration(config));
}

}  // namespace berth::config
