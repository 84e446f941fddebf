#include "plugins/dynamicresources/assumed_claims.h"

#include <charconv>
#include <optional>
#include <unordered_set>
#include <utility>

namespace berth::dynamicresources {
namespace {

std::optional<uint64_t> VersionNumber(const std::string& rv) {
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(rv.data(), rv.data() + rv.size(), v);
  if (ec != std::errc() || end != rv.data() + rv.size() || rv.empty()) return std::nullopt;
  return v;
}

}  // namespace

bool AssumedClaims::CaughtUp(const ResourceClaim& listed, const Entry& assumed) {
  // An allocation in flight is newer than anything listed (the write has not happened).
  if (assumed.in_flight) return false;
  const std::string& a = assumed.claim->metadata.resource_version;
  const std::string& l = listed.metadata.resource_version;
  auto av = VersionNumber(a);
  auto lv = VersionNumber(l);
  // resourceVersions are opaque; Berth's servers (and etcd's) count up, which is the only order
  // worth trusting. Otherwise any change from what was written counts as newer.
  if (av && lv) return *lv >= *av;
  return l != a || l.empty();
}

void AssumedClaims::AssumeInFlight(Ptr<ResourceClaim> claim) {
  std::string uid = claim->metadata.uid;
  std::lock_guard lock(mu_);
  by_uid_[uid] = Entry{std::move(claim), true};
}

void AssumedClaims::Forget(const std::string& uid) {
  std::lock_guard lock(mu_);
  by_uid_.erase(uid);
}

void AssumedClaims::Written(Ptr<ResourceClaim> stored) {
  std::string uid = stored->metadata.uid;
  std::lock_guard lock(mu_);
  by_uid_[uid] = Entry{std::move(stored), false};
}

void AssumedClaims::Created(Ptr<ResourceClaim> stored) {
  std::string uid = stored->metadata.uid;
  std::lock_guard lock(mu_);
  by_uid_[uid] = Entry{std::move(stored), false, true};
}

bool AssumedClaims::InFlight(const std::string& uid) const {
  std::lock_guard lock(mu_);
  auto it = by_uid_.find(uid);
  return it != by_uid_.end() && it->second.in_flight;
}

Ptr<ResourceClaim> AssumedClaims::Resolve(const Ptr<ResourceClaim>& listed) const {
  if (!listed) return listed;
  std::lock_guard lock(mu_);
  auto it = by_uid_.find(listed->metadata.uid);
  // An allocation in flight is not the claim's state yet (PreFilter asks InFlight()).
  if (it == by_uid_.end() || it->second.in_flight || CaughtUp(*listed, it->second)) return listed;
  return it->second.claim;
}

std::vector<Ptr<ResourceClaim>> AssumedClaims::Merge(std::vector<Ptr<ResourceClaim>> listed) const {
  std::lock_guard lock(mu_);
  if (by_uid_.empty()) return listed;
  std::unordered_set<std::string> seen;
  for (Ptr<ResourceClaim>& c : listed) {
    auto it = by_uid_.find(c->metadata.uid);
    if (it == by_uid_.end()) continue;
    seen.insert(c->metadata.uid);
    if (!CaughtUp(*c, it->second)) {
      c = it->second.claim;
    } else {
      by_uid_.erase(it);  // the listers have it now
    }
  }
  for (auto it = by_uid_.begin(); it != by_uid_.end();) {
    if (seen.count(it->first)) {
      ++it;
    } else if (it->second.in_flight || it->second.created) {
      listed.push_back(it->second.claim);
      ++it;
    } else {
      it = by_uid_.erase(it);  // written, then deleted: it holds nothing any more
    }
  }
  return listed;
}

Ptr<ResourceClaim> AssumedClaims::Overlay(const std::string& uid,
                                          const Ptr<ResourceClaim>& listed) const {
  std::lock_guard lock(mu_);
  auto it = by_uid_.find(uid);
  if (it == by_uid_.end()) return listed;
  if (listed) {
    if (!CaughtUp(*listed, it->second)) return it->second.claim;
    by_uid_.erase(it);  // the listers have it now
    return listed;
  }
  if (it->second.in_flight || it->second.created) return it->second.claim;
  by_uid_.erase(it);  // written, then deleted: it holds nothing any more
  return nullptr;
}

std::vector<std::string> AssumedClaims::Uids() const {
  std::lock_guard lock(mu_);
  std::vector<std::string> out;
  out.reserve(by_uid_.size());
  for (const auto& [uid, entry] : by_uid_) out.push_back(uid);
  return out;
}

size_t AssumedClaims::size() const {
  std::lock_guard lock(mu_);
  return by_uid_.size();
}

}  // namespace berth::dynamicresources
