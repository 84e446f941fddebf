#include "apiserver/crd_registry.h"

#include <functional>
#include <map>
#include <mutex>

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

struct Registry {
  std::mutex mu;
  struct Entry {
    Json spec;  // what the versions were built from
    bool terminating = false;
    bool builtin = false;  // RegisterBuiltinCrd's
    std::vector<std::shared_ptr<const CustomResourceVersion>> versions;
  };
  std::map<std::string, Entry, std::less<>> crds;
  // Versions no longer served, kept so that a request still holding one stays valid.
  std::vector<std::shared_ptr<const CustomResourceVersion>> retired;
};

Registry& Instance() {
  static Registry* r = new Registry();  // never destroyed: requests may outlive statics
  return *r;
}

std::vector<std::string> Strings(const Json& j) {
  std::vector<std::string> out;
  if (!j.is_array()) return out;
  for (const auto& s : j) {
    if (s.is_string()) out.push_back(s.get<std::string>());
  }
  return out;
}

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The ResourceInfo of version `v` of CRD spec `spec`.
ResourceInfo InfoOf(const Json& spec, const Json& v) {
  const Json names = spec.value("names", Json::object());
  ResourceInfo info;
  info.group = Str(spec, "group");
  info.version = Str(v, "name");
  info.plural = Str(names, "plural");
  info.singular = Str(names, "singular");
  if (info.singular.empty()) {
    info.singular = Str(names, "kind");
    for (char& c : info.singular) c = static_cast<char>(std::tolower(c));
  }
  info.kind = Str(names, "kind");
  info.namespaced = Str(spec, "scope") != "Cluster";
  info.short_names = Strings(names.value("shortNames", Json()));
  info.categories = Strings(names.value("categories", Json()));
  const Json subs = v.value("subresources", Json::object());
  if (subs.is_object()) {
    if (subs.contains("status")) info.subresources.push_back("status");
    if (subs.contains("scale")) info.subresources.push_back("scale");
  }
  return info;
}

// Whether the CRD's Established condition is True (a CRD written before conditions existed,
// with none, counts as established).
bool Established(const Json& crd) {
  const Json status = crd.value("status", Json::object());
  const Json conds = status.is_object() ? status.value("conditions", Json::array()) : Json();
  if (!conds.is_array()) return true;
  for (const auto& c : conds) {
    if (c.is_object() && c.value("type", "") == "Established") {
      return c.value("status", "") == "True";
    }
  }
  return true;
}

// Serves the versions of `crd` under `name` (r.mu held). `validate` is set for a built-in kind.
void ServeVersions(Registry& r, const Json& crd, const std::string& name,
                   const std::function<VoidResult(const Json&, const Json*)>* validate) {
  const Json spec = crd.value("spec", Json::object());
  const bool terminating = crd["metadata"].contains("deletionTimestamp");
  if (!Established(crd)) {
    // Its names conflict with another CRD's: not served (and never was).
    if (auto it = r.crds.find(name); it != r.crds.end()) {
      for (auto& v : it->second.versions) r.retired.push_back(std::move(v));
      r.crds.erase(it);
    }
    return;
  }
  auto& entry = r.crds[name];
  if (!entry.versions.empty() && entry.spec == spec && entry.terminating == terminating &&
      entry.builtin == (validate != nullptr)) {
    return;
  }
  for (auto& v : entry.versions) r.retired.push_back(std::move(v));
  entry.versions.clear();
  entry.spec = spec;
  entry.terminating = terminating;
  entry.builtin = validate != nullptr;
  const Json versions = spec.value("versions", Json::array());
  if (!versions.is_array()) return;
  for (const auto& v : versions) {
    if (!v.is_object() || !v.value("served", false)) continue;
    auto crv = std::make_shared<CustomResourceVersion>();
    crv->info = InfoOf(spec, v);
    crv->crd_name = name;
    if (auto s = v.find("schema"); s != v.end() && s->is_object()) {
      crv->schema = s->value("openAPIV3Schema", Json());
    }
    crv->printer_columns = v.value("additionalPrinterColumns", Json::array());
    crv->storage = v.value("storage", false);
    crv->several_versions = versions.size() > 1;
    crv->terminating = terminating;
    const Json scale = v.value("subresources", Json::object()).value("scale", Json());
    if (scale.is_object()) {
      crv->spec_replicas_path = Str(scale, "specReplicasPath");
      crv->status_replicas_path = Str(scale, "statusReplicasPath");
      crv->label_selector_path = Str(scale, "labelSelectorPath");
    }
    if (validate != nullptr) {
      crv->builtin = true;
      crv->validate = *validate;
    }
    entry.versions.push_back(std::move(crv));
  }
}

}  // namespace

void RegisterCrd(const Json& crd) {
  const std::string name = crd["metadata"].value("name", "");
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  if (auto it = r.crds.find(name); it != r.crds.end() && it->second.builtin) return;
  ServeVersions(r, crd, name, nullptr);
}

void RegisterBuiltinCrd(const Json& crd,
                        std::function<VoidResult(const Json&, const Json*)> validate) {
  const std::string name = crd["metadata"].value("name", "");
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  ServeVersions(r, crd, name, &validate);
}

void UnregisterBuiltinCrds() {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  for (auto it = r.crds.begin(); it != r.crds.end();) {
    if (!it->second.builtin) {
      ++it;
      continue;
    }
    for (auto& v : it->second.versions) r.retired.push_back(std::move(v));
    it = r.crds.erase(it);
  }
}

bool IsBuiltinCrd(std::string_view crd_name) {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  auto it = r.crds.find(crd_name);
  return it != r.crds.end() && it->second.builtin;
}

void UnregisterCrd(std::string_view name) {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  auto it = r.crds.find(name);
  if (it == r.crds.end() || it->second.builtin) return;
  for (auto& v : it->second.versions) r.retired.push_back(std::move(v));
  r.crds.erase(it);
}

const CustomResourceVersion* FindCustomResource(std::string_view group, std::string_view version,
                                                std::string_view plural) {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  for (const auto& [name, entry] : r.crds) {
    for (const auto& v : entry.versions) {
      if (v->info.group == group && v->info.version == version && v->info.plural == plural) {
        return v.get();
      }
    }
  }
  return nullptr;
}

const CustomResourceVersion* FindCustomResourceByKind(std::string_view group,
                                                      std::string_view kind) {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  for (const auto& [name, entry] : r.crds) {
    for (const auto& v : entry.versions) {
      if (v->info.group == group && v->info.kind == kind) return v.get();
    }
  }
  return nullptr;
}

const CustomResourceVersion* CustomResourceOf(const ResourceInfo& info) {
  // Every write asks: a built-in resource is told apart by its address, without the lock.
  const std::vector<ResourceInfo>& built_in = ServedResources();
  const std::less<const ResourceInfo*> before;
  if (!built_in.empty() && !before(&info, &built_in.front()) && !before(&built_in.back(), &info)) {
    return nullptr;
  }
  // The registry's own ResourceInfos sit at the start of a CustomResourceVersion; a built-in
  // one is never among them, so compare addresses rather than names.
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  for (const auto& [name, entry] : r.crds) {
    for (const auto& v : entry.versions) {
      if (&v->info == &info) return v.get();
    }
  }
  for (const auto& v : r.retired) {
    if (&v->info == &info) return v.get();
  }
  return nullptr;
}

std::vector<const CustomResourceVersion*> CustomResources() {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  std::vector<const CustomResourceVersion*> out;
  for (const auto& [name, entry] : r.crds) {
    for (const auto& v : entry.versions) out.push_back(v.get());
  }
  return out;
}

std::vector<const ResourceInfo*> CustomStorageResources() {
  Registry& r = Instance();
  std::lock_guard lock(r.mu);
  std::vector<const ResourceInfo*> out;
  for (const auto& [name, entry] : r.crds) {
    if (!entry.versions.empty()) out.push_back(&entry.versions.front()->info);
  }
  return out;
}

ResourceInfo StorageResourceOf(const Json& crd) {
  const Json spec = crd.value("spec", Json::object());
  const Json versions = spec.value("versions", Json::array());
  Json chosen = Json::object();
  if (versions.is_array()) {
    for (const auto& v : versions) {
      if (v.is_object() && v.value("storage", false)) chosen = v;
    }
  }
  return InfoOf(spec, chosen);
}

namespace {

void SetServedVersion(const ResourceInfo& r, Json& obj) {
  if (!obj.is_object() || obj.value("kind", "") != r.kind) return;
  auto it = obj.find("apiVersion");
  if (it != obj.end() && it->is_string() && it->get<std::string>().rfind(r.group + "/", 0) == 0) {
    *it = r.GroupVersion();
  }
}

}  // namespace

std::string WithServedVersion(const ResourceInfo& r, const std::string& text) {
  Json doc = Json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) return text;
  SetServedVersion(r, doc);
  for (const char* list : {"items", "rows"}) {
    auto items = doc.find(list);
    if (items == doc.end() || !items->is_array()) continue;
    for (auto& item : *items) {
      SetServedVersion(r, item);
      if (item.is_object() && item.contains("object")) SetServedVersion(r, item["object"]);
    }
  }
  if (doc.contains("object")) SetServedVersion(r, doc["object"]);  // a watch event
  return doc.dump();
}

}  // namespace berth::apiserver
