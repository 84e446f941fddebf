// Pieces of the wire format the extender client assembles itself, so a node's JSON is
// serialized once per node version rather than once per request.
#pragma once

#include <string>
#include <string_view>

#include "berth/api/objects.h"

namespace berth::extender::v1 {

// The JSON document of a pod / node as sent to extenders (its own document, with Berth's typed
// fields written over it).
std::string PodJson(const Pod& pod);
std::string NodeJson(const Node& node);
// Appends `s` as a JSON string literal.
void AppendJsonString(std::string_view s, std::string* out);

}  // namespace berth::extender::v1
