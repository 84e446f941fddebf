#include "controllers/controller_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

namespace berth::controllers {

const std::vector<std::string>& KnownControllers() {
  static const std::vector<std::string> kNames = {"replicaset", "replicationcontroller"};
  return kNames;
}

Result<std::vector<std::string>> SelectControllers(const std::vector<std::string>& flag) {
  const auto& known = KnownControllers();
  auto is_known = [&](const std::string& n) {
    return std::find(known.begin(), known.end(), n) != known.end();
  };
  bool star = false;
  std::vector<std::string> on, off;
  for (const std::string& item : flag) {
    // CLI11 passes "a,b" as one item when not split: accept both forms.
    size_t start = 0;
    while (start <= item.size()) {
      size_t comma = item.find(',', start);
      std::string name =
          item.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
      start = comma == std::string::npos ? item.size() + 1 : comma + 1;
      if (name.empty()) continue;
      if (name == "*") {
        star = true;
        continue;
      }
      const bool negated = name[0] == '-';
      const std::string bare = negated ? name.substr(1) : name;
      if (!is_known(bare)) {
        return Error{fmt::format("--controllers: unknown controller \"{}\" (known: {})", bare,
                                 fmt::join(known, ", ")),
                     ErrorCode::kInvalid};
      }
      (negated ? off : on).push_back(bare);
    }
  }
  std::vector<std::string> out;
  for (const std::string& n : known) {
    const bool explicitly_off = std::find(off.begin(), off.end(), n) != off.end();
    const bool explicitly_on = std::find(on.begin(), on.end(), n) != on.end();
    // As kube-controller-manager's IsControllerEnabled: "-name" wins, then "name", then "*".
    if (explicitly_off) continue;
    if (explicitly_on || star) out.push_back(n);
  }
  return out;
}

Result<std::unique_ptr<ControllerManager>> ControllerManager::Start(
    std::unique_ptr<client::RestClient> rest, ControllerManagerOptions options) {
  auto selected = SelectControllers(options.controllers);
  if (!selected.ok()) return selected.error();
  std::unique_ptr<ControllerManager> m(new ControllerManager());
  m->rest_ = std::move(rest);
  const Clock* clock = options.clock ? options.clock : &m->real_clock_;
  auto informer = [&](const char* path, const char* kind) {
    m->informers_.push_back(
        std::make_unique<SharedInformer>(m->rest_.get(), path, kind, options.log));
    return m->informers_.back().get();
  };
  SharedInformer* pods = nullptr;
  auto want = [&](const char* n) {
    return std::find(selected->begin(), selected->end(), n) != selected->end();
  };
  ControllerOptions co{clock, options.workers, options.log};
  if (want("replicaset") || want("replicationcontroller")) pods = informer("/api/v1/pods", "Pod");
  if (want("replicaset")) {
    SharedInformer* sets = informer("/apis/apps/v1/replicasets", "ReplicaSet");
    m->replica_sets_.push_back(std::make_unique<ReplicaSetController>(
        ReplicaSetKind::ReplicaSets(), m->rest_.get(), pods, sets, co));
  }
  if (want("replicationcontroller")) {
    SharedInformer* rcs = informer("/api/v1/replicationcontrollers", "ReplicationController");
    m->replica_sets_.push_back(std::make_unique<ReplicaSetController>(
        ReplicaSetKind::ReplicationControllers(), m->rest_.get(), pods, rcs, co));
  }
  for (auto& i : m->informers_) i->Start();
  // Workers start once every cache has synced: expectations are empty after a start, and the
  // first syncs must count what exists rather than create it again.
  auto* raw = m.get();
  m->starter_ = std::thread([raw] {
    while (!raw->stopping_) {
      bool synced = true;
      for (auto& i : raw->informers_) synced = synced && i->HasSynced();
      if (synced) {
        for (auto& c : raw->replica_sets_) c->Start();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  m->running_ = *selected;
  return m;
}

ControllerManager::~ControllerManager() { Stop(); }

void ControllerManager::Stop() {
  if (stopped_) return;
  stopped_ = true;
  stopping_ = true;
  if (starter_.joinable()) starter_.join();
  for (auto& c : replica_sets_) c->Stop();
  for (auto& i : informers_) i->Stop();
}

}  // namespace berth::controllers
