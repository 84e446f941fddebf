#include "controllers/expectations.h"

namespace berth::controllers {

bool Expectations::Satisfied(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return true;
  const Entry& e = it->second;
  if (e.adds <= 0 && e.dels <= 0) return true;
  return clock_->Now() - e.timestamp > kTtl;
}

void Expectations::ExpectCreations(const std::string& key, int adds) {
  std::lock_guard lock(mu_);
  entries_[key] = Entry{adds, 0, clock_->Now(), {}};
}

void Expectations::ExpectDeletions(const std::string& key,
                                   const std::vector<std::string>& pod_keys) {
  std::lock_guard lock(mu_);
  Entry e{0, static_cast<int>(pod_keys.size()), clock_->Now(), {}};
  e.deleting.insert(pod_keys.begin(), pod_keys.end());
  e.dels = static_cast<int>(e.deleting.size());
  entries_[key] = std::move(e);
}

void Expectations::CreationObserved(const std::string& key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) --it->second.adds;
}

void Expectations::DeletionObserved(const std::string& key, const std::string& pod_key) {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return;
  if (it->second.deleting.erase(pod_key)) --it->second.dels;
}

void Expectations::Delete(const std::string& key) {
  std::lock_guard lock(mu_);
  entries_.erase(key);
}

std::pair<int, int> Expectations::Pending(const std::string& key) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(key);
  if (it == entries_.end()) return {0, 0};
  return {it->second.adds, it->second.dels};
}

}  // namespace berth::controllers
