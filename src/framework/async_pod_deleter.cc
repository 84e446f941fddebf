#include "framework/async_pod_deleter.h"

#include <utility>

namespace berth {

void DeletePodThen(ClusterWriter& writer, const Pod& pod, std::function<void(const Error*)> done) {
  if (auto* async = dynamic_cast<AsyncPodDeleter*>(&writer)) {
    async->DeletePodThen(pod, std::move(done));
    return;
  }
  VoidResult r = writer.DeletePod(pod);
  const bool ok = r.ok() || r.error().code == ErrorCode::kNotFound;
  if (done) done(ok ? nullptr : &r.error());
}

}  // namespace berth
