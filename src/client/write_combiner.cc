#include "client/write_combiner.h"

#include <algorithm>
#include <vector>

namespace berth::client {

WriteCombiner::WriteCombiner(RestClient* rest, int min_slots, int max_slots, size_t max_batch)
    : rest_(rest),
      min_slots_(std::max(1, min_slots)),
      max_slots_(std::max(min_slots_, max_slots)),
      max_batch_(std::max<size_t>(1, max_batch)),
      grow_at_(std::min<size_t>(8, max_batch_)),
      slots_(min_slots_) {}

int WriteCombiner::slots() const {
  std::lock_guard lock(mu_);
  return slots_;
}

size_t WriteCombiner::waiting() const {
  std::lock_guard lock(mu_);
  return waiting_.size();
}

VoidRequestResult WriteCombiner::Send(const std::string& path, const std::string& body) {
  Pending self;
  self.path = &path;
  self.body = &body;
  std::unique_lock lock(mu_);
  waiting_.push_back(&self);
  std::vector<Pending*> batch;
  std::vector<RestClient::EncodedWrite> writes;
  while (!self.done) {
    if (in_flight_ >= slots_ || waiting_.empty()) {
      self.cv.wait(lock);
      continue;
    }
    // A free slot: this thread sends what waits, its own write first in line or not.
    batch.clear();
    while (!waiting_.empty() && batch.size() < max_batch_) {
      batch.push_back(waiting_.front());
      waiting_.pop_front();
    }
    // Large batches (8, or full when fewer may go): the answers come slowly for the rate
    // writes arrive at; another slot lets more go at once. Lone writes: the slots are more
    // than needed.
    if (batch.size() >= grow_at_ && slots_ < max_slots_) ++slots_;
    if (batch.size() == 1 && slots_ > min_slots_) --slots_;
    ++in_flight_;
    lock.unlock();
    writes.clear();
    for (const Pending* p : batch) writes.push_back({*p->path, *p->body});
    auto results = rest_->SendEncodedPipelined("POST", writes);
    lock.lock();
    --in_flight_;
    for (size_t i = 0; i < batch.size(); ++i) {
      batch[i]->result = std::move(results[i]);
      batch[i]->done = true;
      if (batch[i] != &self) batch[i]->cv.notify_one();
    }
    // The freed slot goes to the next waiting write's thread.
    if (!waiting_.empty()) waiting_.front()->cv.notify_one();
  }
  return std::move(self.result);
}

}  // namespace berth::client
