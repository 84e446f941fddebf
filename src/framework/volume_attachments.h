// VolumeAttachment objects (storage.k8s.io/v1), as far as the scheduler reads them:
// NodeVolumeLimits counts the volumes attached to a node that no pod there uses, and a deleted
// attachment can make room for the pods it rejected.
//
// Internal to Berth, not part of the plugin SDK (an SDK event kind would change
// EventResource's values and EventObject's type, which libraries are built against):
//   * the cluster clients (InMemoryCluster, ApiClusterClient) implement VolumeAttachmentLister
//     beside ClusterListers, found with a dynamic_cast; listers without it have none;
//   * they report deletions to their event handler when it is a VolumeAttachmentEventHandler
//     (the scheduler);
//   * in-tree plugins implement VolumeAttachmentEnqueueExtensions to say which pods a deletion
//     may help.
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "berth/framework/cluster.h"
#include "berth/framework/cluster_event.h"

namespace berth {

// What the scheduler reads of a VolumeAttachment.
struct VolumeAttachmentInfo {
  std::string name;       // metadata.name
  std::string attacher;   // spec.attacher: the CSI driver
  std::string node_name;  // spec.nodeName
  // spec.source.persistentVolumeName; empty for an inline volume's attachment.
  std::string persistent_volume_name;
};

// The fields above, read from a VolumeAttachment document (fields of other types count as
// absent).
VolumeAttachmentInfo VolumeAttachmentInfoOf(const nlohmann::json& doc);

class VolumeAttachmentLister {
 public:
  virtual ~VolumeAttachmentLister() = default;
  // The VolumeAttachments whose spec.nodeName is `node_name`, in name order.
  virtual std::vector<VolumeAttachmentInfo> VolumeAttachmentsOn(
      std::string_view node_name) const = 0;
};

// `listers`' VolumeAttachments on `node_name`; none when `listers` keeps none.
std::vector<VolumeAttachmentInfo> FindVolumeAttachments(const ClusterListers& listers,
                                                        std::string_view node_name);

// Told of each deleted VolumeAttachment, on the thread that delivers cluster events.
class VolumeAttachmentEventHandler {
 public:
  virtual ~VolumeAttachmentEventHandler() = default;
  virtual void OnVolumeAttachmentDelete(const VolumeAttachmentInfo& deleted) = 0;
};

// `handler` as a VolumeAttachmentEventHandler, or null.
VolumeAttachmentEventHandler* VolumeAttachmentEventsOf(ClusterEventHandler* handler);

// Whether the deletion of `deleted` may make `pod`, which the plugin rejected, schedulable.
// Called as a QueueingHintFn is (fast, non-blocking, reading only its arguments).
using VolumeAttachmentHintFn =
    std::function<QueueingHint(const Pod& pod, const VolumeAttachmentInfo& deleted)>;

// Implemented by plugins whose rejections a VolumeAttachment deletion can undo.
class VolumeAttachmentEnqueueExtensions {
 public:
  virtual ~VolumeAttachmentEnqueueExtensions() = default;
  // Called once, when the profile is built.
  virtual VolumeAttachmentHintFn VolumeAttachmentDeleteHint() const = 0;
};

}  // namespace berth
