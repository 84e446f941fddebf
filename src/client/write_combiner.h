// WriteCombiner: POSTs from many threads, each waiting for its own answer, sent in pipelined
// batches (RestClient::SendEncodedPipelined). A caller that finds a sending slot free takes
// every waiting write, its own included, and sends them together; the others wait to be
// answered. Under light load each write goes alone, at once; when writes pile up (more than
// `slots` in flight), a batch carries them all in one round trip: one write and one wake-up of
// each side for the lot.
//
// The batch is answered in order, so against a server that handles pipelined requests one
// after another the later writes wait for the earlier: the number of slots grows while
// batches come out large (the server is slow to answer, so more may go at once) and shrinks
// back while they are small.
//
// Threads: Send from any number of threads; it blocks until the write is answered.
#pragma once

#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>

#include "berth/api/result.h"
#include "client/rest_client.h"

namespace berth::client {

class WriteCombiner {
 public:
  WriteCombiner(RestClient* rest, int min_slots = 2, int max_slots = 16);

  // POSTs `body` to `path`. The result is the server's answer (2xx: ok) or the reason there
  // is none; nothing is retried here (as SendEncodedPipelined).
  VoidRequestResult Send(const std::string& path, const std::string& body);

  // Batches in flight allowed now (for tests).
  int slots() const;
  // Writes waiting for a slot (for tests).
  size_t waiting() const;

 private:
  struct Pending {
    const std::string* path;
    const std::string* body;
    VoidRequestResult result;
    bool done = false;
    std::condition_variable cv;
  };
  // Bounds how long the last of a batch waits behind the others on a server that handles
  // pipelined requests one at a time.
  static constexpr size_t kMaxBatch = 32;

  RestClient* rest_;
  const int min_slots_, max_slots_;
  mutable std::mutex mu_;
  std::deque<Pending*> waiting_;
  int in_flight_ = 0;
  int slots_;
};

}  // namespace berth::client
