// Validation of a defaulted v1 configuration (load_stages.h), with kube-scheduler's rules and
// messages.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "config/in_tree_plugins.h"
#include "config/load_stages.h"
#include "config/plugin_args_codec.h"

namespace berth::config::internal {
namespace {

// Plugins removed from the v1 API (the in-tree table's kRemoved); naming them is an error.
bool IsRemovedPlugin(std::string_view name) {
  const InTreePlugin* plugin = FindInTreePlugin(name);
  return plugin != nullptr && plugin->status == PluginStatus::kRemoved;
}

std::string RemovedPluginProblem(std::string_view name) {
  return fmt::format("invalid value {}: invalid plugin name, removed in {}", Quote(name),
                     kConfigApiVersion);
}

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

}  // namespace

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

}  // namespace berth::config::internal
