// `berth record [--kubeconfig FILE] -o HISTORY.jsonl [--duration D]`: a live cluster's changes
// in kube-scheduler-simulator's recorder format, until SIGINT/SIGTERM or the duration.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace berth::cmd {

struct RecordCommand {
  std::string kubeconfig, context, master;
  std::string output;           // file; "-": standard output
  std::string duration = "0s";  // 0: until a signal
};

CLI::App* AddRecordCommand(CLI::App& app, RecordCommand* command);
int RunRecordCommand(const RecordCommand& command);

}  // namespace berth::cmd
