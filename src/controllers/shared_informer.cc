#include "controllers/shared_informer.h"

#include "controllers/object_util.h"

namespace berth::controllers {

SharedInformer::SharedInformer(client::RestClient* rest, std::string path, std::string kind,
                               std::function<void(const std::string&)> log, bool optional) {
  client::InformerOptions options;
  options.path = std::move(path);
  options.kind = std::move(kind);
  options.log = std::move(log);
  options.optional = optional;
  // Controllers read templates, conditions and container statuses: every object keeps its
  // document.
  options.keep_documents = true;
  client::InformerHandlers fan_out;
  fan_out.on_add = [this](const Object& o) {
    for (auto& h : handlers_)
      if (h.on_add) h.on_add(o);
  };
  fan_out.on_update = [this](const Object& a, const Object& b) {
    for (auto& h : handlers_)
      if (h.on_update) h.on_update(a, b);
  };
  fan_out.on_delete = [this](const Object& o) {
    for (auto& h : handlers_)
      if (h.on_delete) h.on_delete(o);
  };
  informer_ = std::make_unique<client::Informer>(rest, std::move(options), std::move(fan_out));
}

void SharedInformer::AddHandlers(client::InformerHandlers handlers) {
  handlers_.push_back(std::move(handlers));
}

void SharedInformer::AddOwnerIndexes() {
  // Controllers sync one owner at a time: these find its objects, and those it may adopt,
  // without walking every object of the kind.
  AddIndex(kControllerUidIndex, [](const Object& o) -> std::vector<std::string> {
    const Json* ref = ControllerRefOf(DocOf(o));
    if (!ref) return {};
    return {StringAt(*ref, "uid")};
  });
  AddIndex(kOrphanIndex, [](const Object& o) -> std::vector<std::string> {
    const Json& doc = DocOf(o);
    if (ControllerRefOf(doc)) return {};
    return {NamespaceOf(doc)};
  });
}

std::vector<Object> SharedInformer::ControlledBy(const std::string& uid) const {
  return ByIndex(kControllerUidIndex, uid);
}

std::vector<Object> SharedInformer::Orphans(const std::string& ns) const {
  return ByIndex(kOrphanIndex, ns);
}

}  // namespace berth::controllers
