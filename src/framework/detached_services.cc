#include "framework/detached_services.h"

namespace berth {

DetachedServices DetachedFrom(Handle& handle) {
  if (const auto* provider = dynamic_cast<const DetachedServicesProvider*>(&handle))
    return provider->Detached();
  return DetachedServices{
      .activate = [&handle](const Pod& pod) { handle.Activate(pod); },
      .log_error = [&handle](std::string_view plugin,
                             std::string_view message) { handle.LogError(plugin, message); },
  };
}

}  // namespace berth
