// Internals shared by the codec translation units: document parsing with source positions and
// the field reader used by all decoders.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "api/codec.h"
#include "berth/api/objects.h"
#include "berth/api/resource_claims.h"
#include "berth/api/result.h"

namespace berth::codec {

// A parsed document and its 1-based position in the input stream (empty documents count).
struct SourceDocument {
  nlohmann::json doc;
  int index = 0;
};

// Reads a stream of YAML 1.1 documents with libyaml; JSON, including several JSON objects one
// after another, is accepted too. Empty documents are dropped but still counted in `index`.
// Mapping keys are always text. Untagged plain scalars and those tagged !!int, !!float, !!bool or
// !!null are typed by ResolvePlainScalar; all other scalars are strings. Errors are one line:
// "<source>: yaml: line L, column C: <problem>".
Result<std::vector<SourceDocument>> ParseSourceDocuments(std::string_view text,
                                                         std::string_view source);
// The same, handing each document to `sink` as soon as it is complete (YAML streams: one
// document's tree in memory at a time). An error from `sink` stops the parse and is returned.
using DocumentSink = std::function<VoidResult(SourceDocument&&)>;
VoidResult ForEachSourceDocument(std::string_view text, std::string_view source,
                                 const DocumentSink& sink);
// One document of a YAML stream, as byte ranges of the text.
struct DocumentSpan {
  size_t begin = 0;                         // the document's first line
  size_t content = std::string_view::npos;  // its first '{'; npos: the document is empty
  size_t end = 0;                           // one past its last byte
  size_t lines_before = 0;                  // lines of the text before `begin`
  int index = 0;                            // its position, as SourceDocument::index
};
// Splits a YAML stream in which every document is one flow mapping ("---" lines between JSON
// objects, as many generators and `kubectl ... -o json | yq` pipelines write) into its
// documents, numbered as the YAML parser numbers them. nullopt when the stream holds anything
// else (a block-style document, a directive, a "..." end marker, content on a "---" line),
// which then takes the YAML parser as a whole.
std::optional<std::vector<DocumentSpan>> SplitFlowMappingDocuments(std::string_view text);
// Parses one document of such a stream (nullopt: empty). Independent of the other documents, so
// documents may be parsed on several threads.
Result<std::optional<nlohmann::json>> ParseDocumentSpan(std::string_view text,
                                                        const DocumentSpan& span,
                                                        std::string_view source);
// Types an unquoted YAML scalar: null, boolean, number (if it prints back identically), string.
nlohmann::json ResolvePlainScalar(std::string_view s);

// Walks a JSON document on behalf of a decoder. Type mismatches never throw: the first one is
// recorded with the path of the offending field and the decoder carries on with defaults, so a
// decode either fully succeeds or reports exactly one error.
class Reader {
 public:
  // `where` names the object ("cluster.yaml: document 3 (Pod default/web)"); `base` is the path
  // of the document root inside it (empty for whole objects).
  Reader(std::string where, std::string base) : where_(std::move(where)), base_(std::move(base)) {}

  // Names `doc` (its kind, namespace and name) after `where` in the error, if there is one: a
  // decode that succeeds, as almost all do, does not pay for the description.
  void Describing(const nlohmann::json* doc) { described_ = doc; }

  bool failed() const { return error_.has_value(); }
  Error error() const { return Error{*error_}; }

  // Records an error at the current path (only the first one is kept).
  void Fail(std::string_view message);

  // Descends into field `key` of `obj` and runs `fn(value)` when it is present and not null.
  // Fails if `obj` is not an object.
  template <class Fn>
  void Field(const nlohmann::json& obj, std::string_view key, Fn&& fn) {
    const nlohmann::json* v = Find(obj, key);
    if (v == nullptr) return;
    path_.push_back({key, 0, false});
    fn(*v);
    path_.pop_back();
  }

  // Runs `fn(element)` for each element of a list; null means empty, anything else fails.
  template <class Fn>
  void Each(const nlohmann::json& v, Fn&& fn) {
    if (v.is_null()) return;
    if (!v.is_array()) {
      FailType("a list", v);
      return;
    }
    for (size_t i = 0; i < v.size() && !failed(); ++i) {
      path_.push_back({{}, i, true});
      fn(v[i]);
      path_.pop_back();
    }
  }

  // Runs `fn(key, value)` for each entry of a map; null means empty.
  template <class Fn>
  void Entries(const nlohmann::json& v, Fn&& fn) {
    if (v.is_null()) return;
    if (!v.is_object()) {
      FailType("a map", v);
      return;
    }
    for (auto it = v.begin(); it != v.end() && !failed(); ++it) {
      path_.push_back({it.key(), 0, false});
      fn(it.key(), it.value());
      path_.pop_back();
    }
  }

  // Field lookup without descending: null if absent or null. Fails if `obj` is not a map.
  const nlohmann::json* Find(const nlohmann::json& obj, std::string_view key);
  bool ExpectObject(const nlohmann::json& v);

  // Scalars, decoded leniently: strings accept numbers and booleans, numbers accept numeric
  // strings, booleans accept "true"/"false".
  std::string Str(const nlohmann::json& v);
  int64_t Int(const nlohmann::json& v, int64_t min = INT64_MIN, int64_t max = INT64_MAX);
  int32_t Int32(const nlohmann::json& v) {
    return static_cast<int32_t>(Int(v, INT32_MIN, INT32_MAX));
  }
  bool Bool(const nlohmann::json& v);
  Quantity Qty(const nlohmann::json& v);
  UnixTime Time(const nlohmann::json& v);

  std::vector<std::string> StrList(const nlohmann::json& v);
  Labels StrMap(const nlohmann::json& v);
  ResourceList Resources(const nlohmann::json& v);

  void FailType(std::string_view expected, const nlohmann::json& got);

 private:
  struct Elem {
    std::string_view key;
    size_t index;
    bool is_index;
  };
  std::string PathString() const;

  std::string where_;
  const nlohmann::json* described_ = nullptr;
  std::string base_;
  std::vector<Elem> path_;
  std::optional<std::string> error_;
};

// Typed decoders of shared pieces, reading into `out`.
void ReadMeta(Reader& r, const nlohmann::json& j, ObjectMeta& out);

// Decodes an object of type T from `doc`: its metadata, then `fn(reader, out)` for the rest.
template <class T, class Fn>
Result<T> DecodeWith(const nlohmann::json& doc, std::string_view where, Fn&& fn) {
  Reader r(std::string(where), "");
  r.Describing(&doc);
  T out;
  if (r.ExpectObject(doc)) {
    r.Field(doc, "metadata", [&](const nlohmann::json& v) { ReadMeta(r, v, out.metadata); });
    fn(r, out);
  }
  if (r.failed()) return r.error();
  return out;
}

// Encoding helpers: the object member `key` (made an object if it is not one), and a string
// member written, or removed when empty.
inline nlohmann::json& Obj(nlohmann::json& parent, const char* key) {
  nlohmann::json& v = parent[key];
  if (!v.is_object()) v = nlohmann::json::object();
  return v;
}
inline void SetStr(nlohmann::json& obj, const char* key, const std::string& v) {
  if (v.empty()) {
    obj.erase(key);
  } else {
    obj[key] = v;
  }
}
void ReadLabelSelector(Reader& r, const nlohmann::json& j, LabelSelector& out);
void ReadNodeSelector(Reader& r, const nlohmann::json& j, NodeSelector& out);
void ReadNodeAffinity(Reader& r, const nlohmann::json& j, NodeAffinity& out);
void ReadTopologySpreadConstraint(Reader& r, const nlohmann::json& j,
                                  TopologySpreadConstraint& out);

// "Kind ns/name" or "Kind name", for error prefixes.
std::string Describe(const nlohmann::json& doc);

// Decodes an object that already lives in a shared document, which becomes its `raw` (no copy).
// `keep_raw`: store `raw` in the object (else the object does not keep its document).
Result<Object> DecodeObjectShared(const RawObject& raw, std::string_view where,
                                  bool keep_raw = true);
// Same, the object keeping `stored` as its `raw` (null, the document, or a trimmed copy).
Result<Object> DecodeObjectStoring(const RawObject& raw, std::string_view where, RawObject stored);
Result<Pod> DecodePodDoc(const nlohmann::json& doc, std::string_view where);
Result<Node> DecodeNodeDoc(const nlohmann::json& doc, std::string_view where);

// The resource.k8s.io kinds (codec_resource.cc): nullopt when `kind` is none of them.
std::optional<Result<Object>> DecodeResourceKind(const std::string& kind, const RawObject& raw,
                                                 const RawObject& keep, std::string_view where);
nlohmann::json EncodeDeviceClass(const DeviceClass& o);
nlohmann::json EncodeResourceClaim(const ResourceClaim& o);
nlohmann::json EncodeResourceClaimTemplate(const ResourceClaimTemplate& o);
nlohmann::json EncodeResourceSlice(const ResourceSlice& o);
// Shared writers of codec_encode.cc.
void WriteObjectMeta(nlohmann::json& doc, const ObjectMeta& m);
void WriteNodeSelectorDoc(nlohmann::json& j, const NodeSelector& s);

}  // namespace berth::codec
