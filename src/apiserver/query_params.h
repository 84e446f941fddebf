// The query parameters and body media types kube-apiserver decodes before it serves a request,
// refused as it refuses them: a dryRun other than All (422), an integer parameter that does not
// parse (400), a resourceVersion that is not a revision (400), a write body in a media type it
// does not read (415). And the deadline of a watch from its timeoutSeconds, without overflow.
//
// Threads: pure functions, any thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "apiserver/api_error.h"
#include "berth/api/result.h"
#include "net/http_server.h"

namespace berth::apiserver {

// Go's strconv.ParseInt(strings.TrimSpace(text), 10, 64) as kube-apiserver converts an int64
// query parameter: nullopt when blank, 400 with Go's words when it does not parse.
Result<std::optional<int64_t>> ParseInt64Param(std::string_view text);

// The query of a request to a resource, checked by what `method` decodes: the options' dryRun
// of a write (CreateOptions, UpdateOptions, PatchOptions, DeleteOptions), the ListOptions'
// integers (limit, timeoutSeconds) and every read's resourceVersion.
VoidResult ValidateResourceQuery(const net::HttpRequest& req);

// 415 unless `content_type` (a POST, PUT or DELETE body's) is one kube-apiserver decodes:
// JSON (also when absent), YAML or protobuf.
VoidResult CheckBodyMediaType(std::string_view content_type);

// When a watch asked to last `timeout_seconds` from `now` ends: never for 0 (none asked), at
// once for a negative value (as kube-apiserver's timer fires at once), and a value beyond what
// the clock holds is cut to the clock's end instead of overflowing.
std::chrono::steady_clock::time_point WatchDeadline(std::chrono::steady_clock::time_point now,
                                                    int64_t timeout_seconds);

}  // namespace berth::apiserver
