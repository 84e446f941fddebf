// ConfigReloader: the daemon's side of a live configuration reload (`berth scheduler`,
// `berth up`). A new content of the --config file (ConfigFileWatcher, or SIGHUP through
// RequestCheck) is loaded as at start (decoded, defaulted, validated, the command's flags
// applied) on the watcher's thread; a configuration that loads is handed to the scheduling loop
// (Scheduler::RequestReload), which applies it between two cycles and reports back on its
// thread. Either way the outcome is a log line and the berth_config_* metrics; a refused
// configuration leaves the running one in place.
//
// Only the profiles, the extenders and percentageOfNodesToScore are reloaded; other fields
// (clientConnection, leaderElection, parallelism, the backoff durations) are used at start and
// a change to them is reported as needing a restart.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "berth/framework/clock.h"
#include "berth/framework/registry.h"
#include "config/types.h"
#include "daemon/config_watcher.h"
#include "observe/log.h"
#include "observe/metrics.h"
#include "scheduler/scheduler.h"

namespace berth::daemon {

struct ConfigReloaderOptions {
  std::string path;  // the --config file
  const Registry* registry = nullptr;
  // The file's text as the configuration the command runs with; unset: config::LoadConfig.
  std::function<Result<config::SchedulerConfiguration>(const std::string& text,
                                                       const Registry& registry)>
      load;
  Scheduler* scheduler = nullptr;
  observe::Logger* log = nullptr;
  observe::MetricsRegistry* metrics = nullptr;  // the berth_config_* families are added to it
  const Clock* clock = nullptr;
  // Called on the scheduling thread with each configuration a reload applied.
  std::function<void(const config::SchedulerConfiguration&)> on_reloaded;
};

// The fields of `next` that differ from `running` and are not reloaded (top-level YAML names).
std::vector<std::string> FieldsNeedingRestart(const config::SchedulerConfiguration& running,
                                              const config::SchedulerConfiguration& next);

class ConfigReloader {
 public:
  // `running`: the configuration the scheduler was created with; `running_hash`: the
  // ContentHash of the file text it came from.
  ConfigReloader(ConfigReloaderOptions options, const config::SchedulerConfiguration& running,
                 std::string running_hash);
  ~ConfigReloader();

  // Polls the file every second from a thread of the watcher's.
  void StartWatching();
  // Ends the polls: nothing is handed to the scheduler afterwards.
  void StopWatching() { watcher_.Stop(); }
  // Reads the file now (SIGHUP). Any thread.
  void RequestCheck();
  // A new content of the file: loads it and hands it to the scheduler (the watcher's callback).
  void OnChange(const ConfigFileWatcher::Change& change);
  // The configuration in use (/configz). Any thread.
  std::shared_ptr<const config::SchedulerConfiguration> running() const;
  ConfigFileWatcher& watcher() { return watcher_; }

 private:
  void Refuse(const std::string& hash, const std::string& message);
  void Applied(const std::string& hash, std::shared_ptr<const config::SchedulerConfiguration> next,
               const ReloadResult& result);

  const ConfigReloaderOptions options_;
  observe::MetricFamily* reloads_ = nullptr;
  observe::MetricFamily* last_reload_ = nullptr;
  observe::MetricFamily* last_duration_ = nullptr;
  observe::MetricFamily* info_ = nullptr;
  mutable std::mutex mu_;
  std::shared_ptr<const config::SchedulerConfiguration> running_;
  std::string running_hash_;
  ConfigFileWatcher watcher_;  // last: its thread stops first
};

}  // namespace berth::daemon
