// A Score plugin that does nothing, for measuring the cost of a plugin call: compiled into
// berth_plugin_bench as "NoopScoreBuiltIn" and loaded from libnoop_score.so as "NoopScore".
#include <berth/framework/plugin.h>
#include <berth/framework/plugin_library.h>

#include <memory>
#include <string>

namespace {

class NoopScore final : public berth::ScorePlugin {
 public:
  explicit NoopScore(std::string name) : name_(std::move(name)) {}
  std::string_view Name() const override { return name_; }
  berth::Status Score(const berth::CycleState&, const berth::PodInfo&, const berth::NodeInfo&,
                      int64_t* score) const override {
    *score = 50;
    return berth::Status::Success();
  }

 private:
  std::string name_;
};

}  // namespace

berth::PluginRegistration NoopScoreRegistration(const std::string& name) {
  berth::PluginRegistration reg;
  reg.name = name;
  reg.factory = [name](const berth::PluginArgs*,
                       berth::Handle&) -> berth::Result<std::unique_ptr<berth::Plugin>> {
    return std::unique_ptr<berth::Plugin>(std::make_unique<NoopScore>(name));
  };
  return reg;
}

#ifdef BERTH_NOOP_LIBRARY
BERTH_PLUGIN_LIBRARY(registry) { (void)registry.Add(NoopScoreRegistration("NoopScore")); }
#endif
