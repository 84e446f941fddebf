// `berth compare --config A.yaml --config B.yaml [--config C.yaml ...] (-f CLUSTER | --replay
// HISTORY.jsonl) [-o text|json|html]`: the same input through each configuration, pod by pod.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "berth/framework/registry.h"

namespace berth::cmd {

struct CompareCommand {
  std::vector<std::string> configs;  // files; "default": the default configuration
  std::vector<std::string> files;
  bool recursive = false;
  std::string replay;  // a recording (berth record, sched-recorder)
  std::string output = "text";
  uint64_t seed = 1;
  std::string shape;
  int shape_max = 10000;
  int explain = 200;
  std::vector<std::string> plugin_libraries;
  std::vector<std::string> feature_gates;  // --feature-gates occurrences
  std::vector<PluginRegistration> compiled_in;
};

// Exit codes (docs/compare.md): 0 the comparison ran (whether or not anything differs);
// 1 a configuration, the cluster file or the recording could not be read or is invalid (the
// message names the file and the field); 2 the command line asks for no comparison (fewer than
// two configurations, no input or two).
inline constexpr int kCompareInputError = 1;
inline constexpr int kCompareUsageError = 2;

CLI::App* AddCompareCommand(CLI::App& app, CompareCommand* command);
int RunCompareCommand(const CompareCommand& command);

}  // namespace berth::cmd
