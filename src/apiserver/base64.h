// Standard base64 (RFC 4648, padded), as the API carries bytes in JSON: a Secret's data, a
// kubeconfig's certificate data, protobuf `bytes` fields. Pure functions, any thread.
#pragma once

#include <string>
#include <string_view>

namespace berth::apiserver {

std::string Base64(std::string_view data);

}  // namespace berth::apiserver
