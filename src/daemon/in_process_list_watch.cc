#include "daemon/in_process_list_watch.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <vector>

#include "apiserver/resources.h"

namespace berth::daemon {
namespace {

// A collection path's resource and namespace.
struct Collection {
  const apiserver::ResourceInfo* resource = nullptr;
  std::string ns;
};

std::vector<std::string_view> Segments(std::string_view path) {
  std::vector<std::string_view> out;
  size_t at = 1;
  while (at <= path.size()) {
    size_t slash = path.find('/', at);
    if (slash == std::string_view::npos) slash = path.size();
    out.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return out;
}

// "/api/v1/<plural>", "/api/v1/namespaces/<ns>/<plural>" and the same under
// "/apis/<group>/<version>", for a built-in resource; nullopt for anything else.
std::optional<Collection> CollectionOf(std::string_view path) {
  if (path.empty() || path[0] != '/' || path.find_first_of("?#") != std::string_view::npos)
    return std::nullopt;
  std::vector<std::string_view> s = Segments(path);
  for (std::string_view part : s)
    if (part.empty()) return std::nullopt;
  std::string_view group, version;
  size_t rest = 0;
  if (s.size() >= 2 && s[0] == "api") {
    version = s[1];
    rest = 2;
  } else if (s.size() >= 3 && s[0] == "apis") {
    group = s[1];
    version = s[2];
    rest = 3;
  } else {
    return std::nullopt;
  }
  Collection c;
  std::string_view plural;
  if (s.size() == rest + 1) {
    plural = s[rest];
  } else if (s.size() == rest + 3 && s[rest] == "namespaces") {
    c.ns = std::string(s[rest + 1]);
    plural = s[rest + 2];
  } else {
    return std::nullopt;
  }
  const apiserver::ResourceInfo* r = apiserver::FindResource(group, version, plural);
  // Built-in resources only: a custom resource's objects may be rewritten to the version asked
  // for, which the HTTP path does.
  const auto& built_in = apiserver::ServedResources();
  if (r == nullptr || r < built_in.data() || r >= built_in.data() + built_in.size() ||
      r->create_only || (!c.ns.empty() && !r->namespaced))
    return std::nullopt;
  c.resource = r;
  return c;
}

std::string ResourceVersionOf(const nlohmann::json& obj, int64_t rv) {
  if (rv > 0) return std::to_string(rv);
  if (auto m = obj.find("metadata"); m != obj.end() && m->is_object())
    if (auto v = m->find("resourceVersion"); v != m->end() && v->is_string())
      return v->get<std::string>();
  return "";
}

class StoreRegistration final : public client::LocalListWatch::Registration {
 public:
  explicit StoreRegistration(std::unique_ptr<apiserver::WatchRegistration> r)
      : registration_(std::move(r)) {}

 private:
  std::unique_ptr<apiserver::WatchRegistration> registration_;
};

}  // namespace

bool InProcessListWatch::Serves(std::string_view path) const {
  return CollectionOf(path).has_value();
}

Result<client::LocalListWatch::ListResult> InProcessListWatch::List(std::string_view path) {
  auto c = CollectionOf(path);
  if (!c) return Error{fmt::format("{} is not served in process", path), ErrorCode::kNotFound};
  auto listed = store_.List(*c->resource, c->ns, nullptr, 0, "");
  if (!listed.ok()) return Error{listed.error().message, listed.error().code};
  ListResult out;
  out.resource_version = std::to_string(listed->rv);
  out.items.reserve(listed->items.size());
  for (apiserver::StoredObject& so : listed->items) out.items.push_back(std::move(so.object));
  return out;
}

Result<std::unique_ptr<client::LocalListWatch::Registration>> InProcessListWatch::Watch(
    std::string_view path, std::string_view resource_version, EventSink sink) {
  auto c = CollectionOf(path);
  if (!c) return Error{fmt::format("{} is not served in process", path), ErrorCode::kNotFound};
  std::optional<int64_t> from;
  if (!resource_version.empty() && resource_version != "0") {
    int64_t rv = 0;
    auto [end, ec] = std::from_chars(resource_version.data(),
                                     resource_version.data() + resource_version.size(), rv);
    if (ec != std::errc() || end != resource_version.data() + resource_version.size())
      return Error{fmt::format("invalid resourceVersion \"{}\"", resource_version),
                   ErrorCode::kBadRequest};
    from = rv;
  }
  apiserver::WatchCallback callback = [sink = std::move(sink)](const apiserver::WatchEvent& ev) {
    using Type = client::LocalListWatch::Event::Type;
    const Type type = ev.type == apiserver::WatchEventType::kAdded      ? Type::kAdded
                      : ev.type == apiserver::WatchEventType::kModified ? Type::kModified
                                                                        : Type::kDeleted;
    return sink({type, ev.object.object, ResourceVersionOf(*ev.object.object, ev.object.rv)});
  };
  auto registration = store_.Watch(*c->resource, c->ns, from, nullptr, std::move(callback));
  if (!registration.ok()) return Error{registration.error().message, registration.error().code};
  return std::unique_ptr<Registration>(
      std::make_unique<StoreRegistration>(std::move(registration).value()));
}

}  // namespace berth::daemon
