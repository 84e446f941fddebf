// Reloading the configuration: a request handed to the scheduling loop (RequestReload) and
// applied by it between two cycles (ApplyRequestedReload), so the queue, the cache and the
// snapshot stay the loop's alone. What a configuration builds (profiles, extenders, the requeue
// policy) is a Generation; binding cycles, Permit waits and their timers hold the generation
// that scheduled their pod, which lives until the last of them ends.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "scheduler/extenders.h"
#include "scheduler/scheduler_internal.h"

namespace berth {

Result<std::shared_ptr<Scheduler::Generation>> Scheduler::BuildGeneration(
    const config::SchedulerConfiguration& config, std::vector<std::shared_ptr<Extender>> extenders,
    uint64_t number) {
  if (config.profiles.empty()) return Error{"configuration has no profiles"};
  auto gen = std::make_shared<Generation>();
  gen->number = number;
  gen->config = &config;
  gen->owned_extenders = std::move(extenders);
  for (const auto& e : gen->owned_extenders) gen->extenders.push_back(e.get());
  // The first generation's frameworks draw from the scheduler's seed, as before reloads existed.
  FrameworkServices services;
  services.client = client_;
  services.clock = clock_;
  services.parallelizer = parallelizer_.get();
  services.nominator = queue_.get();
  services.seed = seed_ + number;
  services.extenders = gen->extenders;
  services.metrics = metrics_;
  services.log = log_;
  services.activate = [queue = queue_.get()](const Pod& pod) { queue->Activate(pod); };
  services.preemptions_in_flight = preemptions_in_flight_;
  for (const auto& profile : config.profiles) {
    auto fw = Framework::Create(profile, *registry_, services);
    if (!fw.ok()) return fw.error();
    if (gen->by_name.count(profile.scheduler_name))
      return Error{fmt::format("duplicate profile \"{}\"", profile.scheduler_name)};
    gen->by_name[profile.scheduler_name] = fw->get();
    gen->profiles.push_back(std::move(fw).value());
  }
  const std::string qs = gen->profiles.front()->queue_sort_name();
  for (const auto& fw : gen->profiles)
    if (fw->queue_sort_name() != qs)
      return Error{fmt::format(
          "profile \"{}\": queueSort plugin \"{}\" differs from \"{}\"; all profiles must use "
          "the same queue sort plugin",
          fw->profile_name(), fw->queue_sort_name(), qs)};
  // The queue is kept across a reload, ordered as it was.
  if (gen_) {
    const std::string running = gen_->profiles.front()->queue_sort_name();
    if (qs != running)
      return Error{fmt::format(
          "queueSort plugin \"{}\" differs from \"{}\", which orders the running queue; a new "
          "queue sort needs a restart",
          qs, running)};
  }
  gen->requeue = std::make_unique<RequeuePolicy>(gen->profiles, metrics_, clock_);
  return gen;
}

void Scheduler::SwapGeneration(std::shared_ptr<Generation> next, ReloadResult* result) {
  std::shared_ptr<Generation> previous;
  {
    std::lock_guard lock(gen_mu_);
    previous = std::exchange(gen_, next);
    if (previous) {
      retired_.push_back(previous);
      has_retired_ = true;
    }
  }
  config_ = next->config;
  extenders_ = next->extenders;
  extenders_filter_ = AnyExtenderFilters(extenders_);
  extenders_prioritize_ = AnyExtenderPrioritizes(extenders_);
  // Results kept for the old plugins say nothing about the new ones.
  const uint64_t reused = reuse_.reused_verdicts();
  reuse_ = NodeResultReuse();
  reuse_.CountReused(reused);
  reuse_.SetUp(next->profiles, node_local_plugins_, reuse_equivalent_pod_results_);
  // Rankings of the old plugins say nothing about the new ones either.
  batch_ = OpportunisticBatch();
  batch_.SetUp(next->profiles, opportunistic_batching_, !extenders_.empty(), metrics_);
  // Taking the queue's lock (SetRequeueDecider) waits out any comparison by the old plugin.
  queue_sort_.store(&next->profiles.front()->queue_sort(), std::memory_order_release);
  queue_->SetRequeueDecider(next->requeue.get());
  if (!previous || !result) return;

  std::set<std::string, std::less<>> removed;
  for (const auto& [name, fw] : previous->by_name) {
    if (next->by_name.count(name)) {
      result->kept.push_back(name);
    } else {
      result->removed.push_back(name);
      removed.insert(name);
    }
  }
  std::set<std::string, std::less<>> added;
  for (const auto& [name, fw] : next->by_name) {
    if (!previous->by_name.count(name)) {
      result->added.push_back(name);
      added.insert(name);
    }
  }
  // The informers' caches hold every pending pod: those of a removed profile leave the queue
  // (they stay pending for whoever serves their schedulerName), those of a new one join it.
  if (!removed.empty() || !added.empty()) {
    for (const Ptr<Pod>& pod : client_->ListPods()) {
      if (!pod->spec.node_name.empty() || pod->metadata.deletion_timestamp) continue;
      if (removed.count(pod->spec.scheduler_name)) {
        queue_->Delete(*pod);
        result->orphaned_pods.push_back(pod->Key());
      } else if (added.count(pod->spec.scheduler_name) && !cache_.IsAssumedPod(*pod)) {
        queue_->Add(PodInfo::Create(pod));
        ++result->queued_pods;
      }
    }
    std::sort(result->orphaned_pods.begin(), result->orphaned_pods.end());
  }
  // Other plugins may take pods the old ones turned away: everyone is tried again.
  queue_->MoveAllToActiveOrBackoffQueue();
}

void Scheduler::RequestReload(ReloadRequest request) {
  std::optional<ReloadRequest> superseded;
  {
    std::lock_guard lock(reload_mu_);
    superseded = std::exchange(requested_reload_, std::move(request));
    reload_requested_.store(true, std::memory_order_release);
  }
  queue_->Wake();
  if (superseded && superseded->done) {
    ReloadResult r;
    r.superseded = true;
    superseded->done(r);
  }
}

bool Scheduler::ApplyRequestedReload() {
  if (!reload_requested_.load(std::memory_order_acquire)) return false;
  std::optional<ReloadRequest> request;
  {
    std::lock_guard lock(reload_mu_);
    request.swap(requested_reload_);
    reload_requested_.store(false, std::memory_order_relaxed);
  }
  if (!request) return false;
  const TimePoint start = clock_->Now();
  ReloadResult result;
  if (!request->config) {
    result.error = Error{"no configuration"};
  } else {
    auto built =
        BuildGeneration(*request->config, std::move(request->extenders), ++generations_built_);
    if (built.ok()) {
      (*built)->owned_config = request->config;
      SwapGeneration(std::move(built).value(), &result);
    } else {
      result.error = built.error();
    }
  }
  result.duration = clock_->Now() - start;
  if (request->done) request->done(result);
  PruneRetiredGenerations();
  return true;
}

void Scheduler::PruneRetiredGenerations() {
  std::vector<std::shared_ptr<Generation>> unused;
  {
    std::lock_guard lock(gen_mu_);
    // Copies are taken only under this lock or from a holder: one left means none can appear.
    auto end = std::partition(retired_.begin(), retired_.end(),
                              [](const auto& g) { return g.use_count() > 1; });
    std::move(end, retired_.end(), std::back_inserter(unused));
    retired_.erase(end, retired_.end());
    has_retired_ = !retired_.empty();
  }
  // Destroyed here, outside the lock: the plugins' destructors may take locks of their own.
}

std::shared_ptr<const Scheduler::Generation> Scheduler::CurrentGeneration() const {
  std::lock_guard lock(gen_mu_);
  return gen_;
}

std::vector<std::shared_ptr<const Scheduler::Generation>> Scheduler::LiveGenerations() const {
  std::lock_guard lock(gen_mu_);
  std::vector<std::shared_ptr<const Generation>> live(retired_.begin(), retired_.end());
  if (gen_) live.push_back(gen_);
  return live;
}

}  // namespace berth
