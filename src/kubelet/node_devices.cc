#include "kubelet/node_devices.h"

#include <fmt/format.h>

#include <algorithm>

#include "api/codec.h"
#include "api/read_file.h"
#include "berth/api/quantity.h"

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;

uint64_t Fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

Error Invalid(std::string_view source, const std::string& path, const std::string& what) {
  return Error{fmt::format("{}: {}: {}", source, path, what), ErrorCode::kInvalid};
}

// A quantity given bare (80Gi, 4) as the API's string form; an error when it is not one.
Result<std::string> QuantityText(const Json& v, std::string_view source, const std::string& path) {
  std::string text;
  if (v.is_string()) {
    text = v.get<std::string>();
  } else if (v.is_number_integer()) {
    text = std::to_string(v.get<int64_t>());
  } else if (v.is_number_float()) {
    text = v.dump();
  } else {
    return Invalid(source, path, "a quantity (e.g. 80Gi or 4) is required");
  }
  if (!Quantity::Parse(text).ok()) return Invalid(source, path, "not a quantity: " + text);
  return text;
}

// {name: 80Gi} or {name: {value: 80Gi, ...}} -> {name: {value: "80Gi", ...}}.
Result<Json> Quantities(const Json& in, std::string_view source, const std::string& path) {
  if (!in.is_object()) return Invalid(source, path, "a map of names to quantities is required");
  Json out = Json::object();
  for (auto it = in.begin(); it != in.end(); ++it) {
    const std::string at = path + "." + it.key();
    Json entry = it->is_object() ? *it : Json{{"value", *it}};
    auto q = QuantityText(entry.contains("value") ? entry["value"] : Json(), source, at);
    if (!q.ok()) return q.error();
    entry["value"] = *q;
    out[it.key()] = std::move(entry);
  }
  return out;
}

Result<Json> Attributes(const Json& in, std::string_view source, const std::string& path) {
  if (!in.is_object()) return Invalid(source, path, "a map of attribute names is required");
  Json out = Json::object();
  for (auto it = in.begin(); it != in.end(); ++it) {
    const Json& v = *it;
    if (v.is_boolean()) {
      out[it.key()] = {{"bool", v}};
    } else if (v.is_number_integer()) {
      out[it.key()] = {{"int", v}};
    } else if (v.is_string()) {
      out[it.key()] = {{"string", v}};
    } else if (v.is_object() && v.size() == 1 &&
               (v.contains("bool") || v.contains("int") || v.contains("string") ||
                v.contains("version"))) {
      out[it.key()] = v;
    } else {
      return Invalid(source, path + "." + it.key(),
                     "a bool, int or string, or one of {bool|int|string|version: value}");
    }
  }
  return out;
}

Result<Json> CounterConsumption(const Json& in, std::string_view source, const std::string& path) {
  if (!in.is_array()) return Invalid(source, path, "a list is required");
  Json out = Json::array();
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string at = fmt::format("{}[{}]", path, i);
    Json entry = in[i];
    if (!entry.is_object()) return Invalid(source, at, "a map is required");
    auto counters = Quantities(entry.value("counters", Json()), source, at + ".counters");
    if (!counters.ok()) return counters.error();
    entry["counters"] = *counters;
    out.push_back(std::move(entry));
  }
  return out;
}

// "{i}" in every string of `v` becomes `index`.
void Substitute(Json& v, const std::string& index) {
  if (v.is_string()) {
    std::string s = v.get<std::string>();
    for (size_t at = s.find("{i}"); at != std::string::npos; at = s.find("{i}", at + index.size()))
      s.replace(at, 3, index);
    v = s;
  } else if (v.is_structured()) {
    for (auto& child : v) Substitute(child, index);
  }
}

Result<Json> Device(const Json& in, std::string_view source, const std::string& path) {
  Json d = in;
  if (d.contains("attributes")) {
    auto a = Attributes(d["attributes"], source, path + ".attributes");
    if (!a.ok()) return a.error();
    d["attributes"] = *a;
  }
  if (d.contains("capacity")) {
    auto c = Quantities(d["capacity"], source, path + ".capacity");
    if (!c.ok()) return c.error();
    d["capacity"] = *c;
  }
  if (d.contains("consumesCounters")) {
    auto c = CounterConsumption(d["consumesCounters"], source, path + ".consumesCounters");
    if (!c.ok()) return c.error();
    d["consumesCounters"] = *c;
  }
  return d;
}

Result<Json> Devices(const Json& in, std::string_view source) {
  if (!in.is_array()) return Invalid(source, "devices", "a list is required");
  Json out = Json::array();
  for (size_t i = 0; i < in.size(); ++i) {
    const std::string path = fmt::format("devices[{}]", i);
    if (!in[i].is_object()) return Invalid(source, path, "a map is required");
    Json spec = in[i];
    if (!spec.contains("count")) {
      if (!spec.value("name", Json()).is_string())
        return Invalid(source, path + ".name", "required");
      auto d = Device(spec, source, path);
      if (!d.ok()) return d.error();
      out.push_back(std::move(*d));
      continue;
    }
    if (!spec["count"].is_number_integer() || spec["count"].get<int64_t>() < 0 ||
        spec["count"].get<int64_t>() > 128) {
      return Invalid(source, path + ".count", "a number from 0 to 128 is required");
    }
    const int64_t count = spec["count"].get<int64_t>();
    spec.erase("count");
    std::string name = spec.value("name", std::string("gpu"));
    if (name.find("{i}") == std::string::npos) name += "-{i}";
    spec["name"] = name;
    for (int64_t n = 0; n < count; ++n) {
      Json one = spec;
      Substitute(one, std::to_string(n));
      if (!one["attributes"].is_object()) one["attributes"] = Json::object();
      if (!one["attributes"].contains("index")) one["attributes"]["index"] = n;
      auto d = Device(one, source, path);
      if (!d.ok()) return d.error();
      out.push_back(std::move(*d));
    }
  }
  // One slice holds the devices: the API's limits for one slice apply.
  const bool limited = std::any_of(out.begin(), out.end(), [](const Json& d) {
    return d.contains("taints") || d.contains("consumesCounters");
  });
  const size_t limit = limited ? 64 : 128;
  if (out.size() > limit) {
    return Invalid(source, "devices",
                   fmt::format("{} devices, more than the {} of one ResourceSlice{}", out.size(),
                               limit, limited ? " with taints or counters" : ""));
  }
  return out;
}

Result<DriverDevices> Driver(const Json& doc, std::string_view source) {
  if (!doc.is_object()) return Invalid(source, "document", "a map is required");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    static const char* kKnown[] = {"driver", "nodeSelector", "sharedCounters", "devices"};
    if (std::none_of(std::begin(kKnown), std::end(kKnown),
                     [&](const char* k) { return it.key() == k; }))
      return Invalid(source, it.key(), "unknown field");
  }
  DriverDevices d;
  d.driver = doc.value("driver", std::string());
  if (d.driver.empty()) return Invalid(source, "driver", "required");
  if (doc.contains("nodeSelector")) {
    auto s = DecodeLabelSelector(doc["nodeSelector"], "nodeSelector");
    if (!s.ok()) return Invalid(source, "nodeSelector", s.error().message);
    auto compiled = CompiledSelector::Compile(*s);
    if (!compiled.ok()) return Invalid(source, "nodeSelector", compiled.error().message);
    d.node_selector = *compiled;
  }
  if (doc.contains("sharedCounters")) {
    const Json& sets = doc["sharedCounters"];
    if (!sets.is_array()) return Invalid(source, "sharedCounters", "a list is required");
    d.shared_counters = Json::array();
    for (size_t i = 0; i < sets.size(); ++i) {
      const std::string path = fmt::format("sharedCounters[{}]", i);
      if (!sets[i].is_object() || !sets[i].value("name", Json()).is_string())
        return Invalid(source, path + ".name", "required");
      Json set = sets[i];
      auto counters = Quantities(set.value("counters", Json()), source, path + ".counters");
      if (!counters.ok()) return counters.error();
      set["counters"] = *counters;
      d.shared_counters.push_back(std::move(set));
    }
  }
  auto devices = Devices(doc.value("devices", Json::array()), source);
  if (!devices.ok()) return devices.error();
  d.devices = std::move(*devices);
  const Json described = {
      {"driver", d.driver}, {"sharedCounters", d.shared_counters}, {"devices", d.devices}};
  d.digest = fmt::format("{:016x}", Fnv1a(described.dump()));
  return d;
}

// One slice of the node's pool for driver `d`.
Json Slice(const DriverDevices& d, const std::string& name, const std::string& node,
           const std::string& node_uid, Json spec) {
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceSlice"},
          {"metadata",
           {{"name", name},
            {"labels", {{kSimulatedSliceLabel, "true"}}},
            {"annotations", {{kSliceDigestAnnotation, d.digest}}},
            {"ownerReferences",
             {{{"apiVersion", "v1"},
               {"kind", "Node"},
               {"name", node},
               {"uid", node_uid},
               {"controller", true}}}}}},
          {"spec", std::move(spec)}};
}

}  // namespace

Result<std::vector<DriverDevices>> ParseNodeDevices(std::string_view text,
                                                    std::string_view source) {
  auto docs = ParseDocuments(text, source);
  if (!docs.ok()) return docs.error();
  std::vector<DriverDevices> out;
  for (const Json& doc : *docs) {
    auto d = Driver(doc, source);
    if (!d.ok()) return d.error();
    for (const DriverDevices& other : out)
      if (other.driver == d->driver)
        return Invalid(source, "driver", "\"" + d->driver + "\" is described twice");
    out.push_back(std::move(*d));
  }
  return out;
}

Result<std::vector<DriverDevices>> LoadNodeDevices(const std::string& path) {
  auto text = ReadFileText(path, kMaxConfigBytes);
  if (!text.ok()) return text.error();
  return ParseNodeDevices(*text, path);
}

bool Offers(const DriverDevices& d, const Node& node) {
  return !d.node_selector || d.node_selector->Matches(node.metadata.labels);
}

std::string ResourceSliceName(const std::string& node, const std::string& driver, bool counters) {
  // The characters of the server's generated names.
  static constexpr std::string_view kAlphabet = "bcdfghjklmnpqrstvwxz2456789";
  std::string dashed = driver;
  std::replace(dashed.begin(), dashed.end(), '.', '-');
  std::replace(dashed.begin(), dashed.end(), '/', '-');
  uint64_t h = Fnv1a(node + "/" + driver + (counters ? "/counters" : ""));
  std::string suffix;
  for (int i = 0; i < 5; ++i) {
    suffix += kAlphabet[h % kAlphabet.size()];
    h /= kAlphabet.size();
  }
  return fmt::format("{}-{}-{}{}", node, dashed, counters ? "counters-" : "", suffix);
}

std::vector<Json> ResourceSlicesFor(const DriverDevices& d, const std::string& node,
                                    const std::string& node_uid, int64_t generation) {
  const bool counters = d.shared_counters.is_array() && !d.shared_counters.empty();
  const Json pool = {
      {"name", node}, {"generation", generation}, {"resourceSliceCount", counters ? 2 : 1}};
  std::vector<Json> out;
  out.push_back(
      Slice(d, ResourceSliceName(node, d.driver), node, node_uid,
            {{"driver", d.driver}, {"nodeName", node}, {"pool", pool}, {"devices", d.devices}}));
  if (counters) {
    out.push_back(Slice(d, ResourceSliceName(node, d.driver, true), node, node_uid,
                        {{"driver", d.driver},
                         {"nodeName", node},
                         {"pool", pool},
                         {"sharedCounters", d.shared_counters}}));
  }
  return out;
}

}  // namespace berth::kubelet
