#include "cluster_command.h"

#include <cstdio>
#include <sstream>

#include "api/tolerations.h"
#include "config/feature_gates.h"
#include "daemon/scheduler_flags.h"

namespace berth::cmd {
namespace {

std::vector<std::string> SplitCommas(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

}  // namespace

CLI::Option* AddControllersOption(CLI::App* app, std::vector<std::string>* controllers,
                                  const std::string& description) {
  // A string split here rather than a list option: CLI11 reads "--controllers=" followed by
  // another flag as a list that takes that flag.
  return app
      ->add_option_function<std::string>(
          "--controllers",
          [controllers](const std::string& value) { *controllers = SplitCommas(value); },
          description)
      ->expected(0, 1);
}

void AddClusterCommands(CLI::App& app, ClusterCommand* c) {
  c->cluster = app.add_subcommand(
      "cluster", "Run simulated nodes, their kubelets and the controllers against an API server");
  auto* cl = c->cluster;
  auto& o = c->options;
  cl->add_option("--kubeconfig", o.kubeconfig, "Kubeconfig of the API server")->required();
  cl->add_option("--nodes", o.nodes, "Nodes to create (kept if they exist)")->capture_default_str();
  cl->add_option("--node-name-prefix", o.shape.name_prefix, "Node names: PREFIX-001, ...")
      ->capture_default_str();
  cl->add_option("--node-cpu", o.shape.cpu, "CPU of each node (default 8, every fourth 16)");
  cl->add_option("--node-memory", o.shape.memory,
                 "Memory of each node (default 32Gi, every fourth 64Gi)");
  cl->add_option("--node-pods", o.shape.pods, "Pods per node")->capture_default_str();
  cl->add_option("--node-zones", c->zones, "Zones to spread the nodes over (default zone-a,b,c)");
  cl->add_option("--node-labels", c->labels, "Labels of every node (key=value, repeatable)")
      ->delimiter(',');
  cl->add_flag("--no-kubelets", o.no_kubelets, "Run no simulated kubelets");
  AddControllersOption(cl, &o.runtime.controllers,
                       "Controllers to run, as kube-controller-manager's ('*', 'name', '-name')");
  // kube-controller-manager's: the controllers honour TaintTolerationComparisonOperators.
  daemon::AddFeatureGatesFlag(cl, &c->feature_gates);
  cl->add_option("--node-monitor-grace-period", o.runtime.node_monitor_grace_period,
                 "A node is NotReady/Unknown after this long without a heartbeat (Go duration)")
      ->capture_default_str();
  cl->add_option("--terminated-pod-gc-threshold", o.runtime.terminated_pod_gc_threshold,
                 "Finished pods (Succeeded, Failed) kept before the oldest are deleted (0: keep "
                 "all)")
      ->capture_default_str();
  cl->add_option("--node-devices", o.runtime.node_devices,
                 "Simulated kubelets: DRA devices the nodes publish as ResourceSlices (YAML file)");
  cl->add_option("--pod-start-delay", o.runtime.pod_start_delay,
                 "Simulated kubelets: how long a bound pod stays Pending (Go duration)")
      ->capture_default_str();
  cl->add_option("--max-termination-grace", o.runtime.max_termination_grace,
                 "Simulated kubelets: longest a deleted pod stays Terminating (Go duration)")
      ->capture_default_str();
  cl->add_option("--node-lease-renew-interval", o.runtime.node_lease_renew_interval,
                 "Simulated kubelets: how often each node's Lease is renewed (Go duration)")
      ->capture_default_str();
  cl->add_option("--node-status-report-interval", o.runtime.node_status_report_interval,
                 "Simulated kubelets: how often an unchanged node status is posted (Go duration)")
      ->capture_default_str();
  cl->add_option("--cluster-cidr", o.runtime.cluster_cidr,
                 "Simulated kubelets: pod CIDRs are cut from this range for nodes without one "
                 "(default 10.64.0.0/10)");
  cl->add_option("--node-cidr-mask-size", o.runtime.node_cidr_mask_size,
                 "Simulated kubelets: prefix length of each node's pod CIDR (default 24)");

  auto* node = app.add_subcommand("node", "Stop or start a node's simulated kubelet");
  node->require_subcommand(1);
  for (auto** sub : {&c->node_stop, &c->node_start}) {
    const bool stop = sub == &c->node_stop;
    *sub = node->add_subcommand(stop ? "stop" : "start",
                                stop ? "Stop nodes: no lease, no status, pods left as they are"
                                     : "Start stopped nodes again");
    (*sub)->add_option("names", c->node_names, "Node names")->required();
    (*sub)->add_option("--kubeconfig", c->node_kubeconfig,
                       "Kubeconfig (default: the data directory's)");
    (*sub)->add_option("--data-dir", c->node_data_dir, "berth up's data directory");
  }
}

std::optional<int> RunClusterCommands(ClusterCommand& c) {
  if (*c.node_stop || *c.node_start) {
    return daemon::RunNodeCommand(c.node_kubeconfig, c.node_data_dir, c.node_names,
                                  bool(*c.node_stop));
  }
  if (!*c.cluster) return std::nullopt;
  c.options.shape.zones = SplitCommas(c.zones);
  for (const std::string& label : c.labels) {
    const auto eq = label.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "berth cluster: --node-labels: \"%s\" is not key=value\n",
                   label.c_str());
      return 2;
    }
    c.options.shape.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  std::vector<std::string> warnings;
  auto gates = config::ParseFeatureGatesFlags(c.feature_gates, &warnings);
  if (!gates.ok()) {
    std::fprintf(stderr, "berth cluster: %s\n", gates.error().message.c_str());
    return 2;
  }
  for (const std::string& w : warnings) std::fprintf(stderr, "berth cluster: %s\n", w.c_str());
  c.options.runtime.taint_toleration_comparison_operators =
      gates->Enabled(kTaintTolerationComparisonOperatorsGate);
  return daemon::RunCluster(c.options);
}

}  // namespace berth::cmd
