#include "controllers/controller_base.h"

namespace berth::controllers {

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
      if (log_) log_("syncing " + *key + ": " + r.error().message);
      queue_->AddRateLimited(*key);
    }
    queue_->Done(*key);
  }
}

}  // namespace berth::controllers
