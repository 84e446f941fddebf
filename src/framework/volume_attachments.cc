#include "framework/volume_attachments.h"

namespace berth {
namespace {

// The string at `key` of object `o`, or "" when absent or not a string.
std::string StringAt(const nlohmann::json& o, std::string_view key) {
  if (!o.is_object()) return "";
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : "";
}

const nlohmann::json& ObjectAt(const nlohmann::json& o, std::string_view key) {
  static const nlohmann::json kNone = nlohmann::json::object();
  if (!o.is_object()) return kNone;
  auto it = o.find(key);
  return it != o.end() && it->is_object() ? *it : kNone;
}

}  // namespace

VolumeAttachmentInfo VolumeAttachmentInfoOf(const nlohmann::json& doc) {
  VolumeAttachmentInfo info;
  info.name = StringAt(ObjectAt(doc, "metadata"), "name");
  const nlohmann::json& spec = ObjectAt(doc, "spec");
  info.attacher = StringAt(spec, "attacher");
  info.node_name = StringAt(spec, "nodeName");
  info.persistent_volume_name = StringAt(ObjectAt(spec, "source"), "persistentVolumeName");
  return info;
}

std::vector<VolumeAttachmentInfo> FindVolumeAttachments(const ClusterListers& listers,
                                                        std::string_view node_name) {
  const auto* lister = dynamic_cast<const VolumeAttachmentLister*>(&listers);
  if (lister == nullptr) return {};
  return lister->VolumeAttachmentsOn(node_name);
}

VolumeAttachmentEventHandler* VolumeAttachmentEventsOf(ClusterEventHandler* handler) {
  return dynamic_cast<VolumeAttachmentEventHandler*>(handler);
}

}  // namespace berth
