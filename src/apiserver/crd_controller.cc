#include "apiserver/crd_controller.h"

#include <algorithm>
#include <chrono>
#include <exception>

#include "apiserver/crd_admission.h"
#include "apiserver/crd_registry.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;

const ResourceInfo& Crds() {
  return *FindResource("apiextensions.k8s.io", "v1", "customresourcedefinitions");
}

bool Terminating(const Json& crd) {
  return crd.contains("metadata") && crd["metadata"].contains("deletionTimestamp");
}

}  // namespace

CrdController::CrdController(Store& store) : store_(store) {}

CrdController::~CrdController() { Stop(); }

VoidResult CrdController::Start() {
  auto watch = store_.Watch(Crds(), "", std::nullopt, nullptr, [this](const WatchEvent& e) {
    const Json& crd = *e.object.object;
    const std::string name = crd["metadata"].value("name", "");
    if (e.type == WatchEventType::kDeleted) {
      UnregisterCrd(name);
      registered_.erase(name);
      return true;
    }
    try {
      RegisterCrd(crd);
    } catch (const std::exception&) {
      // Admission lets no CRD of the wrong shape through (crd_shape.h); should one be stored
      // regardless, it is not served, and the store's write, under way, is not broken off.
      UnregisterCrd(name);
    }
    registered_.insert(name);
    if (Terminating(crd)) {
      std::lock_guard lock(mu_);
      queue_.push_back(name);
      cv_.notify_one();
    }
    return true;
  });
  if (!watch.ok()) return watch.error();
  watch_ = std::move(watch).value();
  thread_ = std::thread([this] { Run(); });
  return {};
}

void CrdController::Stop() {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  watch_.reset();
  // The registry is the process's: what this store's CRDs served goes with it (a server
  // started again, on another store, serves that store's).
  for (const auto& name : registered_) UnregisterCrd(name);
  registered_.clear();
}

void CrdController::Run() {
  std::unique_lock lock(mu_);
  std::set<std::string> waiting;  // cleanups to try again: objects held by finalizers, errors
  while (true) {
    const bool woken =
        cv_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_ || !queue_.empty(); });
    if (stopping_) return;
    if (!woken) {
      for (const auto& name : waiting) queue_.push_back(name);
      waiting.clear();
      if (queue_.empty()) continue;
    }
    std::string name = std::move(queue_.front());
    queue_.pop_front();
    lock.unlock();
    auto done = Cleanup(name);
    lock.lock();
    if (!done.ok() || !*done) waiting.insert(name);
  }
}

Result<bool> CrdController::Cleanup(const std::string& name) {
  auto got = store_.Get(Crds(), "", name);
  if (!got.ok()) return true;  // gone already
  const Json& crd = *got->object;
  if (!Terminating(crd)) return true;
  const ResourceInfo storage = StorageResourceOf(crd);
  // The objects of a kind the server serves itself are not this CRD's to remove.
  auto list = IsBuiltinCrd(name) ? Result<ListResult>(ListResult{})
                                 : store_.List(storage, "", nullptr, 0, "");
  if (!list.ok()) return list.error();
  std::vector<Store::ObjectRef> refs;
  for (const auto& so : list->items) {
    const Json& meta = (*so.object)["metadata"];
    refs.push_back(
        {&storage, meta.value("namespace", ""), meta.value("name", ""), meta.value("uid", "")});
  }
  if (!refs.empty()) {
    if (auto deleted = store_.DeleteMany(refs); !deleted.ok()) return deleted.error();
    // Objects held by finalizers of their own are only marked: wait for them.
    auto left = store_.List(storage, "", nullptr, 1, "");
    if (!left.ok()) return left.error();
    if (!left->items.empty()) return false;
  }
  auto done = store_.Mutate(
      Crds(), "", name,
      [](const Json* current) -> Result<Json> {
        Json next = *current;
        Json& f = next["metadata"]["finalizers"];
        if (f.is_array()) {
          f.erase(std::remove(f.begin(), f.end(), Json(kCrdCleanupFinalizer)), f.end());
          if (f.empty()) next["metadata"].erase("finalizers");
        }
        return next;
      },
      false, false);
  if (!done.ok()) return done.error();
  return true;
}

}  // namespace berth::apiserver
