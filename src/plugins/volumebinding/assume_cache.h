// AssumeCache: PersistentVolumes and PersistentVolumeClaims as the scheduler has decided them,
// ahead of the API.
//
// Reserve assumes a PV pre-bound to its claim (claimRef set) or a claim marked for provisioning
// on a node (selected-node annotation); later pods of the same run then see those versions, so a
// PV is not handed out twice while the binding is in flight. An assumed version is derived from
// the API object current at that time and stays in force until that API object changes (any
// update replaces the immutable object, which the cache notices by identity) or the assumption
// is restored (Unreserve, failed PreBind). Reads fall through to the ClusterListers otherwise.
// Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "berth/framework/cluster.h"

namespace berth::volumebinding {

class AssumeCache {
 public:
  explicit AssumeCache(const ClusterListers& client) : client_(&client) {}

  Ptr<PersistentVolume> GetPV(std::string_view name) const;
  Ptr<PersistentVolumeClaim> GetPVC(std::string_view ns, std::string_view name) const;
  // PVs whose class (PersistentVolumeClass) is `class_name`, in the client's order.
  std::vector<Ptr<PersistentVolume>> ListPVs(std::string_view class_name) const;

  // Records `pv` as the current version of the PV of that name. Fails if the PV does not exist.
  VoidResult AssumePV(Ptr<PersistentVolume> pv);
  VoidResult AssumePVC(Ptr<PersistentVolumeClaim> pvc);
  // Drops an assumption (no-op when there is none).
  void RestorePV(std::string_view name);
  void RestorePVC(std::string_view ns, std::string_view name);

 private:
  template <class T>
  struct Entry {
    Ptr<T> base;     // the API object the assumption was made against
    Ptr<T> assumed;  // what the scheduler decided
  };
  template <class T>
  using Map = std::map<std::string, Entry<T>, std::less<>>;

  // The assumed version if its base is still the API object `api`; otherwise `api`, and a stale
  // entry is dropped.
  template <class T>
  static Ptr<T> Resolve(Map<T>& map, std::string_view key, Ptr<T> api);

  const ClusterListers* client_;
  mutable std::mutex mu_;
  mutable Map<PersistentVolume> pvs_;
  mutable Map<PersistentVolumeClaim> pvcs_;
};

// The class of a PV or claim as the storage helpers define it: the beta annotation
// "volume.beta.kubernetes.io/storage-class" wins over spec.storageClassName. The view refers to
// the object.
std::string_view PersistentVolumeClass(const PersistentVolume& pv);
std::string_view ClaimClass(const PersistentVolumeClaim& pvc);

}  // namespace berth::volumebinding
