// Decoding of kubescheduler.config.k8s.io/v1 documents (load_stages.h): strict, field by
// field, every problem named by its YAML path. Defaults are applied by the next stage.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "config/decode_util.h"
#include "config/load.h"
#include "config/load_stages.h"
#include "config/plugin_args_codec.h"

namespace berth::config::internal {
namespace {

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

}  // namespace

Result<DecodedConfiguration> DecodeV1(const nlohmann::json& doc, const Registry& registry,
                                      Problems& p) {
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
  DecodedConfiguration out;
  SchedulerConfiguration& c = out.config;
  if (auto v = f.Int32("parallelism")) c.parallelism = *v;
  DecodeLeaderElection(f.Get("leaderElection"), "leaderElection", c.leader_election, p);
  DecodeClientConnection(f.Get("clientConnection"), "clientConnection", c.client_connection, p);
  c.enable_profiling = f.Bool("enableProfiling").value_or(true);
  c.enable_contention_profiling = f.Bool("enableContentionProfiling").value_or(c.enable_profiling);
  if (auto v = f.Int32("percentageOfNodesToScore")) c.percentage_of_nodes_to_score = *v;
  if (auto v = f.Int64("podInitialBackoffSeconds")) c.pod_initial_backoff_seconds = *v;
  if (auto v = f.Int64("podMaxBackoffSeconds")) c.pod_max_backoff_seconds = *v;
  c.delay_cache_until_active = f.Bool("delayCacheUntilActive").value_or(false);

  if (auto list = f.List("profiles")) {
    for (size_t i = 0; i < list->size(); ++i) {
      out.profiles.push_back(DecodeProfile((*list)[i], IndexPath("profiles", i), registry, p));
    }
  }
  if (auto list = f.List("extenders")) {
    for (size_t i = 0; i < list->size(); ++i) {
      c.extenders.push_back(DecodeExtender((*list)[i], IndexPath("extenders", i), p));
    }
  }
  return out;
}

}  // namespace berth::config::internal
