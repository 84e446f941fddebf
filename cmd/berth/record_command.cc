#include "record_command.h"

#include <fmt/format.h>
#include <signal.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "client/recorder.h"
#include "cluster_source.h"
#include "daemon/scheduler_flags.h"

namespace berth::cmd {
namespace {

int Fail(const std::string& message) {
  std::cerr << "berth record: " << message << "\n";
  return 1;
}

// Waits for SIGINT or SIGTERM (blocked in every thread, so only this wait sees them), or for
// `ms` milliseconds when positive. Returns the signal, or 0 when the time ran out.
int WaitForSignal(const sigset_t& set, int64_t ms) {
  for (;;) {
    int sig = 0;
    if (ms <= 0) {
      if (sigwait(&set, &sig) == 0) return sig;
      continue;
    }
    timespec ts{static_cast<time_t>(ms / 1000), static_cast<long>(ms % 1000) * 1000000L};
    sig = sigtimedwait(&set, nullptr, &ts);
    if (sig > 0) return sig;
    if (errno == EAGAIN) return 0;
    // EINTR: another signal; wait again (the remaining time restarts, which only lengthens
    // the recording by the time already waited).
  }
}

}  // namespace

CLI::App* AddRecordCommand(CLI::App& app, RecordCommand* c) {
  CLI::App* cmd = app.add_subcommand(
      "record",
      "Record a live cluster's changes (kube-scheduler-simulator's recorder format) "
      "for berth compare --replay");
  cmd->add_option("--kubeconfig", c->kubeconfig, "kubeconfig file (default $KUBECONFIG)");
  cmd->add_option("--context", c->context, "kubeconfig context");
  cmd->add_option("--master", c->master, "API server URL (overrides the kubeconfig's)");
  cmd->add_option("-o,--output", c->output, "The recording (JSON lines; - for standard output)")
      ->required();
  cmd->add_option("--duration", c->duration,
                  "Stop after this long (Go duration, e.g. 10m); 0s: at SIGINT or SIGTERM")
      ->capture_default_str();
  return cmd;
}

int RunRecordCommand(const RecordCommand& c) {
  auto ms = daemon::ParseGoDurationMs(c.duration, "--duration");
  if (!ms.ok()) return Fail(ms.error().message);
  // Block the stop signals before any thread starts: the watches inherit the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);

  auto rest = ConnectLive({c.kubeconfig, c.context, c.master});
  if (!rest.ok()) return Fail(rest.error().message);
  std::FILE* out = c.output == "-" ? stdout : std::fopen(c.output.c_str(), "w");
  if (!out) return Fail(fmt::format("{}: {}", c.output, std::strerror(errno)));
  client::RecordWriter writer(out);
  client::RecorderOptions options;
  options.log = [](const std::string& note) { std::cerr << "berth record: " << note << "\n"; };
  client::ClusterRecorder recorder(rest->get(), &writer, options);
  if (auto started = recorder.Start(); !started.ok()) {
    if (out != stdout) std::fclose(out);
    return Fail(started.error().message);
  }
  std::cerr << fmt::format(
      "berth record: recording {} to {}{}\n", fmt::join(recorder.kinds(), ", "), c.output,
      *ms > 0 ? fmt::format(" for {}", c.duration) : std::string(" until interrupted"));
  WaitForSignal(set, *ms);
  recorder.Stop();
  const bool failed = recorder.failed();
  if (out != stdout && std::fclose(out) != 0)
    return Fail(fmt::format("{}: write failed", c.output));
  if (failed) return Fail(fmt::format("{}: write failed; the recording is incomplete", c.output));
  std::cerr << fmt::format("berth record: {} changes written to {}\n", writer.lines(), c.output);
  return 0;
}

}  // namespace berth::cmd
