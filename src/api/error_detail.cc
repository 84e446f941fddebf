#include "api/error_detail.h"

#include <deque>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace berth::error_detail {
namespace {

// Enough for every error in flight between where it is made and where it is answered; the
// oldest entries go first.
constexpr size_t kMaxErrors = 4096;

using Details = std::vector<std::pair<std::type_index, std::shared_ptr<const void>>>;

struct Table {
  std::mutex mu;
  std::unordered_map<std::string, Details> details;
  std::deque<std::string> order;  // keys, oldest first
};

Table& TheTable() {
  static Table* table = new Table();  // never destroyed: errors outlive static destruction
  return *table;
}

std::string Key(const Error& e) {
  std::string key = std::to_string(static_cast<int>(e.code));
  key.push_back('\0');
  key += e.message;
  return key;
}

void PutLocked(Table& t, std::string key, std::type_index type, std::shared_ptr<const void> d) {
  auto [it, inserted] = t.details.try_emplace(key);
  if (inserted) {
    t.order.push_back(std::move(key));
    if (t.order.size() > kMaxErrors) {
      t.details.erase(t.order.front());
      t.order.pop_front();
    }
  }
  for (auto& [have, value] : it->second) {
    if (have == type) {
      value = std::move(d);
      return;
    }
  }
  it->second.emplace_back(type, std::move(d));
}

}  // namespace

namespace internal {

void Put(const Error& e, std::type_index type, std::shared_ptr<const void> detail) {
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  PutLocked(t, Key(e), type, std::move(detail));
}

std::shared_ptr<const void> Get(const Error& e, std::type_index type) {
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  auto it = t.details.find(Key(e));
  if (it == t.details.end()) return nullptr;
  for (const auto& [have, value] : it->second)
    if (have == type) return value;
  return nullptr;
}

}  // namespace internal

void CopyDetails(const Error& from, const Error& to) {
  Table& t = TheTable();
  std::lock_guard lock(t.mu);
  auto it = t.details.find(Key(from));
  if (it == t.details.end()) return;
  const Details copy = it->second;
  const std::string key = Key(to);
  for (const auto& [type, value] : copy) PutLocked(t, key, type, value);
}

}  // namespace berth::error_detail
