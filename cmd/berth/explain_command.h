// `berth explain POD [-n NS] (-f MANIFESTS | --kubeconfig FILE) [--config FILE] [-o text|json]`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "berth/framework/registry.h"

namespace berth::cmd {

struct ExplainCommand {
  std::string pod;
  std::string namespace_ = "default";
  std::vector<std::string> files;  // empty: read the cluster from the API server
  bool recursive = false;
  std::string kubeconfig, context, master;
  std::string config;
  std::string output = "text";
  uint64_t seed = 1;
  std::vector<std::string> plugin_libraries;
  std::vector<std::string> feature_gates;  // --feature-gates occurrences
  std::vector<PluginRegistration> compiled_in;
};

CLI::App* AddExplainCommand(CLI::App& app, ExplainCommand* command);
int RunExplainCommand(const ExplainCommand& command);

}  // namespace berth::cmd
