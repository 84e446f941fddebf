#include "apiserver/field_validation.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/json_parse.h"
#include "apiserver/field_errors.h"
#include "apiserver/field_schema.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
namespace fs = field_schema;

// One step of the path to the value being visited: a key or an array index.
struct PathPart {
  const std::string* key = nullptr;  // null: an index
  size_t index = 0;
};

// "spec.containers[0].name"; map keys in brackets ("data[k]").
std::string RenderPath(const std::vector<PathPart>& parts, const std::vector<bool>* map_keys,
                       bool leading_dot) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    const PathPart& p = parts[i];
    if (!p.key) {
      fmt::format_to(std::back_inserter(out), "[{}]", p.index);
    } else if (map_keys && (*map_keys)[i]) {
      out += '[';
      out += *p.key;
      out += ']';
    } else {
      if (!out.empty() || leading_dot) out += '.';
      out += *p.key;
    }
  }
  return out;
}

const fs::Field* FindField(const fs::Tables& t, const fs::ObjectType& o, std::string_view name) {
  auto fields = t.fields.subspan(o.first, o.count);
  auto it = std::lower_bound(fields.begin(), fields.end(), name,
                             [](const fs::Field& f, std::string_view n) { return f.name < n; });
  if (it == fields.end() || it->name != name) return nullptr;
  return &*it;
}

// Visits `v` as schema node `node` describes it. kDrop: erases unknown fields (J is Json);
// otherwise only reports them.
template <bool kDrop, typename J>
class Walker {
 public:
  Walker(bool ssa_paths, std::vector<std::string>* problems)
      : t_(fs::Schema()), ssa_(ssa_paths), problems_(problems) {
    path_.reserve(16);
    map_key_.reserve(16);
  }

  void Walk(uint16_t node, J& v) {
    const fs::Node& n = t_.nodes[node];
    switch (n.kind) {
      default:  // scalars and free subtrees have no fields
        return;
      case fs::NodeKind::kObject: {
        if (!v.is_object()) return;
        const fs::ObjectType& o = t_.objects[n.ref];
        auto& obj =
            v.template get_ref<std::conditional_t<kDrop, Json::object_t&, const Json::object_t&>>();
        for (auto it = obj.begin(); it != obj.end();) {
          const fs::Field* f = FindField(t_, o, it->first);
          Push(&it->first, 0, false);
          if (!f) {
            Report();
            Pop();
            if constexpr (kDrop) {
              it = obj.erase(it);
            } else {
              ++it;
            }
            continue;
          }
          Walk(f->node, it->second);
          Pop();
          ++it;
        }
        return;
      }
      case fs::NodeKind::kArray: {
        if (!v.is_array() || Trivial(n.ref)) return;
        size_t i = 0;
        for (auto& item : v) {
          Push(nullptr, i++, false);
          Walk(n.ref, item);
          Pop();
        }
        return;
      }
      case fs::NodeKind::kMap: {
        if (!v.is_object() || Trivial(n.ref)) return;
        for (auto it = v.begin(); it != v.end(); ++it) {
          Push(&it.key(), 0, true);
          Walk(n.ref, it.value());
          Pop();
        }
        return;
      }
    }
  }

 private:
  bool Trivial(uint16_t node) const {
    fs::NodeKind k = t_.nodes[node].kind;
    return k != fs::NodeKind::kObject && k != fs::NodeKind::kArray && k != fs::NodeKind::kMap;
  }
  void Push(const std::string* key, size_t index, bool map_key) {
    path_.push_back({key, index});
    map_key_.push_back(map_key);
  }
  void Pop() {
    path_.pop_back();
    map_key_.pop_back();
  }
  void Report() {
    if (!problems_) return;
    if (ssa_) {
      problems_->push_back(RenderPath(path_, nullptr, true));
    } else {
      problems_->push_back(
          fmt::format("unknown field \"{}\"", RenderPath(path_, &map_key_, false)));
    }
  }

  const fs::Tables& t_;
  const bool ssa_;
  std::vector<std::string>* problems_;
  std::vector<PathPart> path_;
  std::vector<bool> map_key_;
};

// Builds the document as nlohmann's own DOM parser does, but sees each key before it is
// stored, so a repeated key is noticed (the DOM parser silently overwrites).
class DuplicateNotingSax {
 public:
  DuplicateNotingSax(Json* root, size_t max_depth, std::vector<std::string>* duplicates)
      : root_(root), max_depth_(max_depth), duplicates_(duplicates) {
    frames_.reserve(16);
  }

  bool null() { return Put(nullptr) != nullptr; }
  bool boolean(bool v) { return Put(v) != nullptr; }
  bool number_integer(Json::number_integer_t v) { return Put(v) != nullptr; }
  bool number_unsigned(Json::number_unsigned_t v) { return Put(v) != nullptr; }
  bool number_float(Json::number_float_t v, const std::string&) { return Put(v) != nullptr; }
  bool string(std::string& v) { return Put(std::move(v)) != nullptr; }
  bool binary(Json::binary_t& v) { return Put(Json::binary(std::move(v))) != nullptr; }
  bool start_object(size_t) {
    if (frames_.size() >= max_depth_) return false;
    Json* obj = Put(Json::object());
    frames_.push_back({obj, nullptr});
    return true;
  }
  bool key(std::string& k) {
    Frame& f = frames_.back();
    auto& obj = f.container->get_ref<Json::object_t&>();
    auto [it, inserted] = obj.try_emplace(std::move(k));
    f.key = &it->first;
    if (!inserted) {
      it->second = nullptr;  // the later value replaces the earlier one
      if (duplicates_) duplicates_->push_back(Path());
    }
    slot_ = &it->second;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    return true;
  }
  bool start_array(size_t) {
    if (frames_.size() >= max_depth_) return false;
    Json* arr = Put(Json::array());
    frames_.push_back({arr, nullptr});
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    return true;
  }
  bool parse_error(size_t, const std::string&, const nlohmann::detail::exception&) { return false; }

 private:
  struct Frame {
    Json* container;
    const std::string* key;  // objects: the key whose value is being read
  };

  // Stores a value where the parser is and returns where it went.
  template <typename V>
  Json* Put(V&& v) {
    if (frames_.empty()) {
      *root_ = Json(std::forward<V>(v));
      return root_;
    }
    Json* c = frames_.back().container;
    if (c->is_array()) {
      auto& arr = c->get_ref<Json::array_t&>();
      arr.emplace_back(std::forward<V>(v));
      return &arr.back();
    }
    *slot_ = Json(std::forward<V>(v));
    return slot_;
  }

  std::string Path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.container->is_array()) {
        // The open element is the array's last.
        fmt::format_to(std::back_inserter(out), "[{}]", f.container->size() - 1);
      } else if (f.key) {
        if (!out.empty()) out += '.';
        out += *f.key;
      }
    }
    return out;
  }

  Json* root_;
  const size_t max_depth_;
  std::vector<std::string>* duplicates_;
  std::vector<Frame> frames_;
  Json* slot_ = nullptr;
};

}  // namespace

Result<FieldValidation> ParseFieldValidation(const std::optional<std::string>& value,
                                             std::string_view options_kind) {
  if (!value || value->empty() || *value == "Warn") return FieldValidation::kWarn;
  if (*value == "Strict") return FieldValidation::kStrict;
  if (*value == "Ignore") return FieldValidation::kIgnore;
  return InvalidObject(fmt::format("{}.meta.k8s.io", options_kind), "",
                       {{FieldErrorType::kNotSupported, "fieldValidation",
                         fmt::format("{}: supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"",
                                     Json(*value).dump())}});
}

const FieldSchema* FindFieldSchema(std::string_view group, std::string_view kind) {
  for (const fs::KindRoot& k : fs::Schema().kinds) {
    if (k.kind == kind && k.group == group) return &k;
  }
  return nullptr;
}

void DropUnknownFields(const FieldSchema& schema, Json& object,
                       std::vector<std::string>* problems) {
  Walker<true, Json>(false, problems).Walk(schema.node, object);
}

std::vector<std::string> FindUnknownFields(const FieldSchema& schema, const Json& object,
                                           FieldPathStyle style) {
  std::vector<std::string> found;
  Walker<false, const Json>(style == FieldPathStyle::kApply, &found).Walk(schema.node, object);
  return found;
}

bool ParseJsonNotingDuplicates(std::string_view text, size_t max_depth, Json* out,
                               std::vector<std::string>* duplicates) {
  if (ParseJsonFast(text, out, max_depth, duplicates)) return true;
  // Refused by the fast parser: nlohmann's reads what it read differently, or refuses too.
  std::vector<std::string> found;
  DuplicateNotingSax sax(out, max_depth, duplicates ? &found : nullptr);
  if (!Json::sax_parse(text.begin(), text.end(), &sax)) return false;
  if (duplicates) {
    for (auto& d : found) duplicates->push_back(std::move(d));
  }
  return true;
}

std::string WarningHeaderValue(std::string_view text) {
  std::string out = "299 - \"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  out += '"';
  return out;
}

}  // namespace berth::apiserver
