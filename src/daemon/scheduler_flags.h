// The command line of `berth scheduler`: kube-scheduler's flags, with its precedence rules.
//
// kube-scheduler's rules, kept here so existing manifests work unchanged:
//   * Without --config, the deprecated flags (--kube-api-qps, --kube-api-burst,
//     --kube-api-content-type, --kubeconfig, --lock-object-*, --profiling, ...) and the
//     --leader-elect* flags are applied over the default configuration.
//   * With --config, the file wins over the deprecated flags (each one given is reported as
//     ignored); the --leader-elect* flags still override the file's leaderElection.
//   * --master overrides the server of the kubeconfig (or stands alone, for `kubectl proxy`).
//   * --feature-gates is parsed and validated as kube-scheduler does (config/feature_gates.h).
//   * Flags Berth does not need (authentication, authorization, TLS tuning, logging formats)
//     are accepted and reported once as ignored.
//
// Everything here runs on the main thread before the daemon starts.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/registry.h"
#include "config/types.h"

namespace CLI {
class App;
}

namespace berth::daemon {

struct SchedulerFlags {
  std::string config_file;
  std::string write_config_to;
  std::string master;
  std::string kubeconfig;  // deprecated flag; also the fallback when the config names none
  std::vector<std::string> policy_config_file;  // 0 or 1 entries
  std::string policy_configmap;
  std::string policy_configmap_namespace = "kube-system";
  std::vector<std::string> plugin_libraries;
  // Plugins compiled into this binary (berth::Main's), not a flag.
  std::vector<PluginRegistration> compiled_in;

  // Serving.
  std::string bind_address = "0.0.0.0";
  int secure_port = 10259;
  std::string cert_dir;
  std::string tls_cert_file;
  std::string tls_private_key_file;
  bool serve_plain_http = false;  // Berth's own: endpoints over HTTP instead of HTTPS

  // Logging.
  int verbosity = 0;

  // Deprecated flags, applied only without --config. Unset when not given.
  std::optional<double> kube_api_qps;
  std::optional<int> kube_api_burst;
  std::optional<std::string> kube_api_content_type;
  std::optional<std::string> lock_object_name;
  std::optional<std::string> lock_object_namespace;
  std::optional<bool> profiling;
  std::optional<bool> contention_profiling;
  std::optional<std::string> pod_max_in_unschedulable_pods_duration;

  // Leader election flags; applied over the file too. Unset when not given.
  std::optional<bool> leader_elect;
  std::optional<std::string> leader_elect_lease_duration;
  std::optional<std::string> leader_elect_renew_deadline;
  std::optional<std::string> leader_elect_retry_period;
  std::optional<std::string> leader_elect_resource_lock;
  std::optional<std::string> leader_elect_resource_name;
  std::optional<std::string> leader_elect_resource_namespace;

  // --feature-gates, each occurrence as given (config::ParseFeatureGatesFlags reads them).
  std::vector<std::string> feature_gates;

  // Berth's own.
  bool record_decisions = false;

  // Flags accepted for compatibility and ignored (names as given), and unknown ones.
  std::vector<std::string> ignored;
};

// Registers kube-scheduler's flags on `cmd`, writing into `flags`. The command accepts unknown
// flags (collect them with CollectIgnoredFlags after parsing).
void AddSchedulerFlags(CLI::App* cmd, SchedulerFlags* flags);

// Registers --feature-gates (repeatable) on `cmd`, collecting each occurrence into `values`.
void AddFeatureGatesFlag(CLI::App* cmd, std::vector<std::string>* values);

// Rewrites pflag spellings CLI11 does not take (`-v=4` -> `--v=4`) in place.
void NormalizeKubeFlags(std::vector<std::string>& args);

// After parsing: records the compatibility-only flags that were given and the unknown ones.
void CollectIgnoredFlags(const CLI::App& cmd, SchedulerFlags* flags);

// Parses a Go duration ("15s", "1m30s", "500ms", "2h"); `what` names the flag in errors.
Result<int64_t> ParseGoDurationMs(std::string_view text, std::string_view what);

// Applies the flags to the configuration with kube-scheduler's precedence (see above).
// `warnings` receives one line per flag that was ignored because --config was given.
VoidResult ApplyFlags(const SchedulerFlags& flags, config::SchedulerConfiguration* config,
                      std::vector<std::string>* warnings);

// The deprecated --pod-max-in-unschedulable-pods-duration, in milliseconds (default 5 minutes).
Result<int64_t> PodMaxInUnschedulablePodsDurationMs(const SchedulerFlags& flags);

}  // namespace berth::daemon
