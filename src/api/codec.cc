#include "api/codec.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include "api/codec_internal.h"
#include "api/declared_features.h"
#include "api/read_file.h"

namespace berth {
namespace {

using nlohmann::json;

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// A `kind: List` (or `PodList`, `NodeList`, ...) document holding objects under `items`.
bool IsList(const json& doc) {
  if (!doc.is_object()) return false;
  auto kind = doc.find("kind");
  auto items = doc.find("items");
  return kind != doc.end() && kind->is_string() &&
         EndsWith(kind->get_ref<const std::string&>(), "List") && items != doc.end();
}

std::string DocumentWhere(std::string_view source, int index) {
  std::string out(source);
  if (!out.empty()) out += ": ";
  out += "document " + std::to_string(index);
  return out;
}

// Errors from the typed decoders start with "<where>"; pieces decoded on their own start with
// the caller's path instead.
template <class T, class Fn>
Result<T> DecodePiece(const json& doc, std::string_view path, Fn&& read) {
  codec::Reader r("", std::string(path));
  T out{};
  read(r, doc, out);
  if (r.failed()) return r.error();
  return out;
}

bool IsLeapYear(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

// Days since 1970-01-01 of a proleptic Gregorian date.
int64_t DaysFromCivil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

void CivilFromDays(int64_t z, int64_t& y, unsigned& m, unsigned& d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  y = static_cast<int64_t>(yoe) + era * 400;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  d = doy - (153 * mp + 2) / 5 + 1;
  m = mp < 10 ? mp + 3 : mp - 9;
  y += m <= 2;
}

bool Digits(std::string_view s, size_t pos, size_t n, int& out) {
  if (pos + n > s.size()) return false;
  out = 0;
  for (size_t i = pos; i < pos + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    out = out * 10 + (s[i] - '0');
  }
  return true;
}

}  // namespace

Result<UnixTime> ParseTimestamp(std::string_view text) {
  auto bad = [&]() {
    return Error{"invalid timestamp \"" + std::string(text) +
                 "\": expected RFC 3339, e.g. 2024-01-01T00:00:00Z"};
  };
  int year, month, day, hour, minute, second;
  if (!Digits(text, 0, 4, year) || text.size() < 20 || text[4] != '-' ||
      !Digits(text, 5, 2, month) || text[7] != '-' || !Digits(text, 8, 2, day) ||
      (text[10] != 'T' && text[10] != 't') || !Digits(text, 11, 2, hour) || text[13] != ':' ||
      !Digits(text, 14, 2, minute) || text[16] != ':' || !Digits(text, 17, 2, second)) {
    return bad();
  }
  static constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return bad();
  const int max_day = kDaysInMonth[month - 1] + (month == 2 && IsLeapYear(year) ? 1 : 0);
  if (day > max_day) return bad();
  size_t pos = 19;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t start = pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
    if (pos == start) return bad();
  }
  int64_t offset = 0;
  if (pos < text.size() && (text[pos] == 'Z' || text[pos] == 'z')) {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    int oh, om;
    if (!Digits(text, pos + 1, 2, oh) || pos + 3 >= text.size() || text[pos + 3] != ':' ||
        !Digits(text, pos + 4, 2, om) || oh > 23 || om > 59) {
      return bad();
    }
    offset = (oh * 3600 + om * 60) * (text[pos] == '-' ? -1 : 1);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != text.size()) return bad();
  const int64_t days =
      DaysFromCivil(year, static_cast<unsigned>(month), static_cast<unsigned>(day));
  return days * 86400 + hour * 3600 + minute * 60 + second - offset;
}

std::string FormatTimestamp(UnixTime t) {
  int64_t days = t / 86400;
  int64_t secs = t % 86400;
  if (secs < 0) {
    secs += 86400;
    --days;
  }
  int64_t y;
  unsigned m, d;
  CivilFromDays(days, y, m, d);
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%04lld-%02u-%02uT%02lld:%02lld:%02lldZ",
                static_cast<long long>(y), m, d, static_cast<long long>(secs / 3600),
                static_cast<long long>(secs / 60 % 60), static_cast<long long>(secs % 60));
  return buf;
}

namespace {

// Below this many documents (or List items) per thread, another thread costs more than it saves.
constexpr size_t kItemsPerThread = 2048;

size_t ThreadsFor(const DecodeOptions& options, size_t items) {
  size_t threads = options.threads;
  if (threads == 0) threads = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 4);
  return std::max<size_t>(1, std::min(threads, items / kItemsPerThread));
}

// Decodes items [0, n) in `threads` contiguous runs, one thread each, with
// decode(i, objects) -> VoidResult appending item i's objects. The runs are joined in order and
// the first error in item order is the one reported, as a sequential read would.
template <class DecodeItem>
Result<std::vector<Object>> DecodeInRuns(size_t n, size_t threads, std::string_view source,
                                         const DecodeItem& decode) {
  struct Run {
    std::vector<Object> objects;
    std::optional<Error> error;
  };
  std::vector<Run> runs(threads);
  auto work = [&](size_t k) {
    Run& run = runs[k];
    const size_t begin = n * k / threads, end = n * (k + 1) / threads;
    try {
      run.objects.reserve(end - begin);
      for (size_t i = begin; i < end; ++i) {
        if (auto r = decode(i, run.objects); !r.ok()) {
          run.error = r.error();
          return;
        }
      }
    } catch (const std::bad_alloc&) {
      run.error = Error{std::string(source) + ": out of memory"};
    }
  };
  {
    std::vector<std::jthread> helpers;
    for (size_t k = 1; k < threads; ++k) helpers.emplace_back(work, k);
    work(0);
  }
  size_t total = 0;
  for (Run& run : runs) {
    if (run.error) return std::move(*run.error);
    total += run.objects.size();
  }
  std::vector<Object> out;
  out.reserve(total);
  for (Run& run : runs)
    for (Object& o : run.objects) out.push_back(std::move(o));
  return out;
}

// What an object keeps of its document when documents are dropped. Fields that Pod's and
// Node's frozen layouts (SDK) lack live only in the document: a pod with spec.resourceClaims
// (DynamicResources) or with a field NodeDeclaredFeatures infers from keeps it whole; a node
// keeps only its status.declaredFeatures.
RawObject StoredRaw(RawObject doc, const DecodeOptions& options) {
  if (options.keep_raw) return doc;
  const std::string kind = doc->value("kind", "");
  if (kind == "Node") return declared_features::NodeDocumentToKeep(*doc);
  if (kind != "Pod") return nullptr;
  auto spec = doc->find("spec");
  if (spec != doc->end() && spec->is_object() && spec->contains("resourceClaims")) return doc;
  return declared_features::PodKeepsDocument(*doc) ? doc : nullptr;
}

Result<Object> DecodeKeeping(json&& doc, std::string_view where, const DecodeOptions& options) {
  auto shared = std::make_shared<const json>(std::move(doc));
  RawObject stored = StoredRaw(shared, options);
  return codec::DecodeObjectStoring(shared, where, std::move(stored));
}

VoidResult DecodeOne(json&& doc, const std::string& where, const DecodeOptions& options,
                     std::vector<Object>& out) {
  auto obj = DecodeKeeping(std::move(doc), where, options);
  if (!obj.ok()) return obj.error();
  out.push_back(std::move(obj).value());
  return {};
}

// Decodes one source document (a List: each of its items) and appends the objects to `out`.
// A List's items stay on one thread: their tree was allocated by the parsing thread, and
// glibc would not reuse its memory for objects decoded on another (measured: 250,000 Nodes
// 0.4 s faster for 76 MB more).
VoidResult DecodeDocument(codec::SourceDocument&& sd, std::string_view source,
                          const DecodeOptions& options, std::vector<Object>& out) {
  const std::string where = DocumentWhere(source, sd.index);
  if (!IsList(sd.doc)) return DecodeOne(std::move(sd.doc), where, options, out);
  json& items = sd.doc["items"];
  if (items.is_null()) return {};
  if (!items.is_array()) return Error{where + ": items: expected a list"};
  // Items of typed lists (PodList from the API) omit their kind.
  std::string item_kind = sd.doc["kind"].get<std::string>();
  item_kind.resize(item_kind.size() - 4);
  std::string api_version;
  if (auto it = sd.doc.find("apiVersion"); it != sd.doc.end() && it->is_string()) {
    api_version = it->get<std::string>();
  }
  auto decode_item = [&](size_t i, std::vector<Object>& objects) -> VoidResult {
    json item = std::move(items[i]);
    if (item.is_object() && !item_kind.empty() && !item.contains("kind")) {
      item["kind"] = item_kind;
      if (!api_version.empty() && !item.contains("apiVersion")) item["apiVersion"] = api_version;
    }
    return DecodeOne(std::move(item), where + ", item " + std::to_string(i), options, objects);
  };
  out.reserve(out.size() + items.size());
  for (size_t i = 0; i < items.size(); ++i)
    if (auto r = decode_item(i, out); !r.ok()) return r;
  return {};
}

}  // namespace

RawObject DocumentOnlyFields(const RawObject& doc) {
  if (!doc) return nullptr;
  DecodeOptions drop;
  drop.keep_raw = false;
  return StoredRaw(doc, drop);
}

Result<std::vector<Object>> DecodeObjects(std::string_view text, std::string_view source,
                                          const DecodeOptions& options) {
  // A long stream of JSON documents: parsed and decoded in runs on several threads, each
  // document on one thread from its text to its objects.
  if (ThreadsFor(options, text.size() / 64) > 1) {
    if (auto spans = codec::SplitFlowMappingDocuments(text)) {
      if (const size_t threads = ThreadsFor(options, spans->size()); threads > 1) {
        return DecodeInRuns(spans->size(), threads, source,
                            [&](size_t i, std::vector<Object>& objects) -> VoidResult {
                              auto doc = codec::ParseDocumentSpan(text, (*spans)[i], source);
                              if (!doc.ok()) return doc.error();
                              if (!*doc) return {};
                              return DecodeDocument(
                                  codec::SourceDocument{std::move(**doc), (*spans)[i].index},
                                  source, options, objects);
                            });
      }
    }
  }
  std::vector<Object> out;
  auto r =
      codec::ForEachSourceDocument(text, source, [&](codec::SourceDocument&& sd) -> VoidResult {
        return DecodeDocument(std::move(sd), source, options, out);
      });
  if (!r.ok()) return r.error();
  return out;
}

Result<std::vector<Object>> DecodeFile(const std::string& path, const DecodeOptions& options) {
  auto text = ReadFileText(path, kMaxManifestBytes);
  if (!text.ok()) return text.error();
  return DecodeObjects(*text, path == "-" ? std::string("<stdin>") : path, options);
}

Result<Object> DecodeObject(const nlohmann::json& doc, std::string_view where) {
  return codec::DecodeObjectShared(std::make_shared<const json>(doc), where);
}

Result<Object> DecodeObject(nlohmann::json&& doc, std::string_view where) {
  return codec::DecodeObjectShared(std::make_shared<const json>(std::move(doc)), where);
}

Result<Object> DecodeObject(nlohmann::json&& doc, std::string_view where,
                            const DecodeOptions& options) {
  return DecodeKeeping(std::move(doc), where, options);
}

Result<Object> DecodeSharedObject(RawObject doc, std::string_view where) {
  return codec::DecodeObjectShared(std::move(doc), where);
}

Result<Pod> DecodePod(const nlohmann::json& doc, std::string_view where) {
  return codec::DecodePodDoc(doc, where);
}

Result<Node> DecodeNode(const nlohmann::json& doc, std::string_view where) {
  return codec::DecodeNodeDoc(doc, where);
}

Result<NodeAffinity> DecodeNodeAffinity(const nlohmann::json& doc, std::string_view path) {
  return DecodePiece<NodeAffinity>(doc, path, codec::ReadNodeAffinity);
}

Result<NodeSelector> DecodeNodeSelector(const nlohmann::json& doc, std::string_view path) {
  return DecodePiece<NodeSelector>(doc, path, codec::ReadNodeSelector);
}

Result<LabelSelector> DecodeLabelSelector(const nlohmann::json& doc, std::string_view path) {
  return DecodePiece<LabelSelector>(doc, path, codec::ReadLabelSelector);
}

Result<TopologySpreadConstraint> DecodeTopologySpreadConstraint(const nlohmann::json& doc,
                                                                std::string_view path) {
  return DecodePiece<TopologySpreadConstraint>(doc, path, codec::ReadTopologySpreadConstraint);
}

}  // namespace berth
