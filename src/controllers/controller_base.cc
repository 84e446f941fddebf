#include "controllers/controller_base.h"

#include "controllers/object_util.h"

namespace berth::controllers {

client::InformerHandlers EnqueueOnEvents(WorkQueue* queue,
                                         std::function<void(const std::string&)> on_delete) {
  client::InformerHandlers h;
  h.on_add = [queue](const Object& o) { queue->Add(KeyOf(DocOf(o))); };
  h.on_update = [queue](const Object&, const Object& o) { queue->Add(KeyOf(DocOf(o))); };
  h.on_delete = [queue, on_delete = std::move(on_delete)](const Object& o) {
    const std::string key = KeyOf(DocOf(o));
    if (on_delete) on_delete(key);
    queue->Add(key);
  };
  return h;
}

WorkerLoop::WorkerLoop(WorkQueue* queue, std::function<VoidResult(const std::string&)> sync,
                       std::function<void(const std::string&)> log)
    : queue_(queue), sync_(std::move(sync)), log_(std::move(log)) {}

WorkerLoop::~WorkerLoop() { Stop(); }

void WorkerLoop::Start(int workers) {
  for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Run(); });
}

void WorkerLoop::Stop() {
  queue_->ShutDown();
  for (auto& t : threads_)
    if (t.joinable()) t.join();
  threads_.clear();
}

void WorkerLoop::Run() {
  while (auto key = queue_->Get()) {
    if (queue_->ShuttingDown()) {  // what is left waits for the next start
      queue_->Done(*key);
      return;
    }
    VoidResult r = sync_(*key);
    if (r.ok()) {
      queue_->Forget(*key);
    } else {
      // A conflict is optimistic concurrency at work (the object changed since the cache
      // read it): retried at once by the backoff and, as upstream, not worth a log line.
      if (log_ && r.error().code != ErrorCode::kConflict) {
        log_("syncing " + *key + ": " + r.error().message);
      }
      queue_->AddRateLimited(*key);
    }
    queue_->Done(*key);
  }
}

}  // namespace berth::controllers
