// Resources kept in another's storage (store_internal.h, StorageView): what crosses the Store's
// interface is converted on the way in and out, so their readers and watchers see their own
// form while one copy is stored.
#include <string>
#include <utility>

#include "api/json_text.h"
#include "apiserver/event_conversion.h"
#include "apiserver/store_internal.h"

namespace berth::apiserver {

using Json = nlohmann::json;

const StorageView* ViewOf(const ResourceInfo& r) {
  static const StorageView kEvents{FindResource("", "v1", "events"), &CoreEventFromEventsV1,
                                   &EventsV1FromCoreEvent, "events"};
  return r.group == "events.k8s.io" && r.plural == "events" ? &kEvents : nullptr;
}

StoredObject Viewed(const StorageView& view, const StoredObject& so) {
  if (!so.object) return so;
  Json obj = view.from_storage(*so.object);
  std::string text;
  text.reserve(so.text ? so.text->size() + 32 : 512);
  AppendJson(obj, &text);
  return StoredObject{so.rv, std::make_shared<const Json>(std::move(obj)),
                      std::make_shared<const std::string>(std::move(text))};
}

// The storage's error as the client's resource names it ("events.events.k8s.io \"x\" ...").
ApiError Viewed(const StorageView& view, const ResourceInfo& r, ApiError e) {
  const std::string from = std::string(view.storage_name) + " \"";
  if (size_t at = e.message.find(from); at != std::string::npos) {
    e.message.replace(at, from.size(), r.StorageName() + " \"");
  }
  return e;
}

Result<StoredObject> Viewed(const StorageView& view, const ResourceInfo& r,
                            Result<StoredObject> result) {
  if (!result.ok()) return Viewed(view, r, result.error());
  return Viewed(view, *result);
}

// The event a view's watcher receives. Its `previous` stays unset: selectors have been applied
// to the stored change already (ViewedFilter), and a watcher reads only the object.
WatchEvent Viewed(const StorageView& view, const WatchEvent& ev) {
  return WatchEvent{ev.type, Viewed(view, ev.object), nullptr};
}

ObjectFilter ViewedFilter(const StorageView& view, ObjectFilter filter) {
  if (!filter) return filter;
  return [&view, filter = std::move(filter)](const Json& stored) {
    return filter(view.from_storage(stored));
  };
}

}  // namespace berth::apiserver
