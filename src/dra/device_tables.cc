#include "dra/device_tables.h"

#include <string_view>
#include <unordered_map>

namespace berth::dra {

SelectorResults::SelectorResults(size_t devices, size_t slices)
    : devices_(new std::atomic<int8_t>[devices]), slices_(new std::atomic<int8_t>[slices]) {
  for (size_t i = 0; i < devices; ++i) devices_[i].store(-1, std::memory_order_relaxed);
  for (size_t i = 0; i < slices; ++i) slices_[i].store(-1, std::memory_order_relaxed);
}

const DeviceAttribute* LookupAttribute(const Device& d, const std::string& driver,
                                       const std::string& name) {
  if (auto it = d.attributes.find(name); it != d.attributes.end()) return &it->second;
  const auto slash = name.find('/');
  if (slash == std::string::npos || name.compare(0, slash, driver) != 0) return nullptr;
  auto it = d.attributes.find(std::string_view(name).substr(slash + 1));
  return it == d.attributes.end() ? nullptr : &it->second;
}

namespace {

// A key equal for two attributes exactly when they compare equal (all four fields).
std::string InternKey(const DeviceAttribute& a) {
  std::string key;
  auto add = [&](char tag, bool present, std::string_view v) {
    key += present ? tag : '-';
    key += std::to_string(v.size());
    key += ':';
    key += v;
  };
  add('i', a.int_value.has_value(), a.int_value ? std::to_string(*a.int_value) : "");
  add('b', a.bool_value.has_value(), a.bool_value && *a.bool_value ? "1" : "0");
  add('s', a.string_value.has_value(), a.string_value ? *a.string_value : "");
  add('v', a.version_value.has_value(), a.version_value ? *a.version_value : "");
  return key;
}

}  // namespace

AttributeTable BuildAttributeTable(const std::string& name,
                                   const std::vector<const ResourceSlice*>& slices,
                                   const std::vector<uint32_t>& device_base, size_t devices) {
  AttributeTable t;
  t.value.assign(devices, nullptr);
  t.id.assign(devices, AttributeTable::kMissing);
  t.slice_id.assign(slices.size(), AttributeTable::kMissing);
  std::unordered_map<std::string, int32_t> ids;
  for (size_t s = 0; s < slices.size(); ++s) {
    const auto& list = slices[s]->spec.devices;
    for (size_t i = 0; i < list.size(); ++i) {
      const uint32_t d = device_base[s] + static_cast<uint32_t>(i);
      const DeviceAttribute* a = LookupAttribute(list[i], slices[s]->spec.driver, name);
      int32_t id = AttributeTable::kMissing;
      if (a != nullptr) {
        id = ids.emplace(InternKey(*a), static_cast<int32_t>(ids.size())).first->second;
        t.value[d] = a;
        t.id[d] = id;
      }
      t.slice_id[s] = i == 0 || t.slice_id[s] == id ? id : AttributeTable::kMixed;
    }
  }
  return t;
}

}  // namespace berth::dra
