#include "controllers/object_util.h"

#include <algorithm>

namespace berth::controllers {

const Json& DocOf(const Object& obj) {
  static const Json kNull;
  return std::visit(
      [](const auto& p) -> const Json& {
        if (!p || !p->raw) return kNull;
        return *p->raw;
      },
      obj);
}

const Json& Member(const Json& obj, std::string_view key) {
  static const Json kNull;
  if (!obj.is_object()) return kNull;
  auto it = obj.find(key);
  return it == obj.end() ? kNull : *it;
}

std::string StringAt(const Json& obj, std::string_view key) {
  const Json& v = Member(obj, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

int64_t IntAt(const Json& obj, std::string_view key, int64_t fallback) {
  const Json& v = Member(obj, key);
  return v.is_number_integer() ? v.get<int64_t>() : fallback;
}

std::string NameOf(const Json& obj) { return StringAt(Member(obj, "metadata"), "name"); }
std::string NamespaceOf(const Json& obj) { return StringAt(Member(obj, "metadata"), "namespace"); }
std::string UidOf(const Json& obj) { return StringAt(Member(obj, "metadata"), "uid"); }

std::string KeyOf(const Json& obj) {
  std::string ns = NamespaceOf(obj);
  return ns.empty() ? NameOf(obj) : ns + "/" + NameOf(obj);
}

std::pair<std::string, std::string> SplitKey(const std::string& key) {
  auto slash = key.find('/');
  if (slash == std::string::npos) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

Labels LabelsOf(const Json& obj) {
  Labels out;
  const Json& labels = Member(Member(obj, "metadata"), "labels");
  if (!labels.is_object()) return out;
  for (auto it = labels.begin(); it != labels.end(); ++it) {
    if (it->is_string()) out[it.key()] = it->get<std::string>();
  }
  return out;
}

bool HasDeletionTimestamp(const Json& obj) {
  const Json& ts = Member(Member(obj, "metadata"), "deletionTimestamp");
  return !ts.is_null();
}

UnixTime CreatedAt(const Json& obj) {
  auto t = ParseTimestamp(StringAt(Member(obj, "metadata"), "creationTimestamp"));
  return t.ok() ? *t : 0;
}

const Json* ControllerRefOf(const Json& obj) {
  const Json& refs = Member(Member(obj, "metadata"), "ownerReferences");
  if (!refs.is_array()) return nullptr;
  for (const Json& ref : refs) {
    const Json& c = Member(ref, "controller");
    if (c.is_boolean() && c.get<bool>()) return &ref;
  }
  return nullptr;
}

const OwnerReference* ControllerOf(const ObjectMeta& meta) {
  for (const OwnerReference& ref : meta.owner_references) {
    if (ref.controller) return &ref;
  }
  return nullptr;
}

Json NewControllerRef(std::string_view api_version, std::string_view kind, const Json& owner) {
  return Json{{"apiVersion", api_version}, {"kind", kind},       {"name", NameOf(owner)},
              {"uid", UidOf(owner)},       {"controller", true}, {"blockOwnerDeletion", true}};
}

Result<CompiledSelector> LabelSelectorOf(const Json& selector) {
  if (!selector.is_object()) return CompiledSelector::Nothing();
  auto decoded = DecodeLabelSelector(selector, "spec.selector");
  if (!decoded.ok()) return decoded.error();
  return CompiledSelector::Compile(*decoded);
}

CompiledSelector SetSelectorOf(const Json& selector) {
  if (!selector.is_object() || selector.empty()) return CompiledSelector::Nothing();
  Labels set;
  for (auto it = selector.begin(); it != selector.end(); ++it) {
    if (it->is_string()) set[it.key()] = it->get<std::string>();
  }
  return CompiledSelector::FromSet(set);
}

std::string NowTimestamp(UnixTime now) { return FormatTimestamp(now); }

bool IsNamespaceTerminating(const client::ClientError& e) {
  return std::any_of(e.causes.begin(), e.causes.end(), [](const client::StatusCause& c) {
    return c.reason == "NamespaceTerminating";
  });
}

}  // namespace berth::controllers
