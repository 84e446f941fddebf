#include "scenario/scenario_spec.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/codec.h"
#include "apiserver/selectors.h"

namespace berth::scenario {
namespace {

using Json = nlohmann::json;

Error Invalid(const std::string& where, const std::string& what) {
  return Error{fmt::format("{}: {}", where, what), ErrorCode::kInvalid};
}

// The keys of `obj` must all be in `known`.
VoidResult OnlyKnown(const Json& obj, const std::string& where,
                     std::initializer_list<const char*> known) {
  for (const auto& [key, value] : obj.items()) {
    bool ok = false;
    for (const char* k : known) ok = ok || key == k;
    if (!ok) return Invalid(where + "." + key, "unknown field");
  }
  return {};
}

Result<std::string> String(const Json& obj, const char* key, const std::string& where,
                           bool required) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    if (required) return Invalid(where + "." + key, "required");
    return std::string();
  }
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number()) return it->dump();  // cpu: 4
  return Invalid(where + "." + key, "must be a string");
}

Result<int> Int(const Json& obj, const char* key, const std::string& where, int fallback,
                int minimum) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) return Invalid(where + "." + key, "must be an integer");
  const int64_t v = it->get<int64_t>();
  if (v < minimum) return Invalid(where + "." + key, fmt::format("must be >= {}", minimum));
  if (v > 1000000) return Invalid(where + "." + key, "must be <= 1000000");
  return static_cast<int>(v);
}

Result<std::vector<Json>> ReadManifests(const std::string& file, const std::string& base_dir,
                                        const std::string& where) {
  std::filesystem::path p(file);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  std::ifstream in(p);
  if (!in) return Invalid(where, fmt::format("cannot read {}", p.string()));
  std::stringstream text;
  text << in.rdbuf();
  auto docs = ParseDocuments(text.str(), p.string());
  if (!docs.ok()) return Invalid(where, docs.error().message);
  std::vector<Json> out;
  for (Json& d : *docs) {
    if (d.is_null()) continue;
    // A List (kubectl get -o yaml) contributes its items.
    if (d.is_object() && d.value("kind", "") == "List" && d.contains("items")) {
      for (Json& item : d["items"]) out.push_back(std::move(item));
      continue;
    }
    out.push_back(std::move(d));
  }
  return out;
}

VoidResult CheckObject(const Json& obj, const std::string& where) {
  if (!obj.is_object()) return Invalid(where, "must be an object");
  if (!obj.contains("apiVersion") || !obj.contains("kind"))
    return Invalid(where, "needs apiVersion and kind");
  const Json& meta = obj.value("metadata", Json::object());
  if (meta.value("name", "").empty() && meta.value("generateName", "").empty())
    return Invalid(where + ".metadata.name", "required");
  return {};
}

// apply / create / delete: {file: F} or {object: {...}} or {objects: [...]}.
VoidResult ReadObjects(const Json& body, const std::string& where, const std::string& base_dir,
                       Step* step) {
  if (!body.is_object()) return Invalid(where, "must be an object (file, object or objects)");
  if (auto r = OnlyKnown(body, where, {"file", "object", "objects"}); !r.ok()) return r;
  const int given = body.contains("file") + body.contains("object") + body.contains("objects");
  if (given != 1) return Invalid(where, "needs exactly one of file, object, objects");
  if (body.contains("file")) {
    auto file = String(body, "file", where, true);
    if (!file.ok()) return file.error();
    auto objs = ReadManifests(*file, base_dir, where + ".file");
    if (!objs.ok()) return objs.error();
    step->file = *file;
    step->objects = std::move(objs).value();
    for (size_t i = 0; i < step->objects.size(); ++i) {
      if (auto r = CheckObject(step->objects[i], fmt::format("{}.file[{}]", where, i)); !r.ok())
        return r;
    }
    return {};
  }
  if (body.contains("object")) {
    if (auto r = CheckObject(body["object"], where + ".object"); !r.ok()) return r;
    step->objects.push_back(body["object"]);
    return {};
  }
  if (!body["objects"].is_array()) return Invalid(where + ".objects", "must be a list");
  for (size_t i = 0; i < body["objects"].size(); ++i) {
    if (auto r = CheckObject(body["objects"][i], fmt::format("{}.objects[{}]", where, i)); !r.ok())
      return r;
    step->objects.push_back(body["objects"][i]);
  }
  return {};
}

VoidResult ReadScale(const Json& body, const std::string& where, Step* step) {
  if (!body.is_object()) return Invalid(where, "must be an object");
  if (auto r = OnlyKnown(body, where, {"kind", "name", "namespace", "replicas"}); !r.ok()) return r;
  auto kind = String(body, "kind", where, true);
  if (!kind.ok()) return kind.error();
  static const char* kScalable[] = {"Deployment", "ReplicaSet", "StatefulSet",
                                    "ReplicationController"};
  bool known = false;
  for (const char* k : kScalable) known = known || *kind == k;
  if (!known) {
    return Invalid(where + ".kind",
                   "must be Deployment, ReplicaSet, StatefulSet or ReplicationController");
  }
  auto name = String(body, "name", where, true);
  if (!name.ok()) return name.error();
  auto ns = String(body, "namespace", where, false);
  if (!ns.ok()) return ns.error();
  if (!body.contains("replicas")) return Invalid(where + ".replicas", "required");
  auto replicas = Int(body, "replicas", where, 0, 0);
  if (!replicas.ok()) return replicas.error();
  step->target_kind = *kind;
  step->name = *name;
  if (!ns->empty()) step->namespace_ = *ns;
  step->replicas = *replicas;
  return {};
}

VoidResult ReadWait(const Json& body, const std::string& where, WaitSpec* wait) {
  if (!body.is_object()) return Invalid(where, "must be an object");
  if (auto r = OnlyKnown(body, where, {"for", "namespace", "selector", "count", "node", "timeout"});
      !r.ok())
    return r;
  auto what = String(body, "for", where, true);
  if (!what.ok()) return what.error();
  static const std::pair<const char*, WaitFor> kConditions[] = {
      {"PodsScheduled", WaitFor::kPodsScheduled},
      {"PodsRunning", WaitFor::kPodsRunning},
      {"NodeReady", WaitFor::kNodeReady},
      {"NodeNotReady", WaitFor::kNodeNotReady}};
  bool found = false;
  for (const auto& [name, c] : kConditions) {
    if (*what == name) {
      wait->condition = c;
      found = true;
    }
  }
  if (!found) {
    return Invalid(where + ".for",
                   fmt::format("unknown condition \"{}\" (PodsScheduled, PodsRunning, NodeReady, "
                               "NodeNotReady)",
                               *what));
  }
  const bool node_condition =
      wait->condition == WaitFor::kNodeReady || wait->condition == WaitFor::kNodeNotReady;
  auto node = String(body, "node", where, node_condition);
  if (!node.ok()) return node.error();
  if (!node_condition && !node->empty())
    return Invalid(where + ".node", "only for node conditions");
  wait->node = *node;
  auto ns = String(body, "namespace", where, false);
  auto selector = String(body, "selector", where, false);
  if (!ns.ok()) return ns.error();
  if (!selector.ok()) return selector.error();
  if (auto parsed = apiserver::ParseLabelSelector(*selector); !parsed.ok())
    return Invalid(where + ".selector", parsed.error().message);
  wait->namespace_ = *ns;
  wait->selector = *selector;
  auto count = Int(body, "count", where, 0, 0);
  if (!count.ok()) return count.error();
  wait->count = *count;
  if (body.contains("timeout")) {
    auto t = String(body, "timeout", where, true);
    if (!t.ok()) return t.error();
    auto d = ParseDuration(*t, where + ".timeout");
    if (!d.ok()) return d.error();
    if (*d <= Duration::zero()) return Invalid(where + ".timeout", "must be > 0");
    wait->timeout = *d;
  }
  return {};
}

VoidResult ReadNodeName(const Json& body, const std::string& where, Step* step) {
  if (!body.is_object()) return Invalid(where, "must be an object");
  if (auto r = OnlyKnown(body, where, {"name"}); !r.ok()) return r;
  auto name = String(body, "name", where, true);
  if (!name.ok()) return name.error();
  step->name = *name;
  return {};
}

Result<Step> ReadStep(const Json& doc, const std::string& where, const std::string& base_dir) {
  if (!doc.is_object()) return Invalid(where, "must be an object");
  Step step;
  step.where = where;
  static const std::pair<const char*, StepKind> kActions[] = {
      {"apply", StepKind::kApply},       {"create", StepKind::kCreate},
      {"delete", StepKind::kDelete},     {"scale", StepKind::kScale},
      {"stopNode", StepKind::kStopNode}, {"startNode", StepKind::kStartNode},
      {"wait", StepKind::kWait},         {"checkpoint", StepKind::kCheckpoint}};
  const char* action = nullptr;
  for (const auto& [key, value] : doc.items()) {
    if (key == "at") continue;
    bool known = false;
    for (const auto& [name, kind] : kActions) {
      if (key != name) continue;
      known = true;
      if (action)
        return Invalid(where, fmt::format("has both {} and {}: one action a step", action, name));
      action = name;
      step.kind = kind;
    }
    if (!known) return Invalid(where + "." + key, "unknown field");
  }
  if (!action) {
    return Invalid(where,
                   "needs an action (apply, create, delete, scale, stopNode, startNode, "
                   "wait, checkpoint)");
  }
  if (doc.contains("at")) {
    auto at = String(doc, "at", where, true);
    if (!at.ok()) return at.error();
    auto d = ParseDuration(*at, where + ".at");
    if (!d.ok()) return d.error();
    if (*d < Duration::zero()) return Invalid(where + ".at", "must be >= 0s");
    step.at = *d;
  }
  const Json& body = doc[action];
  const std::string field = where + "." + action;
  VoidResult r;
  switch (step.kind) {
    case StepKind::kApply:
    case StepKind::kCreate:
    case StepKind::kDelete:
      r = ReadObjects(body, field, base_dir, &step);
      break;
    case StepKind::kScale:
      r = ReadScale(body, field, &step);
      break;
    case StepKind::kStopNode:
    case StepKind::kStartNode:
      r = ReadNodeName(body, field, &step);
      break;
    case StepKind::kWait:
      r = ReadWait(body, field, &step.wait);
      break;
    case StepKind::kCheckpoint: {
      if (!body.is_object()) return Invalid(field, "must be an object");
      if (auto k = OnlyKnown(body, field, {"name"}); !k.ok()) return k.error();
      auto name = String(body, "name", field, true);
      if (!name.ok()) return name.error();
      step.name = *name;
      break;
    }
  }
  if (!r.ok()) return r.error();
  return step;
}

VoidResult ReadCluster(const Json& doc, const std::string& base_dir, Scenario* s) {
  const std::string where = "spec.cluster";
  if (!doc.is_object()) return Invalid(where, "must be an object");
  if (auto r = OnlyKnown(doc, where, {"nodes", "nodeTemplate", "files"}); !r.ok()) return r;
  auto nodes = Int(doc, "nodes", where, 0, 0);
  if (!nodes.ok()) return nodes.error();
  s->cluster.nodes = *nodes;
  if (doc.contains("nodeTemplate")) {
    const Json& t = doc["nodeTemplate"];
    const std::string tw = where + ".nodeTemplate";
    if (!t.is_object()) return Invalid(tw, "must be an object");
    if (auto r = OnlyKnown(t, tw, {"cpu", "memory", "pods", "zones", "labels"}); !r.ok()) return r;
    NodeTemplate& nt = s->cluster.node_template;
    auto cpu = String(t, "cpu", tw, false);
    auto memory = String(t, "memory", tw, false);
    if (!cpu.ok()) return cpu.error();
    if (!memory.ok()) return memory.error();
    if (!cpu->empty()) nt.cpu = *cpu;
    if (!memory->empty()) nt.memory = *memory;
    auto pods = Int(t, "pods", tw, nt.pods, 1);
    auto zones = Int(t, "zones", tw, nt.zones, 0);
    if (!pods.ok()) return pods.error();
    if (!zones.ok()) return zones.error();
    if (*zones > 26) return Invalid(tw + ".zones", "must be <= 26");
    nt.pods = *pods;
    nt.zones = *zones;
    if (t.contains("labels")) {
      if (!t["labels"].is_object()) return Invalid(tw + ".labels", "must be a map");
      for (const auto& [k, v] : t["labels"].items()) {
        if (!v.is_string()) return Invalid(tw + ".labels." + k, "must be a string");
        nt.labels[k] = v.get<std::string>();
      }
    }
  }
  if (doc.contains("files")) {
    if (!doc["files"].is_array()) return Invalid(where + ".files", "must be a list");
    for (size_t i = 0; i < doc["files"].size(); ++i) {
      const std::string fw = fmt::format("{}.files[{}]", where, i);
      if (!doc["files"][i].is_string()) return Invalid(fw, "must be a file name");
      auto objs = ReadManifests(doc["files"][i].get<std::string>(), base_dir, fw);
      if (!objs.ok()) return objs.error();
      for (size_t j = 0; j < objs->size(); ++j) {
        if (auto r = CheckObject((*objs)[j], fmt::format("{}[{}]", fw, j)); !r.ok()) return r;
      }
      s->cluster.files.push_back(doc["files"][i].get<std::string>());
      for (Json& o : *objs) s->cluster_objects.push_back(std::move(o));
    }
  }
  return {};
}

}  // namespace

const char* StepKindName(StepKind kind) {
  switch (kind) {
    case StepKind::kApply:
      return "apply";
    case StepKind::kCreate:
      return "create";
    case StepKind::kDelete:
      return "delete";
    case StepKind::kScale:
      return "scale";
    case StepKind::kStopNode:
      return "stopNode";
    case StepKind::kStartNode:
      return "startNode";
    case StepKind::kWait:
      return "wait";
    case StepKind::kCheckpoint:
      return "checkpoint";
  }
  return "?";
}

const char* WaitForName(WaitFor w) {
  switch (w) {
    case WaitFor::kPodsScheduled:
      return "PodsScheduled";
    case WaitFor::kPodsRunning:
      return "PodsRunning";
    case WaitFor::kNodeReady:
      return "NodeReady";
    case WaitFor::kNodeNotReady:
      return "NodeNotReady";
  }
  return "?";
}

Result<Scenario> ParseScenario(std::string_view text, const std::string& base_dir,
                               std::string_view source) {
  auto docs = ParseDocuments(text, source);
  if (!docs.ok()) return docs.error();
  if (docs->size() != 1 || !(*docs)[0].is_object())
    return Error{fmt::format("{}: must hold one Scenario document", source), ErrorCode::kInvalid};
  const Json& doc = (*docs)[0];
  if (auto r = OnlyKnown(doc, "scenario", {"apiVersion", "kind", "metadata", "spec"}); !r.ok())
    return r.error();
  if (doc.value("apiVersion", "") != kApiVersion)
    return Invalid("apiVersion", fmt::format("must be {}", kApiVersion));
  if (doc.value("kind", "") != kKind) return Invalid("kind", fmt::format("must be {}", kKind));
  Scenario s;
  if (doc.contains("metadata") && doc["metadata"].is_object())
    s.name = doc["metadata"].value("name", "");
  if (s.name.empty()) return Invalid("metadata.name", "required");
  if (!doc.contains("spec") || !doc["spec"].is_object()) return Invalid("spec", "required");
  const Json& spec = doc["spec"];
  if (auto r = OnlyKnown(spec, "spec", {"cluster", "resolution", "steps"}); !r.ok())
    return r.error();
  if (spec.contains("resolution")) {
    auto text = String(spec, "resolution", "spec", true);
    if (!text.ok()) return text.error();
    auto d = ParseDuration(*text, "spec.resolution");
    if (!d.ok()) return d.error();
    if (*d < Duration::zero()) return Invalid("spec.resolution", "must be >= 0s");
    s.resolution = *d;
  }
  if (spec.contains("cluster")) {
    if (auto r = ReadCluster(spec["cluster"], base_dir, &s); !r.ok()) return r.error();
  }
  if (!spec.contains("steps") || !spec["steps"].is_array())
    return Invalid("spec.steps", "required (a list)");
  std::optional<Duration> last_at;
  for (size_t i = 0; i < spec["steps"].size(); ++i) {
    auto step = ReadStep(spec["steps"][i], fmt::format("steps[{}]", i), base_dir);
    if (!step.ok()) return step.error();
    if (step->at && last_at && *step->at < *last_at) {
      return Invalid(step->where + ".at",
                     fmt::format("{} is before the step before it ({})", FormatDuration(*step->at),
                                 FormatDuration(*last_at)));
    }
    if (step->at) last_at = step->at;
    s.steps.push_back(std::move(step).value());
  }
  return s;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error{fmt::format("cannot read {}", path), ErrorCode::kNotFound};
  std::stringstream text;
  text << in.rdbuf();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  auto s = ParseScenario(text.str(), dir, path);
  if (!s.ok()) return Error{fmt::format("{}: {}", path, s.error().message), s.error().code};
  return s;
}

}  // namespace berth::scenario
