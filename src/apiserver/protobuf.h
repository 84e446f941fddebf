// Request bodies in Kubernetes' protobuf encoding (Content-Type:
// application/vnd.kubernetes.protobuf), as kubectl's generators (`kubectl create configmap`,
// `secret`, `namespace`, `deployment`, ...) and kube-scheduler's default client (bindings,
// events) send them, decoded into the JSON documents the server stores.
//
// The envelope is "k8s\0" + runtime.Unknown{typeMeta{apiVersion, kind}, raw}; `raw` is decoded
// with a field table per kind (the numbers of k8s.io/api's generated.proto). Kinds without a
// table are errors (415 for the client); fields a table does not list are skipped. Pure
// functions, thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

#include "apiserver/api_error.h"
#include "berth/api/result.h"

namespace berth::apiserver {

Result<nlohmann::json> DecodeProtobufObject(std::string_view body);

}  // namespace berth::apiserver
