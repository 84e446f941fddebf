// GangPermit: pods labelled `gang: <group>` with `gang-min: <n>` wait at Permit until n pods of
// the group are reserved; then all are allowed together. If the wait times out (args
// `timeoutSeconds`, default 10), every waiting pod of the group is rejected, so a group binds
// whole or not at all.
#include <berth/framework/handle.h>
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

struct GangArgs final : berth::PluginArgs {
  int64_t timeout_seconds = 10;
  std::string_view Kind() const override { return "GangPermitArgs"; }
  void Encode(nlohmann::json& out) const override { out["timeoutSeconds"] = timeout_seconds; }
};

std::string Label(const berth::Pod& pod, const std::string& key) {
  auto it = pod.metadata.labels.find(key);
  return it == pod.metadata.labels.end() ? "" : it->second;
}

class GangPermit final : public berth::PermitPlugin, public berth::ReservePlugin {
 public:
  GangPermit(berth::Handle& handle, int64_t timeout) : handle_(handle), timeout_(timeout) {}
  std::string_view Name() const override { return "GangPermit"; }

  berth::Status Reserve(berth::CycleState&, const berth::PodInfo& pod,
                        const std::string&) override {
    const std::string group = Label(*pod, "gang");
    if (!group.empty()) {
      std::lock_guard lock(mu_);
      reserved_[group].insert(pod->Key());
    }
    return berth::Status::Success();
  }

  // A member that failed (timed out or rejected) takes its whole group down with it.
  void Unreserve(berth::CycleState&, const berth::PodInfo& pod, const std::string&) override {
    const std::string group = Label(*pod, "gang");
    if (group.empty()) return;
    std::set<std::string> members;
    {
      std::lock_guard lock(mu_);
      members = std::move(reserved_[group]);
      reserved_.erase(group);
    }
    handle_.IterateOverWaitingPods([&](berth::WaitingPod& w) {
      if (Label(w.pod(), "gang") == group) w.Reject(Name(), "gang " + group + " incomplete");
    });
  }

  berth::PermitDecision Permit(berth::CycleState&, const berth::PodInfo& pod,
                               const std::string&) override {
    const std::string group = Label(*pod, "gang");
    if (group.empty()) return {berth::Status::Success(), {}};
    const size_t min = std::strtoul(Label(*pod, "gang-min").c_str(), nullptr, 10);
    {
      std::lock_guard lock(mu_);
      if (reserved_[group].size() < min)
        return {berth::Status::Wait(), std::chrono::seconds(timeout_)};
      reserved_.erase(group);  // complete: a later group of that name starts afresh
    }
    // The group is complete: release the members waiting for it.
    handle_.IterateOverWaitingPods([&](berth::WaitingPod& w) {
      if (Label(w.pod(), "gang") == group) w.Allow(Name());
    });
    return {berth::Status::Success(), {}};
  }

 private:
  berth::Handle& handle_;
  int64_t timeout_;
  std::mutex mu_;
  std::map<std::string, std::set<std::string>> reserved_;  // group -> reserved pods (ns/name)
};

}  // namespace

BERTH_PLUGIN_LIBRARY(registry) {
  berth::PluginRegistration reg;
  reg.name = "GangPermit";
  reg.decode_args =
      [](const nlohmann::json* raw,
         const std::string& path) -> berth::Result<std::shared_ptr<const berth::PluginArgs>> {
    auto args = std::make_shared<GangArgs>();
    if (raw && raw->is_object()) {
      for (auto it = raw->begin(); it != raw->end(); ++it) {
        if (it.key() != "timeoutSeconds" || !it->is_number_integer() || it->get<int64_t>() <= 0)
          return berth::Error{path + "." + it.key() +
                              ": expected timeoutSeconds, a positive integer"};
        args->timeout_seconds = it->get<int64_t>();
      }
    }
    return std::shared_ptr<const berth::PluginArgs>(args);
  };
  reg.factory = [](const berth::PluginArgs* args,
                   berth::Handle& handle) -> berth::Result<std::unique_ptr<berth::Plugin>> {
    const auto* typed = dynamic_cast<const GangArgs*>(args);
    return std::unique_ptr<berth::Plugin>(
        std::make_unique<GangPermit>(handle, typed ? typed->timeout_seconds : 10));
  };
  (void)registry.Add(std::move(reg));
}
