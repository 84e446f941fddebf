// The one reader of the extender documents exchanged on every scheduling cycle: HostPriorityList,
// ExtenderFilterResult and ExtenderArgs, each read in a single simdjson On-Demand pass. Fields
// are taken as Go's encoding/json takes them (names in any letter case, null as absent, the last
// of a repeated key); everything else in the text is checked to be JSON. The Pod and Node objects
// inside are handed over as their text, for the codec (api/codec.h) to decode.
//
// Errors name the field as the documents' decoders always have ("HostPriorityList[0].Score:
// expected an integer", "ExtenderArgs: malformed JSON"); with several faults the first one in the
// type's field order is reported, whatever the order in the text.
//
// Threads: any thread (each thread keeps its own parser).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/extender/v1.h"

namespace berth::extender::v1::read {

Result<HostPriorityList> HostPriorities(std::string_view text);

// What a filter answer's "Nodes" becomes.
enum class NodesAs {
  kNames,  // only each item's metadata.name (FilterParts::node_item_names)
  kNodes,  // decoded nodes (FilterParts::result.nodes)
};
struct FilterParts {
  ExtenderFilterResult result;
  std::optional<std::vector<std::string>> node_item_names;
};
Result<FilterParts> FilterResult(std::string_view text, NodesAs nodes_as);

// ExtenderArgs with the Pod and the node items as the text of their JSON objects (views into
// the text given). Field errors come in the order the decoder reports them: the pod's, then the
// nodes', then the names'; `MalformedArgs()` is the error for an object text that is not JSON.
struct ArgsParts {
  std::optional<std::string_view> pod_json;  // absent or null: none
  std::optional<std::vector<std::string_view>> node_items;
  std::optional<std::vector<std::string>> node_names;
  std::optional<Error> pod_error, nodes_error, names_error;
};
Result<ArgsParts> Args(std::string_view text);
Error MalformedArgs();

}  // namespace berth::extender::v1::read
