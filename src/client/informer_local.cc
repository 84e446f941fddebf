// The informer's list and watch over a LocalListWatch (the API server of this process): the
// same store, revisions and handler calls as over HTTP, with the server's documents shared
// rather than parsed.
#include <fmt/format.h>

#include "client/informer.h"

namespace berth::client {
namespace {

const char* TypeName(LocalListWatch::Event::Type type) {
  switch (type) {
    case LocalListWatch::Event::Type::kAdded:
      return "ADDED";
    case LocalListWatch::Event::Type::kModified:
      return "MODIFIED";
    case LocalListWatch::Event::Type::kDeleted:
      return "DELETED";
  }
  return "";
}

}  // namespace

bool Informer::LocalServes() const {
  return rest_->local() != nullptr && rest_->local()->Serves(options_.path);
}

bool Informer::ListLocal() {
  ++lists_;
  auto listed = rest_->local()->List(options_.path);
  if (!listed.ok()) {
    if (options_.log)
      options_.log(fmt::format("listing {}: {}", options_.kind, listed.error().message));
    return false;
  }
  std::map<std::string, std::pair<Document, std::string>> fresh;
  for (RawObject& item : listed->items) {
    if (!item || !item->is_object()) continue;
    RawObject kept = Shareable(std::move(item));
    std::string key = KeyOf(*kept);
    std::string rv = RevisionOf(*kept);
    fresh.emplace(std::move(key),
                  std::make_pair(Document{{}, std::move(kept), nullptr}, std::move(rv)));
  }
  Replace(std::move(fresh), std::move(listed->resource_version));
  return true;
}

bool Informer::WatchLocal() {
  ++watches_;
  watch_events_ = 0;
  {
    std::lock_guard lock(local_mu_);
    local_events_.clear();
    local_overflow_ = false;
  }
  // Runs on the writer's thread with the store locked: it only queues.
  auto sink = [this](LocalListWatch::Event event) {
    std::lock_guard lock(local_mu_);
    if (local_events_.size() >= options_.local_backlog) {
      local_overflow_ = true;
      local_cv_.notify_one();
      return false;
    }
    local_events_.push_back(std::move(event));
    if (local_events_.size() == 1) local_cv_.notify_one();
    return true;
  };
  auto registration = rest_->local()->Watch(options_.path, last_rv_, sink);
  if (!registration.ok()) {
    if (registration.error().code == ErrorCode::kGone) return false;
    if (options_.log && !stop_)
      options_.log(fmt::format("watch of {}: {}", options_.kind, registration.error().message));
    return true;  // Run waits before the next try: this watch delivered nothing
  }
  std::deque<LocalListWatch::Event> batch;
  bool overflow = false;
  while (!stop_ && !overflow) {
    {
      std::unique_lock lock(local_mu_);
      local_cv_.wait(lock, [&] { return stop_ || local_overflow_ || !local_events_.empty(); });
      batch.swap(local_events_);
      overflow = local_overflow_;
    }
    for (LocalListWatch::Event& event : batch) {
      if (stop_) break;
      ++watch_events_;
      std::string rv = std::move(event.resource_version);
      Apply(TypeName(event.type),
            Document{{}, Shareable(std::move(event.object)), std::move(event.decoded)});
      if (!rv.empty()) last_rv_ = std::move(rv);
    }
    batch.clear();
  }
  registration->reset();
  if (overflow && options_.log) {
    options_.log(fmt::format("watch of {}: more than {} events behind, listing again",
                             options_.kind, options_.local_backlog));
  }
  return !overflow;
}

}  // namespace berth::client
