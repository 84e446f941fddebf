#include "daemon/config_reload.h"

#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <utility>

#include "config/load.h"
#include "extender/http_extender.h"

namespace berth::daemon {
namespace {

using observe::KV;

// What a reload replaces; every other top-level field is read at start only.
constexpr const char* kReloadedFields[] = {"profiles", "extenders", "percentageOfNodesToScore"};

std::string Join(const std::vector<std::string>& names) {
  return names.empty() ? "-" : fmt::format("{}", fmt::join(names, ","));
}

std::string FileHash(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return {};
  return ContentHash(std::string(std::istreambuf_iterator<char>(in), {}));
}

double Seconds(Duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

std::vector<std::string> FieldsNeedingRestart(const config::SchedulerConfiguration& running,
                                              const config::SchedulerConfiguration& next) {
  nlohmann::json a = config::EncodeConfiguration(running);
  nlohmann::json b = config::EncodeConfiguration(next);
  for (const char* field : kReloadedFields) {
    a.erase(field);
    b.erase(field);
  }
  std::vector<std::string> changed;
  for (auto it = b.begin(); it != b.end(); ++it)
    if (!a.contains(it.key()) || a[it.key()] != it.value()) changed.push_back(it.key());
  for (auto it = a.begin(); it != a.end(); ++it)
    if (!b.contains(it.key())) changed.push_back(it.key());
  return changed;
}

ConfigReloader::ConfigReloader(ConfigReloaderOptions options,
                               const config::SchedulerConfiguration& running,
                               std::string running_hash)
    : options_(std::move(options)),
      running_(std::make_shared<const config::SchedulerConfiguration>(running)),
      running_hash_(running_hash.empty() ? FileHash(options_.path) : std::move(running_hash)),
      watcher_(options_.path, running_hash_,
               [this](const ConfigFileWatcher::Change& change) { OnChange(change); }) {
  observe::MetricsRegistry& m = *options_.metrics;
  reloads_ = m.Counter("berth_config_reloads_total",
                       "Reloads of the scheduler configuration file, by result.", {"result"});
  last_reload_ =
      m.Gauge("berth_config_last_reload_timestamp_seconds",
              "When the configuration was last reloaded (Unix time), by result.", {"result"});
  last_duration_ = m.Gauge("berth_config_last_reload_duration_seconds",
                           "How long the scheduling loop spent applying the last reload.");
  info_ = m.Gauge("berth_config_info",
                  "1, labelled with the SHA-256 of the configuration file in use.", {"hash"});
  info_->Set({running_hash_}, 1);
}

ConfigReloader::~ConfigReloader() = default;

void ConfigReloader::StartWatching() { watcher_.Start(); }

void ConfigReloader::RequestCheck() { watcher_.RequestCheck(); }

std::shared_ptr<const config::SchedulerConfiguration> ConfigReloader::running() const {
  std::lock_guard lock(mu_);
  return running_;
}

void ConfigReloader::OnChange(const ConfigFileWatcher::Change& change) {
  if (change.error) return Refuse(change.hash, change.error->message);
  std::shared_ptr<const config::SchedulerConfiguration> running;
  {
    std::lock_guard lock(mu_);
    if (change.hash == running_hash_) {
      options_.log->Info("Configuration file holds the configuration in use again; nothing to do",
                         {KV::Str("file", options_.path), KV::Str("hash", change.hash)});
      return;
    }
    running = running_;
  }
  auto loaded = options_.load ? options_.load(change.text, *options_.registry)
                              : config::LoadConfig(change.text, options_.path, *options_.registry);
  if (!loaded.ok()) return Refuse(change.hash, loaded.error().message);
  auto extenders = extender::BuildExtenders(loaded->extenders);
  if (!extenders.ok())
    return Refuse(change.hash, fmt::format("{}: {}", options_.path, extenders.error().message));
  const std::vector<std::string> restart = FieldsNeedingRestart(*running, *loaded);
  if (!restart.empty()) {
    options_.log->Warning(
        "Configuration fields changed that take effect only at the next start; the running "
        "values are kept",
        {KV::Str("file", options_.path), KV::Str("fields", Join(restart))});
  }
  auto next = std::make_shared<const config::SchedulerConfiguration>(std::move(loaded).value());
  ReloadRequest request;
  request.config = next;
  request.extenders = std::move(extenders).value();
  request.done = [this, hash = change.hash, next](const ReloadResult& result) {
    if (result.superseded) return;  // a newer content of the file follows
    if (result.error)
      return Refuse(hash, fmt::format("{}: {}", options_.path, result.error->message));
    Applied(hash, next, result);
  };
  if (options_.log->V(2))
    options_.log->Info("Configuration file changed; reload handed to the scheduling loop",
                       {KV::Str("file", options_.path), KV::Str("hash", change.hash)});
  options_.scheduler->RequestReload(std::move(request));
}

void ConfigReloader::Refuse(const std::string& hash, const std::string& message) {
  // An Event-like line (type, reason) beside the metric: the configuration in use stays.
  options_.log->Error(
      "Configuration reload failed; the previous configuration keeps running",
      {KV::Str("type", "Warning"), KV::Str("reason", "ConfigReloadFailed"),
       KV::Str("file", options_.path), KV::Str("hash", hash), KV::Str("err", message)});
  reloads_->Add({"failure"});
  last_reload_->Set({"failure"}, Seconds(options_.clock->Now().time_since_epoch()));
}

void ConfigReloader::Applied(const std::string& hash,
                             std::shared_ptr<const config::SchedulerConfiguration> next,
                             const ReloadResult& result) {
  {
    std::lock_guard lock(mu_);
    running_ = next;
    running_hash_ = hash;
  }
  options_.log->Info("Configuration reloaded",
                     {KV::Str("type", "Normal"), KV::Str("reason", "ConfigReloaded"),
                      KV::Str("file", options_.path), KV::Str("hash", hash),
                      KV::Str("duration", fmt::format("{:.3f}ms", Seconds(result.duration) * 1000)),
                      KV::Str("added", Join(result.added)),
                      KV::Str("removed", Join(result.removed)), KV::Str("kept", Join(result.kept)),
                      KV::Int("queuedPods", static_cast<long long>(result.queued_pods))});
  if (!result.orphaned_pods.empty()) {
    // Their schedulerName is no longer served here: they stay pending.
    constexpr size_t kNamed = 20;
    std::vector<std::string> named(
        result.orphaned_pods.begin(),
        result.orphaned_pods.begin() + std::min(kNamed, result.orphaned_pods.size()));
    options_.log->Warning(
        "Pending pods of removed profiles are no longer scheduled by this scheduler",
        {KV::Str("type", "Warning"), KV::Str("reason", "ProfileRemoved"),
         KV::Str("profiles", Join(result.removed)),
         KV::Int("pods", static_cast<long long>(result.orphaned_pods.size())),
         KV::Str("first", Join(named))});
  }
  reloads_->Add({"success"});
  last_reload_->Set({"success"}, Seconds(options_.clock->Now().time_since_epoch()));
  last_duration_->Set({}, Seconds(result.duration));
  info_->Reset();
  info_->Set({hash}, 1);
  if (options_.on_reloaded) options_.on_reloaded(*next);
}

}  // namespace berth::daemon
