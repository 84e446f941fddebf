#include "daemon/in_process_list_watch.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>
#include <vector>

#include "apiserver/resource_path.h"
#include "apiserver/resources.h"

namespace berth::daemon {
namespace {

// A collection path's resource and namespace.
struct Collection {
  const apiserver::ResourceInfo* resource = nullptr;
  std::string ns;
};

// "/api/v1/<plural>", "/api/v1/namespaces/<ns>/<plural>" and the same under
// "/apis/<group>/<version>", for a built-in resource; nullopt for anything else. Paths are read
// as the API server's handler reads them (apiserver::ParseResourcePath).
std::optional<Collection> CollectionOf(std::string_view path) {
  if (path.find_first_of("?#") != std::string_view::npos || path.find("//") != path.npos ||
      (!path.empty() && path.back() == '/'))
    return std::nullopt;
  const std::optional<apiserver::ResourcePath> p = apiserver::ParseResourcePath(path);
  if (!p || p->extra_segments || !p->name.empty() || !p->subresource.empty()) return std::nullopt;
  const apiserver::ResourceInfo* r = apiserver::FindResource(p->group, p->version, p->plural);
  // Built-in resources only: a custom resource's objects may be rewritten to the version asked
  // for, which the HTTP path does.
  const auto& built_in = apiserver::ServedResources();
  if (r == nullptr || r < built_in.data() || r >= built_in.data() + built_in.size() ||
      r->create_only || (!p->ns.empty() && !r->namespaced))
    return std::nullopt;
  return Collection{r, std::string(p->ns)};
}

class StoreRegistration final : public client::LocalListWatch::Registration {
 public:
  explicit StoreRegistration(std::unique_ptr<apiserver::WatchRegistration> r)
      : registration_(std::move(r)) {}

 private:
  std::unique_ptr<apiserver::WatchRegistration> registration_;
};

}  // namespace

std::shared_ptr<const client::SharedDecode> InProcessListWatch::DecodeOf(const RawObject& doc) {
  std::lock_guard lock(last_mu_);
  if (!last_ || last_->document() != doc) last_ = std::make_shared<client::SharedDecode>(doc);
  return last_;
}

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
  apiserver::WatchCallback callback = [this,
                                       sink = std::move(sink)](const apiserver::WatchEvent& ev) {
    using Type = client::LocalListWatch::Event::Type;
    const Type type = ev.type == apiserver::WatchEventType::kAdded      ? Type::kAdded
                      : ev.type == apiserver::WatchEventType::kModified ? Type::kModified
                                                                        : Type::kDeleted;
    // A deletion is not decoded (informers drop the object by its key).
    return sink({type, ev.object.object, std::to_string(ev.object.rv),
                 type == Type::kDeleted ? nullptr : DecodeOf(ev.object.object)});
  };
  auto registration = store_.Watch(*c->resource, c->ns, from, nullptr, std::move(callback));
  if (!registration.ok()) return Error{registration.error().message, registration.error().code};
  return std::unique_ptr<Registration>(
      std::make_unique<StoreRegistration>(std::move(registration).value()));
}

}  // namespace berth::daemon
