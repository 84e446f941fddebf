// Events the controllers record about the objects they manage (core/v1 Events, as client-go's
// event recorder writes them), so `kubectl describe` shows what a controller did or waits for.
// Best effort: a failed write is logged and dropped, as upstream's recorder drops events.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "berth/framework/clock.h"
#include "client/rest_client.h"
#include "controllers/object_util.h"

namespace berth::controllers {

struct EventSource {
  client::RestClient* rest = nullptr;
  const Clock* clock = nullptr;
  std::string component;  // source.component / reportingComponent
  std::function<void(const std::string&)> log;
};

// Records an event of `type` ("Normal" or "Warning") about `obj`, whose apiVersion and kind
// are given (informer copies may lack them).
void RecordEvent(const EventSource& source, const Json& obj, std::string_view api_version,
                 std::string_view kind, std::string_view type, std::string_view reason,
                 std::string_view message);

}  // namespace berth::controllers
