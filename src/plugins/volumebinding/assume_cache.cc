#include "plugins/volumebinding/assume_cache.h"

#include <utility>

namespace berth::volumebinding {
namespace {

constexpr std::string_view kBetaClassAnnotation = "volume.beta.kubernetes.io/storage-class";

std::string ClaimKey(std::string_view ns, std::string_view name) {
  std::string key;
  key.reserve(ns.size() + 1 + name.size());
  key.append(ns).append("/").append(name);
  return key;
}

}  // namespace

std::string_view PersistentVolumeClass(const PersistentVolume& pv) {
  auto it = pv.metadata.annotations.find(kBetaClassAnnotation);
  if (it != pv.metadata.annotations.end()) return it->second;
  return pv.spec.storage_class_name;
}

std::string_view ClaimClass(const PersistentVolumeClaim& pvc) {
  auto it = pvc.metadata.annotations.find(kBetaClassAnnotation);
  if (it != pvc.metadata.annotations.end()) return it->second;
  if (pvc.spec.storage_class_name) return *pvc.spec.storage_class_name;
  return {};
}

template <class T>
Ptr<T> AssumeCache::Resolve(Map<T>& map, std::string_view key, Ptr<T> api) {
  auto it = map.find(key);
  if (it == map.end()) return api;
  if (api && it->second.base == api) return it->second.assumed;
  map.erase(it);
  return api;
}

Ptr<PersistentVolume> AssumeCache::GetPV(std::string_view name) const {
  Ptr<PersistentVolume> api = client_->GetPV(name);
  std::lock_guard lock(mu_);
  return Resolve(pvs_, name, std::move(api));
}

Ptr<PersistentVolumeClaim> AssumeCache::GetPVC(std::string_view ns, std::string_view name) const {
  Ptr<PersistentVolumeClaim> api = client_->GetPVC(ns, name);
  std::lock_guard lock(mu_);
  return Resolve(pvcs_, ClaimKey(ns, name), std::move(api));
}

std::vector<Ptr<PersistentVolume>> AssumeCache::ListPVs(std::string_view class_name) const {
  std::vector<Ptr<PersistentVolume>> out;
  std::vector<Ptr<PersistentVolume>> all = client_->ListPVs();
  std::lock_guard lock(mu_);
  for (auto& api : all) {
    if (PersistentVolumeClass(*api) != class_name) continue;
    if (pvs_.empty()) {
      out.push_back(std::move(api));
      continue;
    }
    // The object outlives the call: `api` moves into Resolve's parameter.
    const std::string& name = api->metadata.name;
    out.push_back(Resolve(pvs_, name, std::move(api)));
  }
  return out;
}

VoidResult AssumeCache::AssumePV(Ptr<PersistentVolume> pv) {
  const std::string& name = pv->metadata.name;
  Ptr<PersistentVolume> api = client_->GetPV(name);
  if (!api) return Error{"persistentvolume \"" + name + "\" not found"};
  std::lock_guard lock(mu_);
  pvs_[name] = Entry<PersistentVolume>{std::move(api), std::move(pv)};
  return {};
}

VoidResult AssumeCache::AssumePVC(Ptr<PersistentVolumeClaim> pvc) {
  const auto& meta = pvc->metadata;
  Ptr<PersistentVolumeClaim> api = client_->GetPVC(meta.namespace_, meta.name);
  if (!api) return Error{"persistentvolumeclaim \"" + meta.name + "\" not found"};
  std::string key = ClaimKey(meta.namespace_, meta.name);
  std::lock_guard lock(mu_);
  pvcs_[key] = Entry<PersistentVolumeClaim>{std::move(api), std::move(pvc)};
  return {};
}

void AssumeCache::RestorePV(std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = pvs_.find(name); it != pvs_.end()) pvs_.erase(it);
}

void AssumeCache::RestorePVC(std::string_view ns, std::string_view name) {
  std::lock_guard lock(mu_);
  if (auto it = pvcs_.find(ClaimKey(ns, name)); it != pvcs_.end()) pvcs_.erase(it);
}

}  // namespace berth::volumebinding
