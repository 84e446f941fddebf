#include "plugins/dynamicresources/dynamicresources.h"

#include <memory>

#include "berth/config/plugin_args.h"
#include "berth/framework/plugin.h"
#include "config/plugin_args_codec.h"

namespace berth {
namespace dynamicresources {
namespace {

class DynamicResources final : public PreFilterPlugin {
 public:
  std::string_view Name() const override { return kName; }
  Status PreFilter(CycleState&, const PodInfo&, std::span<const NodeInfo* const>,
                   PreFilterResult*) override {
    return Status::Skip();
  }
};

}  // namespace
}  // namespace dynamicresources

PluginRegistration DynamicResourcesRegistration(const config::FeatureGates& /*gates*/) {
  static const config::DynamicResourcesArgs kDefaults;
  auto factory = [](const PluginArgs* args, Handle&) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "DynamicResourcesArgs");
    if (!typed.ok()) return typed.error();
    return std::unique_ptr<Plugin>(std::make_unique<dynamicresources::DynamicResources>());
  };
  return MakeRegistration(dynamicresources::kName, factory,
                          config::InTreeArgsDecoder(std::string(dynamicresources::kName)));
}

}  // namespace berth
