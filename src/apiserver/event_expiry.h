// Event expiry: kube-apiserver's --event-ttl. An event is deleted a fixed time after its last
// write, so a busy cluster's events do not pile up in memory and on disk for ever (one per
// scheduled pod: Scheduled, written through events.k8s.io and read through either API).
//
// The last write is the latest of the times the server itself sets: metadata.creationTimestamp
// and each managedFields entry's time (every create, update and patch records one). Times a
// client writes (eventTime, lastTimestamp, series) do not count, as in kube-apiserver, whose
// TTL is a lease renewed on each write.
#pragma once

#include <cstddef>
#include <cstdint>

#include "apiserver/store.h"

namespace berth::apiserver {

// Deletes the events (of both APIs: they are stored once) last written before `cutoff` (Unix
// seconds), each as a DELETE would, watchers told; an event written again since it was read
// is kept. Returns how many were deleted. Any thread; takes the store's lock per call.
size_t ExpireEvents(Store& store, int64_t cutoff);

}  // namespace berth::apiserver
