#include "daemon/scheduler_flags.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <charconv>
#include <cmath>

namespace berth::daemon {
namespace {

// Flags kube-scheduler has that Berth accepts and ignores: they tune serving, delegated
// authentication/authorization and logging formats, none of which change what
// Berth decides. Each takes a value.
constexpr const char* kIgnoredValueFlags[] = {
    "--authentication-kubeconfig",
    "--authentication-token-webhook-cache-ttl",
    "--authorization-kubeconfig",
    "--authorization-always-allow-paths",
    "--authorization-webhook-cache-authorized-ttl",
    "--authorization-webhook-cache-unauthorized-ttl",
    "--client-ca-file",
    "--requestheader-allowed-names",
    "--requestheader-client-ca-file",
    "--requestheader-extra-headers-prefix",
    "--requestheader-group-headers",
    "--requestheader-uid-headers",
    "--requestheader-username-headers",
    "--tls-cipher-suites",
    "--tls-min-version",
    "--tls-sni-cert-key",
    "--http2-max-streams-per-connection",
    "--show-hidden-metrics-for-version",
    "--disabled-metrics",
    "--allow-metric-labels",
    "--allow-metric-labels-manifest",
    "--vmodule",
    "--logging-format",
    "--log-flush-frequency",
    "--log-text-info-buffer-size",
    "--log-json-info-buffer-size",
    "--emulated-version",
};
// Boolean flags accepted and ignored.
constexpr const char* kIgnoredBoolFlags[] = {
    "--authentication-skip-lookup", "--authentication-tolerate-lookup-failure",
    "--permit-address-sharing",     "--permit-port-sharing",
    "--log-text-split-stream",      "--log-json-split-stream",
};

const std::string kIgnoredHelp = "Accepted for compatibility; ignored";

template <class T>
void AddOptional(CLI::App* cmd, const std::string& name, std::optional<T>* out,
                 const std::string& help) {
  cmd->add_option_function<T>(
      name, [out](const T& v) { *out = v; }, help);
}

void AddOptionalBool(CLI::App* cmd, const std::string& name, std::optional<bool>* out,
                     const std::string& help) {
  // pflag booleans: `--flag` means true, `--flag=false` false.
  cmd->add_flag_function(
      name + "{true}", [out](int64_t count) { *out = count > 0; }, help);
}

}  // namespace

void NormalizeKubeFlags(std::vector<std::string>& args) {
  for (auto& a : args) {
    if (a.rfind("-v=", 0) == 0) a = "-" + a;  // -v=4 -> --v=4
  }
}

void AddFeatureGatesFlag(CLI::App* cmd, std::vector<std::string>* values) {
  // One value per occurrence; occurrences accumulate as pflag's Set calls do.
  cmd->add_option("--feature-gates", *values,
                  "A set of key=value pairs that describe feature gates for alpha/experimental "
                  "features (kube-scheduler v1.37's gates; docs/configuration.md)")
      ->allow_extra_args(false);
}

void AddSchedulerFlags(CLI::App* cmd, SchedulerFlags* f) {
  cmd->allow_extras();
  cmd->add_option("--config", f->config_file, "The path to the configuration file");
  cmd->add_option("--write-config-to", f->write_config_to,
                  "If set, write the configuration values to this file and exit");
  cmd->add_option("--master", f->master,
                  "The address of the Kubernetes API server (overrides any value in kubeconfig)");
  cmd->add_option("--kubeconfig", f->kubeconfig,
                  "Path to kubeconfig file with authorization and master location information "
                  "(deprecated: use clientConnection.kubeconfig in --config)");
  cmd->add_option("--policy-config-file", f->policy_config_file,
                  "File with a legacy scheduler Policy (kind: Policy)")
      ->expected(0, 1);
  cmd->add_option("--policy-configmap", f->policy_configmap,
                  "Name of the ConfigMap holding a legacy Policy under key policy.cfg");
  cmd->add_option("--policy-configmap-namespace", f->policy_configmap_namespace,
                  "Namespace of --policy-configmap");
  cmd->add_option("--plugin-library", f->plugin_libraries,
                  "Shared library with scheduler plugins to load (repeatable)");

  cmd->add_option("--bind-address", f->bind_address,
                  "The IP address on which to listen for the --secure-port port");
  cmd->add_option("--secure-port", f->secure_port,
                  "The port on which to serve HTTPS (health, metrics); 0 turns serving off");
  cmd->add_option("--cert-dir", f->cert_dir, "Directory of the TLS certificate (self-signed)");
  cmd->add_option("--tls-cert-file", f->tls_cert_file, "File with the serving certificate");
  cmd->add_option("--tls-private-key-file", f->tls_private_key_file,
                  "File with the serving certificate's private key");
  cmd->add_flag("--serve-plain-http", f->serve_plain_http,
                "Serve the endpoints over plain HTTP instead of HTTPS");

  cmd->add_option("-v,--v", f->verbosity, "Number for the log level verbosity");

  AddOptional(cmd, "--kube-api-qps", &f->kube_api_qps,
              "QPS to use while talking with kubernetes apiserver (deprecated)");
  AddOptional(cmd, "--kube-api-burst", &f->kube_api_burst,
              "Burst to use while talking with kubernetes apiserver (deprecated)");
  AddOptional(cmd, "--kube-api-content-type", &f->kube_api_content_type,
              "Content type of requests sent to apiserver (deprecated)");
  AddOptional(cmd, "--lock-object-name", &f->lock_object_name,
              "Name of the lock object (deprecated: use --leader-elect-resource-name)");
  AddOptional(cmd, "--lock-object-namespace", &f->lock_object_namespace,
              "Namespace of the lock object (deprecated)");
  AddOptionalBool(cmd, "--profiling", &f->profiling, "Enable profiling (deprecated)");
  AddOptionalBool(cmd, "--contention-profiling", &f->contention_profiling,
                  "Enable lock contention profiling (deprecated)");
  AddOptional(cmd, "--pod-max-in-unschedulable-pods-duration",
              &f->pod_max_in_unschedulable_pods_duration,
              "The maximum time a pod can stay in the unschedulable pool (default 5m0s)");

  AddOptionalBool(cmd, "--leader-elect", &f->leader_elect,
                  "Start a leader election client and gain leadership before scheduling");
  AddOptional(cmd, "--leader-elect-lease-duration", &f->leader_elect_lease_duration,
              "The duration that non-leader candidates will wait before acquiring leadership");
  AddOptional(cmd, "--leader-elect-renew-deadline", &f->leader_elect_renew_deadline,
              "The interval between attempts by the acting leader to renew its leadership");
  AddOptional(cmd, "--leader-elect-retry-period", &f->leader_elect_retry_period,
              "The duration clients wait between attempts to acquire or renew leadership");
  AddOptional(cmd, "--leader-elect-resource-lock", &f->leader_elect_resource_lock,
              "The type of resource object used for locking (leases)");
  AddOptional(cmd, "--leader-elect-resource-name", &f->leader_elect_resource_name,
              "The name of the resource object used for locking");
  AddOptional(cmd, "--leader-elect-resource-namespace", &f->leader_elect_resource_namespace,
              "The namespace of the resource object used for locking");

  AddFeatureGatesFlag(cmd, &f->feature_gates);

  cmd->add_flag("--record-decisions", f->record_decisions,
                "Annotate pods with per-node filter and score results");

  for (const char* name : kIgnoredValueFlags) {
    cmd->add_option(name, kIgnoredHelp)->group("Ignored");
  }
  for (const char* name : kIgnoredBoolFlags) {
    cmd->add_flag(std::string(name) + "{true}", kIgnoredHelp)->group("Ignored");
  }
}

void CollectIgnoredFlags(const CLI::App& cmd, SchedulerFlags* f) {
  for (const char* name : kIgnoredValueFlags) {
    if (cmd.count(name) > 0) f->ignored.push_back(name);
  }
  for (const char* name : kIgnoredBoolFlags) {
    if (cmd.count(name) > 0) f->ignored.push_back(name);
  }
  for (const auto& extra : cmd.remaining()) {
    if (extra.rfind("-", 0) == 0) f->ignored.push_back(extra.substr(0, extra.find('=')));
  }
}

Result<int64_t> ParseGoDurationMs(std::string_view text, std::string_view what) {
  auto bad = [&] {
    return Error{
        fmt::format("{}: invalid duration \"{}\" (want e.g. 15s, 1m30s, 500ms)", what, text),
        ErrorCode::kInvalid};
  };
  if (text.empty()) return bad();
  if (text == "0") return int64_t{0};
  double total_ms = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t i = 0;
    while (i < rest.size() && (std::isdigit(static_cast<unsigned char>(rest[i])) || rest[i] == '.'))
      ++i;
    if (i == 0) return bad();
    double value = 0;
    auto [ptr, ec] = std::from_chars(rest.data(), rest.data() + i, value);
    if (ec != std::errc() || ptr != rest.data() + i) return bad();
    rest.remove_prefix(i);
    size_t j = 0;
    while (j < rest.size() && std::isalpha(static_cast<unsigned char>(rest[j]))) ++j;
    std::string_view unit = rest.substr(0, j);
    rest.remove_prefix(j);
    double scale;
    if (unit == "h") {
      scale = 3600e3;
    } else if (unit == "m") {
      scale = 60e3;
    } else if (unit == "s") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1;
    } else if (unit == "us" || unit == "µs") {
      scale = 1e-3;
    } else if (unit == "ns") {
      scale = 1e-6;
    } else {
      return bad();
    }
    total_ms += value * scale;
  }
  // Bounded so that conversions to nanoseconds downstream cannot overflow.
  if (!std::isfinite(total_ms) || total_ms > 1e12) return bad();
  return static_cast<int64_t>(std::llround(total_ms));
}

VoidResult ApplyFlags(const SchedulerFlags& f, config::SchedulerConfiguration* c,
                      std::vector<std::string>* warnings) {
  const bool with_file = !f.config_file.empty();
  auto deprecated = [&](bool given, std::string_view name, auto apply) {
    if (!given) return;
    if (with_file) {
      warnings->push_back(fmt::format(
          "flag {} is ignored because --config is set; set it in the configuration file", name));
    } else {
      apply();
    }
  };
  // --kubeconfig with --config: kube-scheduler ignores the flag and, when the file names no
  // kubeconfig either, tries the in-cluster configuration. Berth uses the flag in that case
  // (docs/deploy.md, deliberate differences): the file has nothing to override it with.
  if (!f.kubeconfig.empty()) {
    if (!with_file) {
      c->client_connection.kubeconfig = f.kubeconfig;
    } else if (c->client_connection.kubeconfig.empty()) {
      c->client_connection.kubeconfig = f.kubeconfig;
      warnings->push_back(
          "flag --kubeconfig is used because the configuration file sets no "
          "clientConnection.kubeconfig (kube-scheduler would ignore it when --config is set)");
    } else {
      warnings->push_back(
          "flag --kubeconfig is ignored because the configuration file sets "
          "clientConnection.kubeconfig");
    }
  }
  deprecated(f.kube_api_qps.has_value(), "--kube-api-qps",
             [&] { c->client_connection.qps = static_cast<float>(*f.kube_api_qps); });
  deprecated(f.kube_api_burst.has_value(), "--kube-api-burst",
             [&] { c->client_connection.burst = *f.kube_api_burst; });
  deprecated(f.kube_api_content_type.has_value(), "--kube-api-content-type",
             [&] { c->client_connection.content_type = *f.kube_api_content_type; });
  deprecated(f.profiling.has_value(), "--profiling", [&] { c->enable_profiling = *f.profiling; });
  deprecated(f.contention_profiling.has_value(), "--contention-profiling",
             [&] { c->enable_contention_profiling = *f.contention_profiling; });
  deprecated(f.lock_object_name.has_value(), "--lock-object-name",
             [&] { c->leader_election.resource_name = *f.lock_object_name; });
  deprecated(f.lock_object_namespace.has_value(), "--lock-object-namespace",
             [&] { c->leader_election.resource_namespace = *f.lock_object_namespace; });

  // Leader election flags apply with or without a file.
  auto& le = c->leader_election;
  if (f.leader_elect) le.leader_elect = *f.leader_elect;
  auto duration = [](const std::optional<std::string>& v, std::string_view name,
                     int64_t* out) -> VoidResult {
    if (!v) return {};
    auto ms = ParseGoDurationMs(*v, name);
    if (!ms.ok()) return ms.error();
    *out = *ms;
    return {};
  };
  if (auto r = duration(f.leader_elect_lease_duration, "--leader-elect-lease-duration",
                        &le.lease_duration_ms);
      !r.ok())
    return r;
  if (auto r = duration(f.leader_elect_renew_deadline, "--leader-elect-renew-deadline",
                        &le.renew_deadline_ms);
      !r.ok())
    return r;
  if (auto r =
          duration(f.leader_elect_retry_period, "--leader-elect-retry-period", &le.retry_period_ms);
      !r.ok())
    return r;
  if (f.leader_elect_resource_lock) le.resource_lock = *f.leader_elect_resource_lock;
  if (f.leader_elect_resource_name) le.resource_name = *f.leader_elect_resource_name;
  if (f.leader_elect_resource_namespace) {
    le.resource_namespace = *f.leader_elect_resource_namespace;
  }
  if (le.leader_elect) {
    if (le.lease_duration_ms <= le.renew_deadline_ms) {
      return Error{"leaderElection: leaseDuration must be greater than renewDeadline",
                   ErrorCode::kInvalid};
    }
    if (le.resource_lock != "leases") {
      return Error{fmt::format("leaderElection.resourceLock: unsupported value \"{}\": "
                               "supported values: \"leases\"",
                               le.resource_lock),
                   ErrorCode::kInvalid};
    }
  }
  return {};
}

Result<int64_t> PodMaxInUnschedulablePodsDurationMs(const SchedulerFlags& f) {
  if (!f.pod_max_in_unschedulable_pods_duration) return int64_t{5 * 60 * 1000};
  return ParseGoDurationMs(*f.pod_max_in_unschedulable_pods_duration,
                           "--pod-max-in-unschedulable-pods-duration");
}

}  // namespace berth::daemon
