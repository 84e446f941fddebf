#include "plugins/defaultbinder/defaultbinder.h"

#include <memory>
#include <string>

#include "berth/framework/handle.h"
#include "berth/framework/plugin.h"

namespace berth {
namespace {

class DefaultBinder final : public BindPlugin {
 public:
  explicit DefaultBinder(Handle& handle) : handle_(handle) {}

  std::string_view Name() const override { return kDefaultBinderName; }

  Status Bind(CycleState&, const PodInfo& pod, const std::string& node) override {
    VoidResult r = handle_.writer().Bind(*pod, node);
    if (!r.ok()) return Status::Error(r.error().message);
    return Status::Success();
  }

 private:
  Handle& handle_;
};

Result<std::unique_ptr<Plugin>> NewDefaultBinder(const PluginArgs*, Handle& handle) {
  return std::unique_ptr<Plugin>(std::make_unique<DefaultBinder>(handle));
}

}  // namespace

PluginRegistration DefaultBinderRegistration() {
  return MakeRegistration(kDefaultBinderName, &NewDefaultBinder);
}

}  // namespace berth
