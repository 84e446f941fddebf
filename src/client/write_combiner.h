// WriteCombiner: POSTs from many threads, each waiting for its own answer, sent in pipelined
// batches (RestClient::SendEncodedPipelined). A caller that finds a sending slot free takes
// every waiting write, its own included, and sends them together; the others wait to be
// answered. Under light load each write goes alone, at once; when writes pile up (more than
// `slots` in flight), a batch carries them all in one round trip: one write and one wake-up of
// each side for the lot.
//
// The batch is answered in order, so against a server that handles pipelined requests one
// after another the later writes wait for the earlier: the number of slots grows while
// batches come out full (the server is slow to answer, so more may go at once) and shrinks
// back while they are small. How large a batch may be is the caller's choice: a server that
// reads pipelined requests ahead and answers them together (Berth's own, whose writes share
// one commit) does best with large ones; a server that handles a connection's requests one
// after another (kube-apiserver's HTTP/1.1) with small batches on more connections.
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
  // `slots`: batches in flight, from `min_slots` up to `max_slots`; `max_batch`: writes sent
  // together at most.
  WriteCombiner(RestClient* rest, int min_slots = 2, int max_slots = 16, size_t max_batch = 32);

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
  RestClient* rest_;
  const int min_slots_, max_slots_;
  // Bounds how long the last of a batch waits behind the others on a server that handles
  // pipelined requests one at a time.
  const size_t max_batch_;
  const size_t grow_at_;  // a batch this large opens another slot
  mutable std::mutex mu_;
  std::deque<Pending*> waiting_;
  int in_flight_ = 0;
  int slots_;
};

}  // namespace berth::client
