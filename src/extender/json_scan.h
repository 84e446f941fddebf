// Hand-written readers for the extender documents exchanged on every scheduling cycle, in their
// usual shape: HostPriorityList, a filter answer with node names, and filter/prioritize
// arguments with node names. They read at memory speed and give up (nullopt) on anything
// unusual — an escaped string, an unknown field, whole nodes — leaving the document to the
// general decoders in wire.cc, so the answer is the same either way.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "berth/extender/v1.h"

namespace berth::extender::v1::scan {

std::optional<HostPriorityList> HostPriorities(std::string_view text);
// Only without "Nodes" (null or absent).
std::optional<ExtenderFilterResult> FilterResultWithNames(std::string_view text);

// ExtenderArgs with "NodeNames" (or null): the names, and the raw text of the "Pod" object.
struct ArgsWithNames {
  std::string_view pod_json;
  std::optional<std::vector<std::string>> node_names;
};
std::optional<ArgsWithNames> ArgsNames(std::string_view text);

}  // namespace berth::extender::v1::scan
