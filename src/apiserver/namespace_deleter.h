// The namespace lifecycle of `berth up`: what kube-controller-manager's namespace controller
// does for a namespace being deleted, and the namespace-specific rules of kube-apiserver's
// namespace storage that the server applies to writes.
//
// Deleting a namespace only marks it Terminating (Store::Delete). The NamespaceDeleter then
// deletes every object in it, each as a DELETE without options would (watchers see it go; an
// object with finalizers is marked and waits for them; a pod on a node that has not finished
// is marked for its grace period and waits for its kubelet to confirm, pod_deletion.h), in
// batches that each commit as one transaction.
// Once nothing is left, it removes the `kubernetes` finalizer from spec.finalizers (the
// `finalize` subresource's write), which removes the namespace when no other finalizer holds
// it. After every pass the namespace's status.conditions say what is left in it and what holds
// it there (namespace_conditions.h), in the namespace controller's words.
//
// Every step is a write of the store, so a deletion cut short (a crash, kill -9) leaves a
// Terminating namespace with part of its content: the deleter finds it at its next start and
// goes on.
//
// Threads: one thread of its own does the work; Sync may also be called directly (tests).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>

#include "apiserver/api_error.h"
#include "apiserver/namespace_conditions.h"
#include "apiserver/store.h"
#include "berth/api/result.h"

namespace berth::apiserver {

// The finalizer the namespace deleter owns (spec.finalizers), set on every namespace created.
inline constexpr std::string_view kNamespaceFinalizer = "kubernetes";

// kube-apiserver's namespace strategy for a write of namespace `current` as `next`: an update
// keeps spec.finalizers (only the `finalize` subresource changes them) and status (only the
// `status` subresource changes it).
nlohmann::json PrepareNamespaceUpdate(std::string_view subresource, const nlohmann::json& current,
                                      nlohmann::json next);

// The store's Forbidden answer to a create of `name` (of `resource`, as errors name it) in the
// Terminating namespace `ns`, with the namespace kept as data (ApiError::terminating_namespace)
// for the cause below.
ApiError NamespaceTerminatingError(std::string_view resource, std::string_view name,
                                   std::string_view ns);
// The cause kube-apiserver adds to the Forbidden answer of a create in a Terminating namespace
// (type NamespaceTerminating, field metadata.namespace), for the store's error `e`; nothing
// for other errors.
std::optional<nlohmann::json> NamespaceTerminatingCause(const ApiError& e);

struct NamespaceDeleterOptions {
  // Objects deleted per transaction (and per hold of the store's lock).
  size_t batch = 500;
  // How often a namespace whose content waits (for finalizers, or pods for their kubelets) is
  // looked at again.
  std::chrono::milliseconds recheck{1000};
  // Called with what went wrong in a pass (a storage failure); the pass is tried again later.
  std::function<void(const std::string&)> log;
};

// The outcome of one pass over a namespace.
struct NamespaceSync {
  enum class State {
    kGone,              // removed (or never there)
    kNotTerminating,    // not being deleted
    kContentRemaining,  // objects wait for their finalizers or kubelets: look again later
    kHeldByOthers,      // empty, but finalizers other than `kubernetes` hold it
  };
  State state = State::kGone;
  int64_t deleted = 0;    // objects this pass deleted (or marked, when they have finalizers)
  int64_t remaining = 0;  // objects left in the namespace
};

class NamespaceDeleter {
 public:
  explicit NamespaceDeleter(Store& store, NamespaceDeleterOptions options = {});
  ~NamespaceDeleter();
  NamespaceDeleter(const NamespaceDeleter&) = delete;
  NamespaceDeleter& operator=(const NamespaceDeleter&) = delete;

  // Watches the namespaces and starts the thread, which finishes every Terminating namespace:
  // those in the store now (a deletion cut short) and those deleted later. Also watches pods,
  // so that a namespace whose last pod's kubelet confirms goes then, not at the next recheck.
  VoidResult Start();
  void Stop();

  // One pass over namespace `name`: deletes what is in it, then finalizes it if nothing is
  // left. Only a storage failure is an error.
  Result<NamespaceSync> Sync(std::string_view name);

  // Returns once no namespace is queued or being worked on and none waits for finalizers of
  // its content, or after `timeout`; says which (tests, and callers that wait for quiet).
  bool WaitIdle(std::chrono::milliseconds timeout);

 private:
  // Deletes the namespace's objects (pods gracefully); `deleted` counts them, and `pod_grace`
  // is set to the longest grace period of its pods that have not finished.
  VoidResult DeleteContent(std::string_view name, int64_t* deleted, int64_t* pod_grace);
  // What is left in the namespace after DeleteContent; `grace_running` says whether pods left
  // may still be in their grace period.
  Result<NamespaceContentLeft> Survey(std::string_view name, bool grace_running);
  // Writes what `left` says into the namespace's status.conditions (namespace_conditions.h).
  VoidResult RecordConditions(std::string_view name, const std::string& uid,
                              const NamespaceContentLeft& left);
  // Removes the `kubernetes` finalizer (or, when none is left, deletes the namespace again).
  Result<NamespaceSync::State> Finalize(std::string_view name, const std::string& uid);
  void Loop();
  void Enqueue(const std::string& name);
  // Namespace `name` lost a pod: if it waits for its content, it is looked at again at once.
  void Wake(const std::string& name);

  Store& store_;
  NamespaceDeleterOptions options_;
  std::unique_ptr<WatchRegistration> watch_;      // namespaces
  std::unique_ptr<WatchRegistration> pod_watch_;  // pods deleted (their kubelets confirming)
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;       // work queued, or stopping
  std::condition_variable idle_cv_;  // the deleter became idle
  std::set<std::string> queued_;     // to sync at once
  std::set<std::string> waiting_;    // to sync again after options_.recheck
  bool busy_ = false;
  bool stopping_ = false;
};

}  // namespace berth::apiserver
