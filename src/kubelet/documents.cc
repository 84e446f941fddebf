#include "kubelet/documents.h"

#include <initializer_list>
#include <nlohmann/json.hpp>

#include "kubelet/json_fields.h"

namespace berth::kubelet {
namespace {

using Json = nlohmann::json;

// `out[section][field]` = `doc[section][field]` for each field present.
void Copy(const Json& doc, const char* section, std::initializer_list<const char*> fields,
          Json& out) {
  const Json& from = Member(doc, section);
  for (const char* field : fields) {
    if (const Json& v = Member(from, field); !v.is_null()) out[section][field] = v;
  }
}

}  // namespace

RawObject KubeletNodeDocument(const Json& node) {
  Json out = Json::object();
  Copy(node, "spec", {"podCIDR"}, out);
  Copy(node, "status", {"addresses", "capacity", "allocatable", "images", "declaredFeatures"}, out);
  const Json& status = Member(node, "status");
  for (const Json& c : Member(status, "conditions")) {
    if (StringMember(c, "type") == "Ready") out["status"]["conditions"] = Json::array({c});
  }
  if (const Json& version = Member(Member(status, "nodeInfo"), "kubeletVersion");
      !version.is_null()) {
    out["status"]["nodeInfo"]["kubeletVersion"] = version;
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
