// Pieces of the wire format the extender client assembles itself, so a node's JSON is
// serialized once per node version rather than once per request.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/extender/v1.h"

namespace berth::extender::v1 {

// The JSON document of a pod / node as sent to extenders (its own document, with Berth's typed
// fields written over it).
std::string PodJson(const Pod& pod);
std::string NodeJson(const Node& node);
// A filter answer as the scheduler reads it: of the nodes in "Nodes" only their names
// (`result.nodes` stays empty).
struct FilterAnswer {
  ExtenderFilterResult result;
  std::optional<std::vector<std::string>> node_item_names;
};
Result<FilterAnswer> DecodeFilterAnswer(std::string_view text);

// The "Pod" of filter/prioritize arguments, given as the text of its JSON object.
Result<PodPtr> DecodeArgsPod(std::string_view pod_json);
// One item of the "Nodes" of filter/prioritize arguments, given as the text of its JSON object;
// `index` names it in errors.
Result<NodePtr> DecodeArgsNode(std::string_view node_json, size_t index);

// A filter result whose nodes are written as `sent_texts` where they are the arguments' nodes
// (`sent`, same pointers), and encoded otherwise.
std::string EncodeFilterResultEchoingNodes(const ExtenderFilterResult& result,
                                           const std::vector<NodePtr>& sent,
                                           const std::vector<std::string_view>& sent_texts);

}  // namespace berth::extender::v1
