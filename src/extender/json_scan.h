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
// A filter answer with whole "Nodes": of each item only metadata.name, in `item_names`.
std::optional<ExtenderFilterResult> FilterResultWithNodeItems(std::string_view text,
                                                              std::vector<std::string>* item_names);

// ExtenderArgs in either form: "NodeNames" (a list of plain names) with "Nodes" null or absent,
// or whole "Nodes" (a NodeList of "metadata"/"kind"/"apiVersion"/"items") with "NodeNames" null
// or absent. The raw text of the "Pod" object, and the names or the raw text of each node item.
struct ArgsParts {
  std::string_view pod_json;
  std::optional<std::vector<std::string>> node_names;
  std::optional<std::vector<std::string_view>> node_items;
};
std::optional<ArgsParts> Args(std::string_view text);

}  // namespace berth::extender::v1::scan
