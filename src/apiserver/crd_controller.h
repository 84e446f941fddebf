// Keeps the custom resources the API server serves (crd_registry.h) in step with the stored
// CustomResourceDefinitions, and removes a deleted CRD's objects.
//
// A watch on the CRDs registers each one as it is written (within the write, so the resource
// is served once the CRD's create returns) and unregisters it when it goes. Deleting a CRD
// only marks it (it carries the customresourcecleanup.apiextensions.k8s.io finalizer): this
// controller's thread then deletes its objects, in one transaction, and removes the finalizer,
// which removes the CRD. A cleanup cut short is found again at the next start; one waiting for
// objects' own finalizers is tried again each second.
//
// Threads: the watch callback runs under the store's lock and only registers and queues; one
// thread of its own deletes.
#pragma once

#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>

#include "apiserver/api_error.h"
#include "apiserver/store.h"
#include "berth/api/result.h"

namespace berth::apiserver {

class CrdController {
 public:
  explicit CrdController(Store& store);
  ~CrdController();
  VoidResult Start();
  void Stop();
  // Deletes the objects of CRD `name` if it is being deleted, then its finalizer. False while
  // objects held by finalizers of their own remain (the thread tries again each second).
  // Called by the thread; public for tests.
  Result<bool> Cleanup(const std::string& name);

 private:
  void Run();

  Store& store_;
  std::unique_ptr<WatchRegistration> watch_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool stopping_ = false;
  std::thread thread_;
  // The CRDs registered, written by the watch callback (under the store's lock) and read by
  // Stop once the watch is gone.
  std::set<std::string> registered_;
};

}  // namespace berth::apiserver
