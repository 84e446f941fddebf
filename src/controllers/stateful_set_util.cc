#include "controllers/stateful_set_util.h"

#include <fmt/format.h>

#include <charconv>

#include "controllers/controller_revision.h"

namespace berth::controllers {

std::optional<int64_t> OrdinalOf(const std::string& set_name, const std::string& pod_name) {
  if (pod_name.size() <= set_name.size() + 1 || pod_name.compare(0, set_name.size(), set_name) ||
      pod_name[set_name.size()] != '-') {
    return std::nullopt;
  }
  const char* first = pod_name.data() + set_name.size() + 1;
  const char* last = pod_name.data() + pod_name.size();
  if (*first == '0' && last - first > 1) return std::nullopt;  // "01" is not an ordinal
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(first, last, value);
  if (ec != std::errc() || ptr != last || value < 0) return std::nullopt;
  return value;
}

int64_t StartOrdinal(const Json& set) {
  return IntAt(Member(Member(set, "spec"), "ordinals"), "start", 0);
}

std::string ClaimName(const Json& set, const Json& claim_template, int64_t ordinal) {
  return fmt::format("{}-{}-{}", NameOf(claim_template), NameOf(set), ordinal);
}

Json NewClaim(const Json& set, const Json& claim_template, int64_t ordinal) {
  Json claim = claim_template;
  claim["apiVersion"] = "v1";
  claim["kind"] = "PersistentVolumeClaim";
  Json& meta = claim["metadata"];
  if (!meta.is_object()) meta = Json::object();
  meta["name"] = ClaimName(set, claim_template, ordinal);
  meta["namespace"] = NamespaceOf(set);
  for (const char* f : {"uid", "resourceVersion", "creationTimestamp", "generateName"})
    meta.erase(f);
  Json& labels = meta["labels"];
  if (!labels.is_object()) labels = Json::object();
  const Json& match = Member(Member(Member(set, "spec"), "selector"), "matchLabels");
  if (match.is_object()) {
    for (const auto& [k, v] : match.items()) labels[k] = v;
  }
  claim.erase("status");
  const std::string when_deleted =
      StringAt(Member(Member(set, "spec"), "persistentVolumeClaimRetentionPolicy"), "whenDeleted");
  if (when_deleted == "Delete") {
    Json ref = NewControllerRef("apps/v1", "StatefulSet", set);
    ref["controller"] = false;  // the claim is the set's to delete, not to manage
    meta["ownerReferences"] = Json::array({std::move(ref)});
  }
  return claim;
}

Json NewStatefulPod(const Json& set, const Json& pod_template, int64_t ordinal,
                    const std::string& revision_hash) {
  const std::string name = fmt::format("{}-{}", NameOf(set), ordinal);
  const Json& tmeta = Member(pod_template, "metadata");
  Json meta = Json::object();
  meta["name"] = name;
  meta["namespace"] = NamespaceOf(set);
  for (const char* field : {"labels", "annotations", "finalizers"}) {
    const Json& v = Member(tmeta, field);
    if (!v.is_null()) meta[field] = v;
  }
  Json& labels = meta["labels"];
  if (!labels.is_object()) labels = Json::object();
  labels[std::string(kStatefulSetPodNameLabel)] = name;
  labels[std::string(kPodIndexLabel)] = std::to_string(ordinal);
  labels[std::string(kControllerRevisionHashLabel)] = revision_hash;
  meta["ownerReferences"] = Json::array({NewControllerRef("apps/v1", "StatefulSet", set)});
  Json spec = Member(pod_template, "spec");
  if (!spec.is_object()) spec = Json::object();
  spec["hostname"] = name;
  const std::string service = StringAt(Member(set, "spec"), "serviceName");
  if (!service.empty()) spec["subdomain"] = service;
  const Json& templates = Member(Member(set, "spec"), "volumeClaimTemplates");
  if (templates.is_array() && !templates.empty()) {
    Json volumes = Json::array();
    for (const Json& t : templates) {
      volumes.push_back({{"name", NameOf(t)},
                         {"persistentVolumeClaim", {{"claimName", ClaimName(set, t, ordinal)}}}});
    }
    const Json& own = Member(spec, "volumes");
    if (own.is_array()) {
      for (const Json& v : own) {
        bool replaced = false;
        for (const Json& t : templates) replaced = replaced || NameOf(t) == StringAt(v, "name");
        if (!replaced) volumes.push_back(v);
      }
    }
    spec["volumes"] = std::move(volumes);
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", std::move(meta)},
          {"spec", std::move(spec)}};
}

}  // namespace berth::controllers
