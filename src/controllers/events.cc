#include "controllers/events.h"

#include <fmt/format.h>

#include <random>

namespace berth::controllers {

void RecordEvent(const EventSource& source, const Json& obj, std::string_view api_version,
                 std::string_view kind, std::string_view type, std::string_view reason,
                 std::string_view message) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  const std::string ns = NamespaceOf(obj).empty() ? "default" : NamespaceOf(obj);
  const std::string now = NowTimestamp(
      std::chrono::duration_cast<std::chrono::seconds>(source.clock->Now().time_since_epoch())
          .count());
  Json event = {{"apiVersion", "v1"},
                {"kind", "Event"},
                {"metadata",
                 {{"name", fmt::format("{}.{:x}", NameOf(obj), rng() & 0xffffffffffffULL)},
                  {"namespace", ns}}},
                {"involvedObject",
                 {{"apiVersion", api_version},
                  {"kind", kind},
                  {"name", NameOf(obj)},
                  {"namespace", NamespaceOf(obj)},
                  {"uid", UidOf(obj)},
                  {"resourceVersion", StringAt(Member(obj, "metadata"), "resourceVersion")}}},
                {"type", type},
                {"reason", reason},
                {"message", message},
                {"count", 1},
                {"firstTimestamp", now},
                {"lastTimestamp", now},
                {"source", {{"component", source.component}}},
                {"reportingComponent", source.component},
                {"reportingInstance", source.component + "-berth"}};
  auto r = source.rest->Send("POST", fmt::format("/api/v1/namespaces/{}/events", ns), event);
  if (!r.ok() && source.log) {
    source.log(
        fmt::format("event {} about {} {}: {}", reason, kind, KeyOf(obj), r.error().message));
  }
}

}  // namespace berth::controllers
