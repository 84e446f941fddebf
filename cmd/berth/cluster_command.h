// `berth cluster` (simulated nodes, kubelets and controllers against any API server) and
// `berth node stop|start NAME...`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "daemon/cluster.h"

namespace berth::cmd {

struct ClusterCommand {
  CLI::App* cluster = nullptr;
  CLI::App* node_stop = nullptr;
  CLI::App* node_start = nullptr;
  daemon::ClusterOptions options;
  std::string zones;                       // comma-separated
  std::vector<std::string> labels;         // key=value
  std::vector<std::string> feature_gates;  // --feature-gates, each occurrence
  std::string node_kubeconfig, node_data_dir;
  std::vector<std::string> node_names;
};

// kube-controller-manager's --controllers on `app`, into `controllers`: a comma-separated list
// ('*', 'name', '-name'); "--controllers=" (empty) selects none.
CLI::Option* AddControllersOption(CLI::App* app, std::vector<std::string>* controllers,
                                  const std::string& description);

// Adds the `cluster` and `node` subcommands to `app`.
void AddClusterCommands(CLI::App& app, ClusterCommand* command);
// Runs whichever was parsed; nullopt when neither was.
std::optional<int> RunClusterCommands(ClusterCommand& command);

}  // namespace berth::cmd
