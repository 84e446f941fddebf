// What a plugin's deferred callback may use once its profile may be gone.
//
// A write's answer (a preemption victim's deletion, for one) can arrive after a configuration
// reload has replaced the profile that asked for it and freed its Framework, so a callback must
// not hold the Handle. It holds these instead: the scheduler's own services, which live as long
// as the scheduler does.
//
// Internal to Berth, not part of the plugin SDK: the Framework implements
// DetachedServicesProvider beside Handle, found with a dynamic_cast, so the SDK's Handle keeps
// its layout.
#pragma once

#include <functional>
#include <memory>
#include <string_view>

#include "berth/framework/handle.h"

namespace berth {

namespace preemption {
class PreemptionsInFlight;
}

struct DetachedServices {
  // Handle::Activate, without the Handle. Any thread.
  std::function<void(const Pod&)> activate;
  // Handle::LogError, without the Handle. Any thread.
  std::function<void(std::string_view plugin, std::string_view message)> log_error;
  // The scheduler's table of preemptions under way (preemptions_in_flight.h), shared by every
  // profile before and after a reload; null when the handle has none (a plugin then keeps
  // its own).
  std::shared_ptr<preemption::PreemptionsInFlight> preemptions_in_flight;
};

class DetachedServicesProvider {
 public:
  virtual ~DetachedServicesProvider() = default;
  virtual DetachedServices Detached() const = 0;
};

// The handle's detached services; a handle without them (a test's FakeHandle, which outlives
// every callback it is given) is called through directly.
DetachedServices DetachedFrom(Handle& handle);

}  // namespace berth
