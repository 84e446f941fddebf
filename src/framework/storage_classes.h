// Listing every StorageClass, for the notes VolumeBinding gives `berth explain` about a claim
// that names a class that does not exist ("there are fast, standard").
//
// Internal to Berth, not part of the plugin SDK (ClusterListers keeps its layout): the
// in-memory cluster implements StorageClassLister beside ClusterListers, found with a
// dynamic_cast. Listers without it cannot list classes.
#pragma once

#include <optional>
#include <vector>

#include "berth/framework/cluster.h"

namespace berth {

class StorageClassLister {
 public:
  virtual ~StorageClassLister() = default;
  virtual std::vector<Ptr<StorageClass>> ListStorageClasses() const = 0;
};

// `listers`' StorageClasses; nullopt when `listers` cannot list them.
inline std::optional<std::vector<Ptr<StorageClass>>> ListStorageClasses(
    const ClusterListers& listers) {
  const auto* classes = dynamic_cast<const StorageClassLister*>(&listers);
  if (classes == nullptr) return std::nullopt;
  return classes->ListStorageClasses();
}

}  // namespace berth
