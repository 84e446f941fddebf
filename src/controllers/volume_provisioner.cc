#include "controllers/volume_provisioner.h"

#include <fmt/format.h>

#include <algorithm>

#include "controllers/events.h"

namespace berth::controllers {
namespace {

constexpr std::string_view kVolumePrefix = "pv:";
constexpr std::string_view kClaimPrefix = "pvc:";
constexpr std::string_view kHostnameLabel = "kubernetes.io/hostname";
constexpr const char* kTopologyLabels[] = {"topology.kubernetes.io/zone",
                                           "topology.kubernetes.io/region"};

// The node affinity term pinning the volume to `node`: its hostname, or with
// allowedTopologies, its values of the keys the class's terms name.
Result<Json> AffinityTerm(const Json& sc, const Json& node) {
  const Labels labels = LabelsOf(node);
  Json expressions = Json::array();
  std::vector<std::string> keys;
  const Json& allowed = Member(sc, "allowedTopologies");
  if (allowed.is_array()) {
    for (const Json& term : allowed) {
      const Json& exprs = Member(term, "matchLabelExpressions");
      if (!exprs.is_array()) continue;
      for (const Json& e : exprs) {
        const std::string key = StringAt(e, "key");
        if (!key.empty() && std::find(keys.begin(), keys.end(), key) == keys.end())
          keys.push_back(key);
      }
    }
  }
  if (keys.empty()) keys.push_back(std::string(kHostnameLabel));
  for (const std::string& key : keys) {
    auto it = labels.find(key);
    std::string value = it != labels.end() ? it->second : std::string();
    if (value.empty() && key == kHostnameLabel) value = NameOf(node);
    if (value.empty()) {
      return Error{fmt::format("node \"{}\" has no label \"{}\" that the class's "
                               "allowedTopologies name",
                               NameOf(node), key),
                   ErrorCode::kInvalid};
    }
    expressions.push_back({{"key", key}, {"operator", "In"}, {"values", {value}}});
  }
  return Json{{"matchExpressions", std::move(expressions)}};
}

}  // namespace

Result<Json> ProvisionedVolume(const Json& pvc, const Json& sc, const Json* node) {
  const std::string name = "pvc-" + UidOf(pvc);
  const Json& claim_spec = Member(pvc, "spec");
  // A selector asks for existing volumes with those labels, which a new one cannot promise.
  if (!Member(claim_spec, "selector").is_null()) {
    return Error{"claim Selector is not supported", ErrorCode::kInvalid};
  }
  std::string policy = StringAt(sc, "reclaimPolicy");
  if (policy.empty()) policy = "Delete";
  Json spec = {{"capacity", {{"storage", ClaimRequest(pvc).String()}}},
               {"accessModes", Member(claim_spec, "accessModes").is_array()
                                   ? Member(claim_spec, "accessModes")
                                   : Json::array({"ReadWriteOnce"})},
               {"persistentVolumeReclaimPolicy", policy},
               {"storageClassName", NameOf(sc)},
               {"volumeMode", StringAt(claim_spec, "volumeMode").empty()
                                  ? std::string("Filesystem")
                                  : StringAt(claim_spec, "volumeMode")},
               {"hostPath",
                {{"path", fmt::format("/var/lib/berth/volumes/{}_{}_{}", name, NamespaceOf(pvc),
                                      NameOf(pvc))},
                 {"type", "DirectoryOrCreate"}}},
               {"claimRef",
                {{"kind", "PersistentVolumeClaim"},
                 {"apiVersion", "v1"},
                 {"namespace", NamespaceOf(pvc)},
                 {"name", NameOf(pvc)},
                 {"uid", UidOf(pvc)},
                 {"resourceVersion", StringAt(Member(pvc, "metadata"), "resourceVersion")}}}};
  if (const Json& mount = Member(sc, "mountOptions"); mount.is_array())
    spec["mountOptions"] = mount;
  Json metadata = {
      {"name", name},
      {"annotations", {{std::string(kAnnProvisionedBy), std::string(kBerthProvisioner)}}}};
  if (node) {
    auto term = AffinityTerm(sc, *node);
    if (!term.ok()) return term.error();
    spec["nodeAffinity"] = {{"required", {{"nodeSelectorTerms", {std::move(*term)}}}}};
    const Labels labels = LabelsOf(*node);
    for (const char* key : kTopologyLabels) {
      if (auto it = labels.find(key); it != labels.end()) metadata["labels"][key] = it->second;
    }
  }
  return Json{{"apiVersion", "v1"},
              {"kind", "PersistentVolume"},
              {"metadata", std::move(metadata)},
              {"spec", std::move(spec)}};
}

VolumeProvisioner::VolumeProvisioner(client::RestClient* rest, SharedInformer* volumes,
                                     SharedInformer* claims, SharedInformer* classes,
                                     SharedInformer* nodes, ControllerOptions options)
    : rest_(rest),
      volumes_(volumes),
      claims_(claims),
      classes_(classes),
      nodes_(nodes),
      options_(std::move(options)),
      queue_(options_.clock),
      workers_(
          &queue_, [this](const std::string& key) { return Sync(key); }, options_.log) {
  auto claim_key = [](const Object& o) { return std::string(kClaimPrefix) + KeyOf(DocOf(o)); };
  auto volume_key = [](const Object& o) { return std::string(kVolumePrefix) + NameOf(DocOf(o)); };
  client::InformerHandlers claim_handlers;
  claim_handlers.on_add = [this, claim_key](const Object& o) { queue_.Add(claim_key(o)); };
  claim_handlers.on_update = [this, claim_key](const Object&, const Object& o) {
    queue_.Add(claim_key(o));
  };
  claims_->AddHandlers(std::move(claim_handlers));
  client::InformerHandlers volume_handlers;
  volume_handlers.on_add = [this, volume_key](const Object& o) { queue_.Add(volume_key(o)); };
  volume_handlers.on_update = [this, volume_key](const Object&, const Object& o) {
    queue_.Add(volume_key(o));
  };
  volumes_->AddHandlers(std::move(volume_handlers));
}

VolumeProvisioner::~VolumeProvisioner() { Stop(); }

void VolumeProvisioner::Start() { workers_.Start(options_.workers); }

void VolumeProvisioner::Stop() { workers_.Stop(); }

VoidResult VolumeProvisioner::Sync(const std::string& key) {
  if (key.starts_with(kClaimPrefix)) {
    auto pvc = claims_->Get(key.substr(kClaimPrefix.size()));
    return pvc ? SyncClaim(DocOf(*pvc)) : VoidResult{};
  }
  if (key.starts_with(kVolumePrefix)) {
    auto pv = volumes_->Get(key.substr(kVolumePrefix.size()));
    return pv ? SyncVolume(DocOf(*pv)) : VoidResult{};
  }
  return {};
}

VoidResult VolumeProvisioner::SyncClaim(const Json& pvc) {
  if (HasDeletionTimestamp(pvc) || !StringAt(Member(pvc, "spec"), "volumeName").empty()) return {};
  if (AnnotationOf(pvc, kAnnStorageProvisioner) != kBerthProvisioner) return {};
  auto storage_class = classes_->Get(ClaimClass(pvc));
  if (!storage_class) return {};
  const Json& sc = DocOf(*storage_class);
  if (StringAt(sc, "provisioner") != kBerthProvisioner) return {};
  const std::string volume_name = "pvc-" + UidOf(pvc);
  if (volumes_->Get(volume_name)) return {};  // provisioned already
  std::optional<Object> node;
  const std::string selected = AnnotationOf(pvc, kAnnSelectedNode);
  if (!selected.empty()) {
    node = nodes_->Get(selected);
    if (!node) {
      return Error{fmt::format("claim {}: selected node \"{}\" not found", KeyOf(pvc), selected),
                   ErrorCode::kNotFound};
    }
  } else if (IsDelayedBinding(&sc)) {
    return {};  // waits for the scheduler
  }
  const EventSource events{rest_, options_.clock, std::string(kBerthProvisioner), options_.log};
  auto event = [&](std::string_view type, std::string_view reason, const std::string& message) {
    RecordEvent(events, pvc, "v1", "PersistentVolumeClaim", type, reason, message);
  };
  auto pv = ProvisionedVolume(pvc, sc, node ? &DocOf(*node) : nullptr);
  if (pv.ok()) {
    auto created = rest_->Post("/api/v1/persistentvolumes", *pv);
    // A volume that exists already was made by an earlier sync the cache did not show yet:
    // its events were recorded then.
    if (!created.ok() && created.error().code == ErrorCode::kAlreadyExists) return {};
    if (created.ok()) {
      event(
          "Normal", "Provisioning",
          fmt::format("External provisioner is provisioning volume for claim \"{}\"", KeyOf(pvc)));
      event("Normal", "ProvisioningSucceeded", "Successfully provisioned volume " + volume_name);
      return {};
    }
    pv = created.error();
  }
  event("Warning", "ProvisioningFailed",
        fmt::format("failed to provision volume with StorageClass \"{}\": {}", NameOf(sc),
                    pv.error().message));
  return pv.error();
}

VoidResult VolumeProvisioner::SyncVolume(const Json& pv) {
  if (AnnotationOf(pv, kAnnProvisionedBy) != kBerthProvisioner) return {};
  if (StringAt(Member(pv, "status"), "phase") != "Released") return {};
  if (StringAt(Member(pv, "spec"), "persistentVolumeReclaimPolicy") != "Delete") return {};
  if (HasDeletionTimestamp(pv)) return {};
  auto r = rest_->Delete(fmt::format("/api/v1/persistentvolumes/{}", NameOf(pv)));
  if (!r.ok() && r.error().code != ErrorCode::kNotFound) return r.error();
  return {};
}

}  // namespace berth::controllers
