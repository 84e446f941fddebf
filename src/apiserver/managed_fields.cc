#include "apiserver/managed_fields.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "apiserver/patch.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
// A field path in FieldsV1 elements: "f:spec", "k:{\"name\":\"c\"}", "v:\"x\"", "i:0".
using Path = std::vector<std::string>;
using FieldSet = std::set<Path>;

// What is at a path: a value, or (for an item of a keyed list or a set) the item, whose
// presence is all that is compared (its fields are paths of their own).
struct Leaf {
  const Json* value;
  bool item;
};
using Leaves = std::map<Path, Leaf>;

bool IsServerMetadata(std::string_view key) {
  return key == "name" || key == "namespace" || key == "uid" || key == "resourceVersion" ||
         key == "generation" || key == "creationTimestamp" || key == "managedFields" ||
         key == "selfLink";
}

void Walk(const Json& v, std::string_view field, Path& path, Leaves& out);

void WalkObject(const Json& obj, Path& path, Leaves& out) {
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    path.push_back("f:" + it.key());
    Walk(*it, it.key(), path, out);
    path.pop_back();
  }
}

void Walk(const Json& v, std::string_view field, Path& path, Leaves& out) {
  if (v.is_object() && !v.empty()) {
    WalkObject(v, path, out);
    return;
  }
  if (v.is_array() && !v.empty()) {
    if (IsPrimitiveSetField(field)) {
      for (const auto& e : v) {
        path.push_back("v:" + e.dump());
        out[path] = {&e, true};
        path.pop_back();
      }
      return;
    }
    const std::vector<std::string> keys = ApplyListKeys(field, v);
    const bool keyed = !keys.empty() && std::all_of(v.begin(), v.end(), [&](const Json& e) {
      return e.is_object() && e.contains(keys.front());
    });
    if (keyed) {
      for (const auto& e : v) {
        path.push_back("k:" + ListItemKey(e, keys).dump());
        out[path] = {&e, true};
        WalkObject(e, path, out);
        path.pop_back();
      }
      return;
    }
  }
  out[path] = {&v, false};
}

// Every owned path of an object (apiVersion, kind and server-set metadata excluded).
// `scope`: "" everything, "status" only status, "-status" everything but status.
Leaves LeavesOf(const Json& obj, std::string_view scope) {
  Leaves out;
  if (!obj.is_object()) return out;
  Path path;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (k == "apiVersion" || k == "kind") continue;
    if (scope == "status" && k != "status") continue;
    if (scope == "-status" && k == "status") continue;
    path.push_back("f:" + k);
    if (k == "metadata" && it->is_object()) {
      for (auto m = it->begin(); m != it->end(); ++m) {
        if (IsServerMetadata(m.key())) continue;
        path.push_back("f:" + m.key());
        Walk(*m, m.key(), path, out);
        path.pop_back();
      }
    } else {
      Walk(*it, k, path, out);
    }
    path.pop_back();
  }
  return out;
}

bool Same(const Leaf& a, const Leaf& b) { return a.item && b.item ? true : *a.value == *b.value; }

Json ToFieldsV1(const FieldSet& set) {
  Json root = Json::object();
  for (const auto& p : set) {
    Json* node = &root;
    for (const auto& e : p) node = &(*node)[e];
    (*node)["."] = Json::object();
  }
  // A member without children is written `{}`; with children, `".": {}` marks it.
  std::function<void(Json&)> tidy = [&](Json& node) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      if (it.key() == ".") continue;
      tidy(*it);
    }
    if (node.size() == 1 && node.contains(".")) node = Json::object();
  };
  tidy(root);
  return root;
}

void FromFieldsV1(const Json& node, Path& path, FieldSet& out) {
  if (!node.is_object()) return;
  if (node.empty() && !path.empty()) out.insert(path);
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (it.key() == ".") {
      if (!path.empty()) out.insert(path);
      continue;
    }
    path.push_back(it.key());
    FromFieldsV1(*it, path, out);
    path.pop_back();
  }
}

struct Entry {
  std::string manager, operation, api_version, time, subresource;
  FieldSet fields;
};

std::vector<Entry> ReadEntries(const Json* obj) {
  std::vector<Entry> entries;
  if (!obj || !obj->is_object()) return entries;
  auto meta = obj->find("metadata");
  if (meta == obj->end() || !meta->is_object()) return entries;
  auto mf = meta->find("managedFields");
  if (mf == meta->end() || !mf->is_array()) return entries;
  for (const auto& e : *mf) {
    if (!e.is_object()) continue;
    Entry entry{e.value("manager", ""), e.value("operation", ""), e.value("apiVersion", ""),
                e.value("time", ""), e.value("subresource", "")};
    Path path;
    if (auto f = e.find("fieldsV1"); f != e.end()) FromFieldsV1(*f, path, entry.fields);
    entries.push_back(std::move(entry));
  }
  return entries;
}

bool HasManagedFields(const Json* obj) {
  if (!obj || !obj->is_object()) return false;
  auto meta = obj->find("metadata");
  if (meta == obj->end() || !meta->is_object()) return false;
  auto mf = meta->find("managedFields");
  return mf != meta->end() && mf->is_array() && !mf->empty();
}

void WriteEntries(std::vector<Entry> entries, Json& obj) {
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [](const Entry& e) { return e.fields.empty(); }),
                entries.end());
  // kube-apiserver's order: operation, time, manager, apiVersion, subresource.
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.operation, a.time, a.manager, a.api_version, a.subresource) <
           std::tie(b.operation, b.time, b.manager, b.api_version, b.subresource);
  });
  Json& meta = obj["metadata"];
  if (entries.empty()) {
    meta.erase("managedFields");
    return;
  }
  Json list = Json::array();
  for (const auto& e : entries) {
    Json j = {{"manager", e.manager}, {"operation", e.operation}, {"apiVersion", e.api_version}};
    if (!e.time.empty()) j["time"] = e.time;
    j["fieldsType"] = "FieldsV1";
    j["fieldsV1"] = ToFieldsV1(e.fields);
    if (!e.subresource.empty()) j["subresource"] = e.subresource;
    list.push_back(std::move(j));
  }
  meta["managedFields"] = std::move(list);
}

bool IsPrefix(const Path& prefix, const Path& p) {
  return prefix.size() <= p.size() && std::equal(prefix.begin(), prefix.end(), p.begin());
}

// Removes what `p` names from `obj`; a path that is not there is nothing to remove.
void RemovePath(Json& obj, const Path& p) {
  Json* cur = &obj;
  for (size_t i = 0; i < p.size(); ++i) {
    const std::string& e = p[i];
    const bool last = i + 1 == p.size();
    std::string_view rest = std::string_view(e).substr(2);
    if (e.rfind("f:", 0) == 0) {
      if (!cur->is_object()) return;
      auto it = cur->find(std::string(rest));
      if (it == cur->end()) return;
      if (last) {
        cur->erase(it);
        return;
      }
      cur = &*it;
      continue;
    }
    if (!cur->is_array()) return;
    Json want = Json::parse(rest, nullptr, false);
    if (want.is_discarded()) return;
    auto match = cur->end();
    if (e.rfind("k:", 0) == 0 && want.is_object()) {
      match = std::find_if(cur->begin(), cur->end(), [&](const Json& item) {
        if (!item.is_object()) return false;
        for (auto k = want.begin(); k != want.end(); ++k) {
          auto v = item.find(k.key());
          if (v == item.end() || *v != *k) return false;
        }
        return true;
      });
    } else if (e.rfind("v:", 0) == 0) {
      match = std::find(cur->begin(), cur->end(), want);
    } else if (e.rfind("i:", 0) == 0 && want.is_number_unsigned() &&
               want.get<size_t>() < cur->size()) {
      match = cur->begin() + want.get<size_t>();
    }
    if (match == cur->end()) return;
    if (last) {
      cur->erase(match);
      return;
    }
    cur = &*match;
  }
}

// ".spec.containers[name=\"c\"].image", as kube-apiserver prints field paths.
std::string PathString(const Path& p) {
  std::string out;
  for (const auto& e : p) {
    std::string_view rest = std::string_view(e).substr(2);
    if (e.rfind("f:", 0) == 0) {
      out += '.';
      out += rest;
    } else if (e.rfind("k:", 0) == 0) {
      Json key = Json::parse(rest, nullptr, false);
      out += '[';
      bool first = true;
      if (key.is_object()) {
        for (auto it = key.begin(); it != key.end(); ++it) {
          if (!first) out += ',';
          first = false;
          out += it.key() + "=" + it->dump();
        }
      }
      out += ']';
    } else if (e.rfind("v:", 0) == 0) {
      out += "[=";
      out += rest;
      out += ']';
    } else {
      out += '[';
      out += rest;
      out += ']';
    }
  }
  return out;
}

std::string ManagerString(const Entry& e) {
  std::string s = Json(e.manager).dump();
  if (!e.subresource.empty()) s += fmt::format(" with subresource {}", Json(e.subresource).dump());
  if (e.operation == "Update") s += " using " + e.api_version;
  return s;
}

std::string ConflictMessage(const std::vector<FieldConflict>& conflicts) {
  if (conflicts.size() == 1) {
    return fmt::format("Apply failed with 1 conflict: conflict with {}: {}", conflicts[0].manager,
                       conflicts[0].field);
  }
  std::map<std::string, std::vector<std::string>> by_manager;
  for (const auto& c : conflicts) by_manager[c.manager].push_back(c.field);
  std::string lines;
  for (const auto& [manager, fields] : by_manager) {
    if (!lines.empty()) lines += '\n';
    lines += fmt::format("conflicts with {}:", manager);
    for (const auto& f : fields) lines += "\n- " + f;
  }
  return fmt::format("Apply failed with {} conflicts: {}", conflicts.size(), lines);
}

}  // namespace

VoidResult ApplyManagedFields(const Json* current, const Json& applied, Json& next,
                              const FieldManagerContext& ctx, bool force,
                              std::vector<FieldConflict>* conflicts) {
  if (applied.contains("metadata") && applied["metadata"].is_object()) {
    auto mf = applied["metadata"].find("managedFields");
    if (mf != applied["metadata"].end() && !mf->is_null()) {
      return Error{"metadata.managedFields must be nil", ErrorCode::kBadRequest};
    }
  }
  std::string scope = !ctx.has_status_subresource   ? ""
                      : ctx.subresource == "status" ? "status"
                                                    : "-status";
  FieldSet applied_set;
  for (const auto& [p, leaf] : LeavesOf(applied, scope)) applied_set.insert(p);
  const Leaves live = current ? LeavesOf(*current, "") : Leaves{};
  const Leaves merged = LeavesOf(next, "");

  std::vector<Entry> entries = ReadEntries(current);
  auto self = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) {
    return e.manager == ctx.manager && e.operation == "Apply" && e.subresource == ctx.subresource;
  });
  FieldSet last = self != entries.end() ? self->fields : FieldSet{};

  // A field another manager owns conflicts when this apply changes its live value.
  std::vector<FieldConflict> found;
  std::vector<std::pair<Entry*, Path>> taken;
  for (auto& e : entries) {
    if (self != entries.end() && &e == &*self) continue;
    for (const auto& p : e.fields) {
      if (!applied_set.count(p)) continue;
      auto l = live.find(p);
      auto m = merged.find(p);
      bool changed = l == live.end() || m == merged.end() || !Same(l->second, m->second);
      if (!changed) continue;
      found.push_back({ManagerString(e), PathString(p)});
      taken.emplace_back(&e, p);
    }
  }
  if (!found.empty() && !force) {
    std::string message = ConflictMessage(found);
    if (conflicts) *conflicts = std::move(found);
    return Error{std::move(message), ErrorCode::kConflict};
  }
  for (auto& [e, p] : taken) e->fields.erase(p);

  // Fields this manager applied before and no longer applies go, unless someone else owns them
  // (or something under them).
  for (const auto& p : last) {
    if (applied_set.count(p)) continue;
    bool owned = false;
    for (const auto& e : entries) {
      if (self != entries.end() && &e == &*self) continue;
      auto it = e.fields.lower_bound(p);
      if (it != e.fields.end() && IsPrefix(p, *it)) {
        owned = true;
        break;
      }
    }
    if (!owned) RemovePath(next, p);
  }

  if (self == entries.end()) {
    entries.push_back(Entry{ctx.manager, "Apply", ctx.api_version, ctx.now, ctx.subresource, {}});
    self = entries.end() - 1;
  }
  self->fields = std::move(applied_set);
  self->api_version = ctx.api_version;
  self->time = ctx.now;
  WriteEntries(std::move(entries), next);
  return {};
}

void RecordUpdateManagedFields(const Json* current, Json& next, const FieldManagerContext& ctx) {
  const bool next_has_key = next.is_object() && next.contains("metadata") &&
                            next["metadata"].is_object() &&
                            next["metadata"].contains("managedFields");
  if (!ctx.manager_named && !HasManagedFields(current) && !HasManagedFields(&next)) {
    if (next_has_key) next["metadata"].erase("managedFields");
    return;
  }
  if (ctx.manager.empty()) return;
  // Managed fields sent with the object (as read, or reset with []) are taken as given; absent
  // ones are the live object's.
  std::vector<Entry> entries = next_has_key ? ReadEntries(&next) : ReadEntries(current);
  const Leaves old_leaves = current ? LeavesOf(*current, "") : Leaves{};
  const Leaves new_leaves = LeavesOf(next, "");
  FieldSet changed, removed;
  for (const auto& [p, leaf] : new_leaves) {
    auto o = old_leaves.find(p);
    if (o == old_leaves.end() || !Same(o->second, leaf)) changed.insert(p);
  }
  for (const auto& [p, leaf] : old_leaves) {
    if (!new_leaves.count(p)) removed.insert(p);
  }
  auto self = std::find_if(entries.begin(), entries.end(), [&](const Entry& e) {
    return e.manager == ctx.manager && e.operation == "Update" && e.subresource == ctx.subresource;
  });
  for (auto& e : entries) {
    for (const auto& p : removed) e.fields.erase(p);
    if (self != entries.end() && &e == &*self) continue;
    for (const auto& p : changed) e.fields.erase(p);
  }
  if (!changed.empty()) {
    if (self == entries.end()) {
      entries.push_back(
          Entry{ctx.manager, "Update", ctx.api_version, ctx.now, ctx.subresource, {}});
      self = entries.end() - 1;
    }
    self->fields.insert(changed.begin(), changed.end());
    self->api_version = ctx.api_version;
    self->time = ctx.now;
  }
  WriteEntries(std::move(entries), next);
}

}  // namespace berth::apiserver
