#include "controllers/controller_manager.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "controllers/cron_job.h"
#include "controllers/daemon_set.h"
#include "controllers/deployment.h"
#include "controllers/disruption.h"
#include "controllers/garbage_collector.h"
#include "controllers/job.h"
#include "controllers/namespace.h"
#include "controllers/node_lifecycle.h"
#include "controllers/persistent_volume.h"
#include "controllers/pod_gc.h"
#include "controllers/pod_group.h"
#include "controllers/replica_set.h"
#include "controllers/resource_claim.h"
#include "controllers/stateful_set.h"
#include "controllers/ttl_after_finished.h"
#include "controllers/volume_provisioner.h"

namespace berth::controllers {
namespace {

using Factory = std::function<std::unique_ptr<Controller>(const ControllerContext&)>;

// Every controller by its kube-controller-manager name, in the order they start.
// Long by design: one entry per controller, a table written as code.
const std::vector<std::pair<std::string, Factory>>& Registry() {
  static const std::vector<std::pair<std::string, Factory>> kRegistry = {
      {"replicaset",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<ReplicaSetController>(
             ReplicaSetKind::ReplicaSets(), c.rest, c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For("/apis/apps/v1/replicasets", "ReplicaSet"), c.options);
       }},
      {"replicationcontroller",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<ReplicaSetController>(
             ReplicaSetKind::ReplicationControllers(), c.rest,
             c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For("/api/v1/replicationcontrollers", "ReplicationController"),
             c.options);
       }},
      {"nodelifecycle",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<NodeLifecycleController>(
             c.rest, c.informers->For("/api/v1/nodes", "Node"),
             c.informers->For(kLeasesPath, "Lease"), c.options);
       }},
      {"taint-eviction-controller",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<TaintEvictionController>(
             c.rest, c.informers->For("/api/v1/nodes", "Node"),
             c.informers->For("/api/v1/pods", "Pod"), c.options);
       }},
      {"daemonset",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<DaemonSetController>(
             c.rest, c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For("/api/v1/nodes", "Node"),
             c.informers->For("/apis/apps/v1/daemonsets", "DaemonSet"),
             c.informers->For("/apis/apps/v1/controllerrevisions", "ControllerRevision"),
             c.options);
       }},
      {"statefulset",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<StatefulSetController>(
             c.rest, c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For("/apis/apps/v1/statefulsets", "StatefulSet"),
             c.informers->For("/apis/apps/v1/controllerrevisions", "ControllerRevision"),
             c.informers->For("/api/v1/persistentvolumeclaims", "PersistentVolumeClaim"),
             c.options);
       }},
      {"garbagecollector",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         std::vector<SharedInformer*> informers;
         for (const GcResource& r : GcResources())
           informers.push_back(c.informers->For(r.CollectionPath(), r.kind, r.optional));
         return std::make_unique<GarbageCollector>(GcResources(), std::move(informers), c.rest,
                                                   c.options);
       }},
      {"podgc",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<PodGcController>(c.rest, c.informers->For("/api/v1/pods", "Pod"),
                                                  c.informers->For("/api/v1/nodes", "Node"),
                                                  c.options);
       }},
      {"disruption",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         DisruptionInformers i{
             c.informers->For("/apis/policy/v1/poddisruptionbudgets", "PodDisruptionBudget"),
             c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For("/apis/apps/v1/replicasets", "ReplicaSet"),
             c.informers->For("/api/v1/replicationcontrollers", "ReplicationController"),
             c.informers->For("/apis/apps/v1/deployments", "Deployment"),
             c.informers->For("/apis/apps/v1/statefulsets", "StatefulSet")};
         return std::make_unique<DisruptionController>(c.rest, i, c.options);
       }},
      {"deployment",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<DeploymentController>(
             c.rest, c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For("/apis/apps/v1/replicasets", "ReplicaSet"),
             c.informers->For("/apis/apps/v1/deployments", "Deployment"), c.options);
       }},
      {"job",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<JobController>(c.rest, c.informers->For("/api/v1/pods", "Pod"),
                                                c.informers->For("/apis/batch/v1/jobs", "Job"),
                                                c.options);
       }},
      {"cronjob",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<CronJobController>(
             c.rest, c.informers->For("/apis/batch/v1/jobs", "Job"),
             c.informers->For("/apis/batch/v1/cronjobs", "CronJob"), c.options);
       }},
      {"namespace",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<NamespaceController>(
             c.rest, c.informers->For("/api/v1/namespaces", "Namespace"), c.options);
       }},
      {"ttl-after-finished-controller",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<TtlAfterFinishedController>(
             c.rest, c.informers->For("/apis/batch/v1/jobs", "Job"), c.options);
       }},
      {"resourceclaim-controller",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         // Optional: a cluster that does not serve resource.k8s.io/v1 leaves it idle.
         return std::make_unique<ResourceClaimController>(
             c.rest, c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For(kResourceClaimsPath, "ResourceClaim", /*optional=*/true),
             c.informers->For(kResourceClaimTemplatesPath, "ResourceClaimTemplate",
                              /*optional=*/true),
             c.options);
       }},
      {"persistentvolume-binder",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<PersistentVolumeController>(
             c.rest, c.informers->For("/api/v1/persistentvolumes", "PersistentVolume"),
             c.informers->For("/api/v1/persistentvolumeclaims", "PersistentVolumeClaim"),
             c.informers->For("/apis/storage.k8s.io/v1/storageclasses", "StorageClass"), c.options);
       }},
      // Not a kube-controller-manager controller: the dynamic provisioner of berth.dev/local,
      // as a cluster's external provisioner (kind's local-path-provisioner) would run.
      {"volume-provisioner",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<VolumeProvisioner>(
             c.rest, c.informers->For("/api/v1/persistentvolumes", "PersistentVolume"),
             c.informers->For("/api/v1/persistentvolumeclaims", "PersistentVolumeClaim"),
             c.informers->For("/apis/storage.k8s.io/v1/storageclasses", "StorageClass"),
             c.informers->For("/api/v1/nodes", "Node"), c.options);
       }},
      // Not a kube-controller-manager controller: scheduler-plugins' PodGroup controller, the
      // status of the PodGroups Coscheduling reads (idle while their CRD is not applied).
      {"podgroup",
       [](const ControllerContext& c) -> std::unique_ptr<Controller> {
         return std::make_unique<PodGroupController>(
             c.rest, c.informers->For("/api/v1/pods", "Pod"),
             c.informers->For(kPodGroupsPath, "PodGroup", /*optional=*/true), c.options);
       }},
  };
  return kRegistry;
}

}  // namespace

SharedInformer* InformerFactory::For(const std::string& path, const std::string& kind,
                                     bool optional) {
  for (auto& [p, informer] : by_path_)
    if (p == path) return informer;
  informers_.push_back(std::make_unique<SharedInformer>(rest_, path, kind, log_, optional));
  by_path_.emplace_back(path, informers_.back().get());
  return informers_.back().get();
}

const std::vector<std::string>& KnownControllers() {
  static const std::vector<std::string> kNames = [] {
    std::vector<std::string> names;
    for (const auto& [name, factory] : Registry()) names.push_back(name);
    return names;
  }();
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
  m->informers_ = std::make_unique<InformerFactory>(m->rest_.get(), options.log);
  ControllerContext context{
      m->rest_.get(), m->informers_.get(),
      ControllerOptions{clock, options.workers, options.log, options.node_monitor_grace_period,
                        options.taint_toleration_comparison_operators,
                        options.terminated_pod_gc_threshold}};
  for (const auto& [name, factory] : Registry()) {
    if (std::find(selected->begin(), selected->end(), name) == selected->end()) continue;
    m->controllers_.push_back(factory(context));
  }
  for (auto& i : m->informers_->all()) i->Start();
  // Workers start once every cache has synced: expectations are empty after a start, and the
  // first syncs must count what exists rather than create it again.
  auto* raw = m.get();
  m->starter_ = std::thread([raw] {
    while (!raw->stopping_) {
      bool synced = true;
      for (auto& i : raw->informers_->all()) synced = synced && i->HasSynced();
      if (synced) {
        for (auto& c : raw->controllers_) c->Start();
        raw->started_ = true;
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
  for (auto& c : controllers_) c->Stop();
  if (informers_)
    for (auto& i : informers_->all()) i->Stop();
}

}  // namespace berth::controllers
