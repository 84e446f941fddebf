// Events as tests of the event APIs write them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace berth::apiserver::testing {

// A pod reference, as an event's regarding / involvedObject.
inline nlohmann::json PodRef(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"name", name}, {"namespace", "default"}};
}

// What a scheduler writes through events.k8s.io/v1 when it binds `pod`.
inline nlohmann::json SchedulerEvent(const std::string& name, const std::string& pod) {
  return {{"apiVersion", "events.k8s.io/v1"},
          {"kind", "Event"},
          {"metadata", {{"name", name}, {"namespace", "default"}}},
          {"eventTime", "2026-11-27T12:00:00.123456Z"},
          {"action", "Binding"},
          {"reason", "Scheduled"},
          {"note", "Successfully assigned default/" + pod + " to node-1"},
          {"type", "Normal"},
          {"regarding", PodRef(pod)},
          {"reportingController", "default-scheduler"},
          {"reportingInstance", "default-scheduler-berth"}};
}

}  // namespace berth::apiserver::testing
