// KubeSchedulerConfiguration as plain data: what the loader (load.h) produces after decoding,
// defaulting and validating a file, and what the framework builds profiles from.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "berth/framework/registry.h"

namespace berth::config {

struct PluginRef {
  std::string name;
  int32_t weight = 0;  // 0 = unset (score plugins then default to 1)
};

struct PluginSet {
  std::vector<PluginRef> enabled;
  std::vector<std::string> disabled;  // "*" disables every default at this point
};

// Plugins per extension point. After loading, each set holds the merged result of the defaults
// and the user's configuration (see load.h); multi_point is expanded by the framework.
struct Plugins {
  PluginSet pre_enqueue, queue_sort, pre_filter, filter, post_filter, pre_score, score, reserve,
      permit, pre_bind, bind, post_bind, multi_point;
};

struct PluginConfig {
  std::string name;
  std::shared_ptr<const PluginArgs> args;  // decoded and validated
  // Args of a plugin the registry has no decoder for (out-of-tree or unknown names, and in-tree
  // plugins that take no args), kept verbatim as kube-scheduler passes them through; null when
  // `args` is set or none were given.
  std::shared_ptr<const nlohmann::json> raw_args;
};

struct Profile {
  std::string scheduler_name = "default-scheduler";
  std::optional<int32_t> percentage_of_nodes_to_score;
  Plugins plugins;
  std::vector<PluginConfig> plugin_config;

  // Args for the named plugin, or null.
  const PluginArgs* ArgsFor(std::string_view plugin) const;
};

struct ExtenderTLSConfig {
  bool insecure = false;
  std::string server_name, cert_file, key_file, ca_file;
  std::string cert_data, key_data, ca_data;  // base64 as in the file
};

struct ExtenderManagedResource {
  std::string name;
  bool ignored_by_scheduler = false;
};

struct Extender {
  std::string url_prefix;
  std::string filter_verb, preempt_verb, prioritize_verb, bind_verb;
  int64_t weight = 0;
  bool enable_https = false;
  std::optional<ExtenderTLSConfig> tls_config;
  int64_t http_timeout_ms = 5000;
  bool node_cache_capable = false;
  std::vector<ExtenderManagedResource> managed_resources;
  bool ignorable = false;
};

struct LeaderElection {
  bool leader_elect = true;
  int64_t lease_duration_ms = 15000;
  int64_t renew_deadline_ms = 10000;
  int64_t retry_period_ms = 2000;
  std::string resource_lock = "leases";
  std::string resource_name = "kube-scheduler";
  std::string resource_namespace = "kube-system";
};

struct ClientConnection {
  std::string kubeconfig;
  std::string accept_content_types;
  std::string content_type = "application/vnd.kubernetes.protobuf";
  float qps = 50;
  int32_t burst = 100;
};

struct SchedulerConfiguration {
  int32_t parallelism = 16;
  LeaderElection leader_election;
  ClientConnection client_connection;
  bool enable_profiling = true;
  bool enable_contention_profiling = true;
  int32_t percentage_of_nodes_to_score = 0;  // 0 = adaptive
  int64_t pod_initial_backoff_seconds = 1;
  int64_t pod_max_backoff_seconds = 10;
  bool delay_cache_until_active = false;
  std::vector<Profile> profiles;
  std::vector<Extender> extenders;
  // A legacy Policy to read through the API (v1alpha1 algorithmSource.policy.configMap).
  std::string policy_configmap_namespace, policy_configmap_name;
};

}  // namespace berth::config
