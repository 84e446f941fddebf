// GangPermit: pods labelled `gang: <group>` with `gang-min: <n>` wait at Permit until n pods of
// the group are reserved; then all are allowed together. If the wait times out (args
// `timeoutSeconds`, default 10), every waiting pod of the group is rejected, so a group binds
// whole or not at all.
#include <berth/framework/handle.h>
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>
#include <berth/framework/typed_args.h>

#include <map>
#include <mutex>
#include <set>
#include <string>

namespace {

struct GangArgs {
  int64_t timeout_seconds = 10;
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
  reg.decode_args = berth::TypedArgs<GangArgs>("GangPermitArgs")
                        .Field("timeoutSeconds", &GangArgs::timeout_seconds)
                        .Validate([](const GangArgs& a) -> berth::VoidResult {
                          if (a.timeout_seconds <= 0) {
                            return berth::Error{"timeoutSeconds: invalid value " +
                                                std::to_string(a.timeout_seconds) +
                                                ": must be greater than zero"};
                          }
                          return {};
                        })
                        .Decoder();
  reg.factory = [](const berth::PluginArgs* args,
                   berth::Handle& handle) -> berth::Result<std::unique_ptr<berth::Plugin>> {
    return std::unique_ptr<berth::Plugin>(
        std::make_unique<GangPermit>(handle, berth::ArgsOf<GangArgs>(args).timeout_seconds));
  };
  (void)registry.Add(std::move(reg));
}
