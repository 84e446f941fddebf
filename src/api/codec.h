// Decoding and encoding of Kubernetes objects from JSON and YAML.
//
// Decoding accepts single documents, multi-document YAML ("---" separated) and `kind: List`
// documents (as `kubectl get -o yaml` prints them); JSON is YAML, so one entry point serves both.
// Every decoded object keeps its source document in `raw`; Encode*() writes the typed fields
// over that document, so unknown fields round-trip unchanged.
//
// Errors are one line and name the source and the object and field, e.g.
//   cluster.yaml: document 3 (Pod default/web): spec.containers[0].resources.requests.cpu:
//   invalid quantity "1x"
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"

namespace berth {

// One decoded object of a kind the scheduler models. Kinds Berth does not model are kept as
// UnknownObject so callers can report or skip them. Every alternative is a pointer, so a list
// of a quarter million objects costs 24 bytes per entry.
struct UnknownObject {
  std::string api_version, kind, name;
  RawObject raw;
};

using Object =
    std::variant<std::shared_ptr<const Pod>, std::shared_ptr<const Node>,
                 std::shared_ptr<const Namespace>, std::shared_ptr<const Service>,
                 std::shared_ptr<const ReplicationController>, std::shared_ptr<const ReplicaSet>,
                 std::shared_ptr<const StatefulSet>, std::shared_ptr<const PersistentVolume>,
                 std::shared_ptr<const PersistentVolumeClaim>, std::shared_ptr<const StorageClass>,
                 std::shared_ptr<const CSINode>, std::shared_ptr<const PodDisruptionBudget>,
                 std::shared_ptr<const PriorityClass>, std::shared_ptr<const PodGroup>,
                 std::shared_ptr<const SchedulingPodGroup>, std::shared_ptr<const DeviceClass>,
                 std::shared_ptr<const ResourceClaim>, std::shared_ptr<const ResourceClaimTemplate>,
                 std::shared_ptr<const ResourceSlice>, std::shared_ptr<const UnknownObject>>;

// Parses YAML/JSON text (one or more documents) into JSON values; `source` names the input in
// errors. Empty documents are skipped.
Result<std::vector<nlohmann::json>> ParseDocuments(std::string_view text, std::string_view source);

struct DecodeOptions {
  // Keep each object's source document in `raw`, which writing it out again with its unknown
  // fields needs (extenders, reports). Without it a large manifest costs the typed objects
  // only: a YAML stream is decoded one document at a time and no document is kept.
  bool keep_raw = true;
  // Threads for a long stream of JSON documents ("---" between them): 0 picks one per core (at
  // most 4); each takes a contiguous run of documents. Objects and errors are the same
  // whatever the count.
  size_t threads = 0;
};

// Decodes all objects in `text` (documents and List items, in order).
Result<std::vector<Object>> DecodeObjects(std::string_view text, std::string_view source,
                                          const DecodeOptions& options = {});
// Reads and decodes a file; a missing or unreadable file is an error naming it.
Result<std::vector<Object>> DecodeFile(const std::string& path, const DecodeOptions& options = {});

// Decodes one object of a known kind from its JSON document. `where` prefixes error messages.
Result<Object> DecodeObject(const nlohmann::json& doc, std::string_view where);
// Same, taking the document over (no copy of it is made for the object's `raw`).
Result<Object> DecodeObject(nlohmann::json&& doc, std::string_view where);
// Same; without `options.keep_raw` the object keeps no `raw` document.
Result<Object> DecodeObject(nlohmann::json&& doc, std::string_view where,
                            const DecodeOptions& options);
// Same, for a document shared with its other readers (an API server's stored version, read in
// the same process): the object keeps `doc` itself as `raw`, which costs nothing more.
Result<Object> DecodeSharedObject(RawObject doc, std::string_view where);
Result<Pod> DecodePod(const nlohmann::json& doc, std::string_view where);

// What an edited copy of an object keeps of `doc`, its original's document: only what plugins
// read from documents because the typed object lacks it (a pod's spec.resourceClaims and the
// fields NodeDeclaredFeatures infers from, a node's status.declaredFeatures), as informers
// that drop documents keep them; null when there is none. The copy's typed fields are its
// truth, so a stale document must not be kept whole, nor dropped with these.
RawObject DocumentOnlyFields(const RawObject& doc);
Result<Node> DecodeNode(const nlohmann::json& doc, std::string_view where);

// Typed decoders for pieces reused by configuration (plugin args), with `path` naming the
// field in errors (e.g. "profiles[0].pluginConfig[0].args.addedAffinity").
Result<NodeAffinity> DecodeNodeAffinity(const nlohmann::json& doc, std::string_view path);
Result<NodeSelector> DecodeNodeSelector(const nlohmann::json& doc, std::string_view path);
Result<LabelSelector> DecodeLabelSelector(const nlohmann::json& doc, std::string_view path);
Result<TopologySpreadConstraint> DecodeTopologySpreadConstraint(const nlohmann::json& doc,
                                                                std::string_view path);
nlohmann::json EncodeNodeAffinity(const NodeAffinity& a);
nlohmann::json EncodeLabelSelector(const LabelSelector& s);
nlohmann::json EncodeTopologySpreadConstraint(const TopologySpreadConstraint& c);

// Encodes the object: its raw document (or a fresh one) with the typed fields written over it.
nlohmann::json EncodePod(const Pod& pod);
nlohmann::json EncodeNode(const Node& node);
nlohmann::json EncodeObject(const Object& obj);

// RFC 3339 timestamps ("2024-01-01T00:00:00Z") <-> Unix seconds.
Result<UnixTime> ParseTimestamp(std::string_view text);
std::string FormatTimestamp(UnixTime t);

}  // namespace berth
