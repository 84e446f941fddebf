// Reading JSON text into an nlohmann::json document quickly, for the documents a process reads
// many times a second: watch events in the informers, request bodies in the API server, rows
// at the store's start. simdjson checks and indexes the text; the document is then built from
// its index, which costs about half of what nlohmann's own parser takes.
//
// Any thread may call it; nothing is shared between calls.
#pragma once

#include <cstddef>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace berth {

// Parses one JSON value into `*out` with the result nlohmann::json::parse gives: of a key
// repeated in one object the last value is kept, non-negative integers are unsigned. When
// `duplicates` is not null each repetition appends its path ("metadata.name", "items[2].x").
//
// Returns false, leaving `*out` unspecified, when the text is not JSON this parser takes as
// it is: invalid JSON, nesting deeper than `max_depth`, or what simdjson reads differently
// (a number beyond 64 bits, a byte-order mark). The caller then parses with nlohmann, which
// accepts the second kind and words the error for the first.
//
// Text longer than kFastJsonMaxBytes is refused too: simdjson's index of a large list (an
// informer's first LIST, a manifest of 250,000 nodes) would take about twice the text's size
// beside the document being built, which nlohmann builds in one pass.
inline constexpr size_t kFastJsonMaxBytes = 1 << 20;
bool ParseJsonFast(std::string_view text, nlohmann::json* out, size_t max_depth = 512,
                   std::vector<std::string>* duplicates = nullptr);

// The same, leaving out every `managedFields` member of an object named `metadata`: an informer
// trims them from what it keeps (as kube-scheduler's do), so they are not built only to be
// erased. They are a quarter or more of a pod's document.
bool ParseJsonFastWithoutManagedFields(std::string_view text, nlohmann::json* out);

}  // namespace berth
