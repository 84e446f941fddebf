// `berth extender <name> [flags]`: runs one of the example extenders built with the SDK.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "extender/examples.h"

namespace berth::cmd {

struct ExtenderCommand {
  CLI::App* label_rule = nullptr;
  CLI::App* network_traffic = nullptr;
  std::string bind_address = "127.0.0.1";
  uint16_t port = 8888;
  std::string tls_cert_file, tls_key_file;
  int threads = 4;
  std::string label, nodes;
  extender::LabelRuleOptions label_rule_options;
  extender::NetworkTrafficOptions network_traffic_options;
};

// Adds the `extender` subcommand and its examples to `app`; returns the subcommand.
CLI::App* AddExtenderCommand(CLI::App& app, ExtenderCommand* command);
// Serves the chosen example until SIGINT/SIGTERM; returns the exit code.
int RunExtenderCommand(ExtenderCommand& command);

}  // namespace berth::cmd
