#include "framework/tainted_slices.h"

#include <memory>
#include <utility>

namespace berth {
namespace {

// Whether `rule` could select a device of `slice` (its driver and pool fit).
bool RuleReaches(const DeviceTaintRule& rule, const ResourceSlice& slice) {
  if (!rule.selector) return false;
  const DeviceTaintRule::Selector& s = *rule.selector;
  return (!s.driver || *s.driver == slice.spec.driver) &&
         (!s.pool || *s.pool == slice.spec.pool.name);
}

bool SameTaints(const ResourceSlice& a, const ResourceSlice& b) {
  if (a.spec.devices.size() != b.spec.devices.size()) return false;
  for (size_t i = 0; i < a.spec.devices.size(); ++i) {
    if (a.spec.devices[i].taints != b.spec.devices[i].taints) return false;
  }
  return true;
}

}  // namespace

Ptr<ResourceSlice> ApplyDeviceTaintRules(const Ptr<ResourceSlice>& slice,
                                         const std::vector<const DeviceTaintRule*>& rules) {
  std::shared_ptr<ResourceSlice> copy;  // made on the first device a rule selects
  for (const DeviceTaintRule* rule : rules) {
    if (!RuleReaches(*rule, *slice)) continue;
    for (size_t i = 0; i < slice->spec.devices.size(); ++i) {
      const Device& d = slice->spec.devices[i];
      if (!RuleSelects(*rule, slice->spec.driver, slice->spec.pool.name, d.name)) continue;
      if (!copy) copy = std::make_shared<ResourceSlice>(*slice);
      copy->spec.devices[i].taints.push_back(rule->taint);
    }
  }
  if (!copy) return slice;
  return copy;
}

Ptr<ResourceSlice> TaintedSlices::TaintLocked(const Ptr<ResourceSlice>& slice) const {
  if (rules_.empty()) return slice;
  std::vector<const DeviceTaintRule*> rules;
  rules.reserve(rules_.size());
  for (const auto& [name, rule] : rules_) rules.push_back(&rule);
  return ApplyDeviceTaintRules(slice, rules);
}

TaintedSlices::Change TaintedSlices::PutSlice(Ptr<ResourceSlice> slice) {
  std::lock_guard lock(mu_);
  Ptr<ResourceSlice> tainted = TaintLocked(slice);
  Entry& e = slices_[slice->metadata.name];
  Change c{std::move(e.tainted), tainted};
  e = Entry{std::move(slice), std::move(tainted)};
  return c;
}

TaintedSlices::Change TaintedSlices::RemoveSlice(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = slices_.find(name);
  if (it == slices_.end()) return {};
  Change c{std::move(it->second.tainted), nullptr};
  slices_.erase(it);
  return c;
}

std::vector<TaintedSlices::Change> TaintedSlices::RetaintLocked(const DeviceTaintRule* before,
                                                                const DeviceTaintRule* after) {
  std::vector<Change> changes;
  for (auto& [name, e] : slices_) {
    const bool reached = (before && RuleReaches(*before, *e.published)) ||
                         (after && RuleReaches(*after, *e.published));
    if (!reached) continue;
    Ptr<ResourceSlice> tainted = TaintLocked(e.published);
    if (SameTaints(*tainted, *e.tainted)) continue;
    changes.push_back({e.tainted, tainted});
    e.tainted = std::move(tainted);
  }
  return changes;
}

std::vector<TaintedSlices::Change> TaintedSlices::PutRule(DeviceTaintRule rule) {
  std::lock_guard lock(mu_);
  auto it = rules_.find(rule.metadata.name);
  std::optional<DeviceTaintRule> before;
  if (it != rules_.end()) {
    before = std::move(it->second);
    it->second = std::move(rule);
  } else {
    it = rules_.emplace(rule.metadata.name, std::move(rule)).first;
  }
  return RetaintLocked(before ? &*before : nullptr, &it->second);
}

std::vector<TaintedSlices::Change> TaintedSlices::RemoveRule(std::string_view name) {
  std::lock_guard lock(mu_);
  auto it = rules_.find(name);
  if (it == rules_.end()) return {};
  DeviceTaintRule before = std::move(it->second);
  rules_.erase(it);
  return RetaintLocked(&before, nullptr);
}

std::vector<Ptr<ResourceSlice>> TaintedSlices::List() const {
  std::lock_guard lock(mu_);
  std::vector<Ptr<ResourceSlice>> out;
  out.reserve(slices_.size());
  for (const auto& [name, e] : slices_) out.push_back(e.tainted);
  return out;
}

Ptr<ResourceSlice> TaintedSlices::Get(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = slices_.find(name);
  return it == slices_.end() ? nullptr : it->second.tainted;
}

size_t TaintedSlices::rule_count() const {
  std::lock_guard lock(mu_);
  return rules_.size();
}

}  // namespace berth
