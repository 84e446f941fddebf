#include "plugins/queuesort/queuesort.h"

#include <memory>
#include <string>

#include "berth/framework/plugin.h"

namespace berth {
namespace {

class PrioritySort final : public QueueSortPlugin {
 public:
  std::string_view Name() const override { return kPrioritySortName; }

  bool Less(const QueuedPodInfo& a, const QueuedPodInfo& b) const override {
    const int32_t pa = a.pod().Priority();
    const int32_t pb = b.pod().Priority();
    return pa > pb || (pa == pb && a.timestamp < b.timestamp);
  }
};

Result<std::unique_ptr<Plugin>> NewPrioritySort(const PluginArgs*, Handle&) {
  return std::unique_ptr<Plugin>(std::make_unique<PrioritySort>());
}

}  // namespace

PluginRegistration PrioritySortRegistration() {
  return MakeRegistration(kPrioritySortName, &NewPrioritySort);
}

}  // namespace berth
