// One Event, two APIs: core/v1 Events and events.k8s.io/v1 Events are the same objects, kept
// once in the core/v1 form (as kube-apiserver keeps them) and converted for the other API on
// the way in and out. A scheduler's `Scheduled` event written through events.k8s.io is what
// `kubectl describe pod` reads through core/v1, with one revision, one row and one watch event.
//
// The conversion renames fields and nothing else, so it loses nothing either way:
//   events.k8s.io/v1            core/v1
//   regarding                   involvedObject
//   note                        message
//   reportingController         reportingComponent
//   deprecatedSource            source
//   deprecatedFirstTimestamp    firstTimestamp
//   deprecatedLastTimestamp     lastTimestamp
//   deprecatedCount             count
// metadata, eventTime, series, related, action, reason, type and reportingInstance keep their
// names. Neither function sets apiVersion or kind beyond the target API's.
//
// Threads: pure functions.
#pragma once

#include <nlohmann/json.hpp>

namespace berth::apiserver {

// An events.k8s.io/v1 Event in its core/v1 form.
nlohmann::json CoreEventFromEventsV1(nlohmann::json event);
// A core/v1 Event in its events.k8s.io/v1 form.
nlohmann::json EventsV1FromCoreEvent(nlohmann::json event);

}  // namespace berth::apiserver
