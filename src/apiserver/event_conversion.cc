#include "apiserver/event_conversion.h"

#include <array>
#include <string_view>
#include <utility>

namespace berth::apiserver {

namespace {

using Json = nlohmann::json;

// {events.k8s.io/v1 name, core/v1 name}
constexpr std::array<std::pair<std::string_view, std::string_view>, 7> kRenamed = {{
    {"regarding", "involvedObject"},
    {"note", "message"},
    {"reportingController", "reportingComponent"},
    {"deprecatedSource", "source"},
    {"deprecatedFirstTimestamp", "firstTimestamp"},
    {"deprecatedLastTimestamp", "lastTimestamp"},
    {"deprecatedCount", "count"},
}};

// Moves each renamed member from its `from` name to its `to` name. A member already under a
// `to` name is another API's field sent to this one: it is dropped, as decoding drops it.
template <bool kToCore>
Json Rename(Json event, std::string_view api_version) {
  if (!event.is_object()) return event;
  for (const auto& [events_name, core_name] : kRenamed) {
    const std::string_view from = kToCore ? events_name : core_name;
    const std::string_view to = kToCore ? core_name : events_name;
    auto target = event.find(to);
    if (target != event.end()) event.erase(target);
    auto source = event.find(from);
    if (source == event.end()) continue;
    Json value = std::move(*source);
    event.erase(source);
    event.emplace(to, std::move(value));
  }
  event["apiVersion"] = api_version;
  event["kind"] = "Event";
  return event;
}

}  // namespace

Json CoreEventFromEventsV1(Json event) { return Rename<true>(std::move(event), "v1"); }

Json EventsV1FromCoreEvent(Json event) {
  return Rename<false>(std::move(event), "events.k8s.io/v1");
}

}  // namespace berth::apiserver
