// Request bodies in Kubernetes' protobuf encoding (Content-Type:
// application/vnd.kubernetes.protobuf), as kubectl's generators (`kubectl create configmap`,
// `secret`, `namespace`, `deployment`, ...), kube-scheduler's default client (bindings,
// events) and client-go programs configured for protobuf send them, decoded into the JSON
// documents the server stores.
//
// The envelope is "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw}; `raw` is read
// with libprotobuf's reflection over the kind's message, declared in src/apiserver/proto
// (protobuf_schema.h), and written as the JSON kube-apiserver writes for the same object:
// zero values of omitempty fields dropped, quantities, int-or-strings, times and raw JSON in
// their JSON forms, bytes in base64. Kinds without a message are errors (415 for the client);
// fields the messages do not declare are skipped. Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

Result<nlohmann::json> DecodeProtobufObject(std::string_view body);

// A meta/v1 Duration (nanoseconds) as JSON writes it: Go's time.Duration text ("1h2m3.5s").
std::string FormatGoDuration(int64_t nanos);

}  // namespace berth::apiserver
