#include "apiserver/event_expiry.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>

#include "api/codec.h"
#include "apiserver/resources.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

// The latest server-set time of the object, or nullopt when it has none that parses.
std::optional<int64_t> LastWritten(const Json& obj) {
  std::optional<int64_t> latest;
  auto consider = [&](const Json& doc, const char* key) {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_string()) return;
    auto t = ParseTimestamp(it->get_ref<const std::string&>());
    if (t.ok()) latest = std::max(latest.value_or(*t), *t);
  };
  auto meta = obj.find("metadata");
  if (meta == obj.end() || !meta->is_object()) return latest;
  consider(*meta, "creationTimestamp");
  auto managed = meta->find("managedFields");
  if (managed != meta->end() && managed->is_array()) {
    for (const Json& entry : *managed)
      if (entry.is_object()) consider(entry, "time");
  }
  return latest;
}

}  // namespace

size_t ExpireEvents(Store& store, int64_t cutoff) {
  // One list: events.k8s.io Events are core/v1 Events in storage.
  const ResourceInfo* events = FindResource("", "v1", "events");
  auto all = store.List(*events, "", {}, 0, "");
  if (!all.ok()) return 0;
  size_t deleted = 0;
  for (const StoredObject& so : all->items) {
    const Json& obj = *so.object;
    auto written = LastWritten(obj);
    if (!written || *written >= cutoff) continue;
    const Json& meta = obj["metadata"];
    DeletePreconditions unchanged;
    unchanged.resource_version = std::to_string(so.rv);
    auto gone = store.Delete(*events, meta.value("namespace", ""), meta.value("name", ""),
                             unchanged, /*dry_run=*/false, Durability::kLater);
    if (gone.ok()) ++deleted;
  }
  return deleted;
}

}  // namespace berth::apiserver
