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

// ExtenderArgs with "NodeNames" (or null): the names, and the raw text of the "Pod" object.
struct ArgsWithNames {
  std::string_view pod_json;
  std::optional<std::vector<std::string>> node_names;
};
std::optional<ArgsWithNames> ArgsNames(std::string_view text);

// ExtenderArgs with whole "Nodes" (a NodeList of "metadata"/"kind"/"apiVersion"/"items") and
// "NodeNames" null or absent: the raw text of the pod and of each item, in order.
struct ArgsWithNodes {
  std::string_view pod_json;
  std::vector<std::string_view> node_items;
};
std::optional<ArgsWithNodes> ArgsNodes(std::string_view text);

}  // namespace berth::extender::v1::scan
