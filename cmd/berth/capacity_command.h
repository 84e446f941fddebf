// `berth capacity -f POD [-f MANIFESTS ... | --kubeconfig FILE] [--config FILE] [--max N]`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "berth/framework/registry.h"

namespace berth::cmd {

struct CapacityCommand {
  std::vector<std::string> files;  // the pod template first, then the cluster's manifests
  bool recursive = false;
  std::string kubeconfig, master, context;
  std::string config;
  int max = 10000;
  std::string output = "table";
  uint64_t seed = 1;
  std::vector<std::string> plugin_libraries;
  std::vector<std::string> feature_gates;  // --feature-gates occurrences
  std::vector<PluginRegistration> compiled_in;
};

CLI::App* AddCapacityCommand(CLI::App& app, CapacityCommand* command);
int RunCapacityCommand(const CapacityCommand& command);

}  // namespace berth::cmd
