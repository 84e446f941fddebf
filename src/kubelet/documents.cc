#include "kubelet/documents.h"

#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;

const Json* Find(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

// `out[section][field]` = `doc[section][field]` for each field present.
void Copy(const Json& doc, const char* section, std::initializer_list<const char*> fields,
          Json& out) {
  const Json* from = Find(doc, section);
  if (from == nullptr) return;
  for (const char* field : fields) {
    if (const Json* v = Find(*from, field)) out[section][field] = *v;
  }
}

}  // namespace

RawObject KubeletNodeDocument(const Json& node) {
  Json out = Json::object();
  Copy(node, "spec", {"podCIDR"}, out);
  Copy(node, "status", {"addresses", "capacity", "allocatable", "images", "declaredFeatures"}, out);
  if (const Json* status = Find(node, "status")) {
    if (const Json* conditions = Find(*status, "conditions");
        conditions && conditions->is_array()) {
      for (const Json& c : *conditions) {
        const Json* type = Find(c, "type");
        if (type && type->is_string() && *type == "Ready")
          out["status"]["conditions"] = Json::array({c});
      }
    }
    if (const Json* info = Find(*status, "nodeInfo")) {
      if (const Json* version = Find(*info, "kubeletVersion"))
        out["status"]["nodeInfo"]["kubeletVersion"] = *version;
    }
  }
  return std::make_shared<const Json>(std::move(out));
}

RawObject KubeletPodDocument(const Json& pod) {
  Json out = Json::object();
  Copy(pod, "spec", {"restartPolicy", "resourceClaims"}, out);
  Copy(pod, "status",
       {"podIP", "hostIP", "containerStatuses", "resourceClaimStatuses",
        "extendedResourceClaimStatus"},
       out);
  return std::make_shared<const Json>(std::move(out));
}

}  // namespace berth::kubelet
