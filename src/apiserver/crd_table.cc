#include "apiserver/crd_table.h"

#include <fmt/format.h>

#include "api/codec.h"
#include "apiserver/field_errors.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

struct Step {
  std::string key;  // a field ("" for none)
  std::optional<size_t> index;
  std::string filter_field;  // [?(@.field=="value")]
  Json filter_value;
};

// ".a.b[0].c[?(@.type==\"Ready\")]" into steps; empty on a form this evaluator does not know.
std::vector<Step> ParsePath(std::string path) {
  if (path.size() >= 2 && path.front() == '{' && path.back() == '}') {
    path = path.substr(1, path.size() - 2);
  }
  std::vector<Step> steps;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '.') {
      ++i;
      size_t end = path.find_first_of(".[", i);
      if (end == std::string::npos) end = path.size();
      if (end > i) steps.push_back({path.substr(i, end - i), {}, "", nullptr});
      i = end;
    } else if (path[i] == '[') {
      size_t end = path.find(']', i);
      if (end == std::string::npos) return {};
      const std::string inner = path.substr(i + 1, end - i - 1);
      Step s;
      if (inner.rfind("?(@.", 0) == 0 && inner.back() == ')') {
        const std::string cond = inner.substr(4, inner.size() - 5);
        size_t eq = cond.find("==");
        if (eq == std::string::npos) return {};
        s.filter_field = cond.substr(0, eq);
        std::string value = cond.substr(eq + 2);
        if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'')) {
          s.filter_value = value.substr(1, value.size() - 2);
        } else {
          s.filter_value = Json::parse(value, nullptr, false);
        }
      } else if (!inner.empty() && inner.find_first_not_of("0123456789") == std::string::npos) {
        s.index = std::stoul(inner);
      } else {
        return {};
      }
      steps.push_back(std::move(s));
      i = end + 1;
    } else {
      return {};
    }
  }
  return steps;
}

std::string Str(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A cell as kube-apiserver's table convertor makes it from the column's type: a value of
// another type than the column's is an empty cell.
Json Cell(const Json* v, const std::string& type, int64_t now) {
  if (!v || v->is_null()) return nullptr;
  if (type == "string") return v->is_string() ? *v : Json(v->dump());
  if (type == "integer") return v->is_number() ? Json(v->get<int64_t>()) : Json();
  if (type == "number") return v->is_number() ? *v : Json();
  if (type == "boolean") return v->is_boolean() ? *v : Json();
  if (type == "date") {
    if (!v->is_string()) return nullptr;
    auto t = ParseTimestamp(v->get<std::string>());
    return t.ok() ? Json(HumanDuration(now - *t)) : Json("<invalid>");
  }
  return nullptr;
}

Json RowObject(const Json& obj, IncludeObject include) {
  if (include == IncludeObject::kObject) return obj;
  return {{"kind", "PartialObjectMetadata"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", obj.value("metadata", Json::object())}};
}

Json BaseTable(int64_t rv) {
  return {{"kind", "Table"},
          {"apiVersion", "meta.k8s.io/v1"},
          {"metadata", {{"resourceVersion", std::to_string(rv)}}}};
}

}  // namespace

const Json* JsonPathValue(const Json& obj, const std::string& path) {
  const std::vector<Step> steps = ParsePath(path);
  if (steps.empty()) return nullptr;
  const Json* cur = &obj;
  for (const Step& s : steps) {
    if (!s.key.empty()) {
      if (!cur->is_object() || !cur->contains(s.key)) return nullptr;
      cur = &(*cur)[s.key];
    } else if (s.index) {
      if (!cur->is_array() || *s.index >= cur->size()) return nullptr;
      cur = &(*cur)[*s.index];
    } else {
      if (!cur->is_array()) return nullptr;
      const Json* found = nullptr;
      for (const auto& e : *cur) {
        if (e.is_object() && e.contains(s.filter_field) && e[s.filter_field] == s.filter_value) {
          found = &e;
          break;
        }
      }
      if (!found) return nullptr;
      cur = found;
    }
  }
  return cur;
}

Json CustomResourceTable(const CustomResourceVersion& v, const std::vector<const Json*>& objects,
                         int64_t rv, IncludeObject include, int64_t now, bool with_columns) {
  Json columns = v.printer_columns.is_array() ? v.printer_columns : Json::array();
  if (columns.empty()) {
    columns.push_back(
        {{"name", "Age"}, {"type", "date"}, {"jsonPath", ".metadata.creationTimestamp"}});
  }
  Json table = BaseTable(rv);
  if (with_columns) {
    Json defs = Json::array({{{"name", "Name"},
                              {"type", "string"},
                              {"format", "name"},
                              {"description", "Name must be unique within a namespace."},
                              {"priority", 0}}});
    for (const auto& c : columns) {
      defs.push_back({{"name", Str(c, "name")},
                      {"type", Str(c, "type")},
                      {"format", Str(c, "format")},
                      {"description", Str(c, "description")},
                      {"priority", c.value("priority", 0)}});
    }
    table["columnDefinitions"] = std::move(defs);
  } else {
    table["columnDefinitions"] = nullptr;
  }
  Json rows = Json::array();
  for (const Json* obj : objects) {
    Json cells = Json::array({(*obj)["metadata"].value("name", "")});
    for (const auto& c : columns) {
      cells.push_back(Cell(JsonPathValue(*obj, Str(c, "jsonPath")), Str(c, "type"), now));
    }
    Json row = {{"cells", std::move(cells)}};
    if (include != IncludeObject::kNone) row["object"] = RowObject(*obj, include);
    rows.push_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

Json CrdTable(const std::vector<const Json*>& objects, int64_t rv, IncludeObject include,
              bool with_columns) {
  Json table = BaseTable(rv);
  if (with_columns) {
    table["columnDefinitions"] = {{{"name", "Name"},
                                   {"type", "string"},
                                   {"format", "name"},
                                   {"description", ""},
                                   {"priority", 0}},
                                  {{"name", "Created At"},
                                   {"type", "date"},
                                   {"format", ""},
                                   {"description", ""},
                                   {"priority", 0}}};
  } else {
    table["columnDefinitions"] = nullptr;
  }
  Json rows = Json::array();
  for (const Json* obj : objects) {
    const Json meta = obj->value("metadata", Json::object());
    Json row = {{"cells", {meta.value("name", ""), meta.value("creationTimestamp", "")}}};
    if (include != IncludeObject::kNone) row["object"] = RowObject(*obj, include);
    rows.push_back(std::move(row));
  }
  table["rows"] = std::move(rows);
  return table;
}

Json CustomScaleOf(const CustomResourceVersion& v, const Json& object) {
  const Json meta = object.value("metadata", Json::object());
  Json scale = {{"kind", "Scale"},
                {"apiVersion", "autoscaling/v1"},
                {"metadata",
                 {{"name", meta.value("name", "")},
                  {"namespace", meta.value("namespace", "")},
                  {"uid", meta.value("uid", "")},
                  {"resourceVersion", meta.value("resourceVersion", "")},
                  {"creationTimestamp", meta.value("creationTimestamp", Json())}}},
                {"spec", Json::object()},
                {"status", {{"replicas", 0}}}};
  if (const Json* n = JsonPathValue(object, v.spec_replicas_path); n && n->is_number_integer()) {
    scale["spec"]["replicas"] = *n;
  }
  if (const Json* n = JsonPathValue(object, v.status_replicas_path); n && n->is_number_integer()) {
    scale["status"]["replicas"] = *n;
  }
  if (!v.label_selector_path.empty()) {
    if (const Json* s = JsonPathValue(object, v.label_selector_path); s && s->is_string()) {
      scale["status"]["selector"] = *s;
    }
  }
  return scale;
}

Result<Json> WithCustomScale(const CustomResourceVersion& v, const Json& object, const Json& scale,
                             const std::string& name) {
  const Json* replicas = nullptr;
  if (scale.contains("spec") && scale["spec"].is_object() && scale["spec"].contains("replicas")) {
    replicas = &scale["spec"]["replicas"];
  }
  if (!replicas || !replicas->is_number_integer() || replicas->get<int64_t>() < 0) {
    return InvalidObject("Scale.autoscaling", name,
                         {{FieldErrorType::kInvalid, "spec.replicas",
                           fmt::format("{}: must be greater than or equal to 0",
                                       replicas ? replicas->dump() : "null")}});
  }
  const std::vector<Step> steps = ParsePath(v.spec_replicas_path);
  Json next = object;
  Json* cur = &next;
  for (const Step& s : steps) {
    if (s.key.empty()) {
      return Error{"the scale subresource's specReplicasPath must be a field path",
                   ErrorCode::kUnknown};
    }
    if (!cur->is_object()) *cur = Json::object();
    cur = &(*cur)[s.key];
  }
  *cur = *replicas;
  return next;
}

}  // namespace berth::apiserver
