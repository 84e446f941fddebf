#include "scheduler/scheduler.h"

#include <fmt/format.h>

#include "framework/guard.h"
#include "framework/preemptions_in_flight.h"
#include "observe/log.h"
#include "scheduler/equivalence.h"
#include "scheduler/extenders.h"
#include "scheduler/fit_error.h"
#include "scheduler/scheduler_internal.h"

namespace berth {
namespace {

std::string UidOf(const Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

constexpr size_t kMaxEventMessage = 1024;

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::Create(const SchedulerOptions& options) {
  std::unique_ptr<Scheduler> s(new Scheduler());
  s->config_ = options.config;
  s->registry_ = options.registry;
  s->seed_ = options.seed;
  s->node_local_plugins_ = options.node_local_plugins;
  s->reuse_equivalent_pod_results_ = options.reuse_equivalent_pod_results;
  s->client_ = options.client;
  s->clock_ = options.clock;
  s->inline_binding_ = options.inline_binding;
  s->nominate_before_binding_ = options.nominate_before_binding;
  s->pod_group_cycles_ = options.pod_group_cycles;
  s->opportunistic_batching_ = options.opportunistic_batching;
  s->record_details_ = options.record_details;
  s->detail_nodes_ = options.detail_nodes;
  s->metrics_ = options.metrics;
  s->log_ = options.log;
  s->random_ = Mt19937_64(options.seed);
  s->metrics_random_ = Random(options.seed ^ 0x9e3779b97f4a7c15ULL);
  s->parallelizer_ = std::make_unique<ThreadPoolParallelizer>(options.config->parallelism);
  s->preemptions_in_flight_ = std::make_shared<preemption::PreemptionsInFlight>(options.client);
  if (!options.inline_binding) {
    const int core = std::max(1, options.binding_threads);
    s->binding_executor_ = std::make_unique<BindingExecutor>(2 * core, core);
    s->permit_timer_ = std::make_unique<DeadlineTimer>(*options.clock);
  }

  // The queue needs the QueueSort of the profiles (identical in all of them) and each pod's
  // profile's PreEnqueue plugins; both are known once the profiles exist. PreEnqueue runs on
  // whichever thread feeds the queue, so it reads the profiles in use under their lock.
  Scheduler* self = s.get();
  s->queue_ = std::make_unique<SchedulingQueue>(
      [self](const QueuedPodInfo& a, const QueuedPodInfo& b) {
        return self->queue_sort_.load(std::memory_order_acquire)->Less(a, b);
      },
      [self](const Pod& pod) {
        const std::shared_ptr<const Generation> gen = self->CurrentGeneration();
        Framework* fw = gen->ProfileFor(pod);
        return fw ? fw->RunPreEnqueuePlugins(pod) : Status::Success();
      },
      options.clock, std::chrono::seconds(options.config->pod_initial_backoff_seconds),
      std::chrono::seconds(options.config->pod_max_backoff_seconds));
  s->queue_->SetPopFromBackoffQ(options.pop_from_backoff_q);

  auto gen = s->BuildGeneration(*options.config, options.extenders, 0);
  if (!gen.ok()) return gen.error();
  s->SwapGeneration(std::move(gen).value(), nullptr);
  if (SchedulerMetricsSink* metrics = options.metrics) {
    s->queue_->SetIncomingPodHook([metrics](std::string_view queue, std::string_view event) {
      metrics->IncomingPod(queue, event);
    });
  }
  return s;
}

Scheduler::~Scheduler() {
  queue_->Close();
  // Stopping with a backlog: pods not bound yet are forgotten rather than bound, so a daemon
  // stops within the kubelet's grace period; the next leader (or the next start) schedules them
  // again. Binds already sent finish. Pods waiting at Permit are let go the same way, under
  // whichever configuration scheduled them.
  stopping_.store(true);
  for (const auto& gen : LiveGenerations())
    for (const auto& fw : gen->profiles)
      fw->IterateOverWaitingPods([](WaitingPod& w) { w.Reject("", "the scheduler is stopping"); });
  permit_timer_.reset();
  // Drains the binding cycles in flight before the frameworks they use go away.
  binding_executor_.reset();
}

Framework* Scheduler::ProfileFor(const Pod& pod) const { return gen_->ProfileFor(pod); }

const std::vector<std::unique_ptr<Framework>>& Scheduler::profiles() const {
  return gen_->profiles;
}

void Scheduler::Report(const SchedulingAttempt& attempt) {
  std::lock_guard lock(observer_mu_);
  if (observer_) observer_->OnAttempt(attempt);
}

// ---------------------------------------------------------------- scheduling cycle

bool Scheduler::ScheduleOne(bool block) {
  // Between two cycles: a configuration the loop was asked to switch to.
  if (has_retired_) PruneRetiredGenerations();
  ApplyRequestedReload();
  auto popped = queue_->Pop(block);
  if (!popped) return false;
  QueuedPodInfo qpi = std::move(*popped);
  const Pod& pod = qpi.pod();
  Framework* fw = ProfileFor(pod);
  if (!fw || pod.metadata.deletion_timestamp || cache_.IsAssumedPod(pod)) {
    queue_->Done(UidOf(pod));
    return true;
  }
  if (pod_group_cycles_ && pod.spec.scheduling_group) {
    ScheduleGroup(std::move(qpi));  // pod_group_cycle.cc
    return true;
  }
  SchedulingAttempt attempt = StartAttempt(*fw, qpi);
  CycleState state;
  if (metrics_)
    state.SetRecordPluginMetrics(metrics_random_.Intn(100) < kPluginMetricsSamplePercent);
  ScheduleResult result;
  Status s = Guarded("scheduling cycle",
                     [&] { return SchedulePod(*fw, state, *qpi.pod_info, &result, &attempt); });
  attempt.algorithm_duration = clock_->Now() - attempt.cycle_start;
  if (!s.IsSuccess()) {
    FailSchedulingCycle(*fw, state, qpi, s, attempt);
    return true;
  }
  CommitPlacement(*fw, std::move(qpi), std::move(state), std::move(attempt), result.host);
  return true;
}

// The placement a cycle found becomes the pod's: assumed in the cache, reserved, permitted and
// handed to the binding cycle; a failure there undoes it and requeues the pod.
void Scheduler::CommitPlacement(Framework& fw_ref, QueuedPodInfo qpi, CycleState state,
                                SchedulingAttempt attempt, const std::string& host) {
  Framework* fw = &fw_ref;
  const Pod& pod = qpi.pod();
  ScheduleResult result{host};
  // Assume: the pod occupies the node in the cache from now on, before the bind completes.
  auto assumed_pod = std::make_shared<Pod>(pod);
  assumed_pod->spec.node_name = result.host;
  PodInfoPtr assumed = PodInfo::Create(assumed_pod);
  if (auto r = cache_.AssumePod(assumed); !r.ok()) {
    attempt.outcome = SchedulingAttempt::Outcome::kError;
    attempt.message = r.error().message;
    HandleFailure(*fw, qpi, Status::Error(r.error().message), NominatingInfo{"", true}, attempt);
    return;
  }
  queue_->DeleteNominatedPodIfExists(pod);
  if (record_details_) attempt.selected_node = result.host;

  auto fail_after_assume = [&](Status st) {
    TimedVoid(*fw, "Unreserve",
              [&] { fw->RunReservePluginsUnreserve(state, *assumed, result.host); });
    if (VoidResult forgot = cache_.ForgetPod(*assumed_pod); !forgot.ok() && log_)
      log_->Error(
          "Scheduler cache ForgetPod failed",
          {observe::KV::Str("pod", pod.Key()), observe::KV::Str("err", forgot.error().message)});
    if (st.IsRejected()) {
      NodeStatusMap one;
      one[result.host] = st;
      attempt.filter_statuses = one;
      attempt.filter_reason_counts = ReasonCounts(one);
      attempt.message = FitErrorMessage(1, nullptr, one, {});
      attempt.outcome = SchedulingAttempt::Outcome::kUnschedulable;
      qpi.unschedulable_plugins.insert(st.plugin());
    } else {
      attempt.message = st.Message();
      attempt.outcome = SchedulingAttempt::Outcome::kError;
    }
    HandleFailure(*fw, qpi, st, NominatingInfo{"", true}, attempt);
  };

  if (Status rs = Timed(*fw, "Reserve",
                        [&] {
                          return Guarded("Reserve", [&] {
                            return fw->RunReservePluginsReserve(
                                state, *assumed, result.host,
                                record_details_ ? &attempt.reserve_outcomes : nullptr);
                          });
                        });
      !rs.IsSuccess()) {
    fail_after_assume(rs);
    return;
  }
  Status ps = Timed(*fw, "Permit", [&] {
    return Guarded("Permit", [&] {
      return fw->RunPermitPlugins(state, *assumed, result.host,
                                  record_details_ ? &attempt.permit_outcomes : nullptr);
    });
  });
  if (!ps.IsSuccess() && !ps.IsWait()) {
    fail_after_assume(ps);
    return;
  }

  auto task = std::make_unique<BindingTask>();
  task->fw = fw;
  task->generation = gen_;
  task->state = std::move(state);
  task->qpi = std::move(qpi);
  task->assumed = assumed;
  task->host = result.host;
  task->attempt = std::move(attempt);
  StartBindingCycle(std::move(task), ps.IsWait());
}

SchedulingAttempt Scheduler::StartAttempt(const Framework& fw, const QueuedPodInfo& qpi) {
  SchedulingAttempt attempt;
  attempt.pod = qpi.pod_info->pod;
  attempt.profile = fw.profile_name();
  attempt.attempt = qpi.attempts;
  attempt.cycle_start = clock_->Now();
  attempt.initial_attempt_timestamp = qpi.initial_attempt_timestamp;
  if (record_details_) {
    attempt.filter_plugins = fw.ListPlugins("Filter");
    for (const auto& e : fw.score_plugins()) {
      attempt.score_plugins.emplace_back(e.plugin->Name());
      attempt.score_weights.push_back(e.weight);
    }
  }
  return attempt;
}

// The attempt found no node (a FitError: PostFilter may preempt for a later attempt) or
// failed: records why and hands the pod back to the queue.
void Scheduler::FailSchedulingCycle(Framework& fw, CycleState& state, QueuedPodInfo& qpi,
                                    const Status& s, SchedulingAttempt& attempt) {
  std::optional<NominatingInfo> nominating;
  if (s.IsRejected() && s.reasons().empty()) {
    // FitError: no feasible node. PostFilter (preemption) may make room for a later attempt.
    NoteRejectingPlugins(qpi, attempt);
    std::vector<std::string> post_messages;
    if (fw.HasPostFilterPlugins()) {
      // PostFilter sees every node: after a PreFilter rejection all carry that status.
      NodeStatusMap all_statuses;
      const NodeStatusMap* statuses = &attempt.filter_statuses;
      if (attempt.pre_filter_rejection) {
        for (const NodeInfo* ni : snapshot_.nodes())
          all_statuses[ni->name()] = *attempt.pre_filter_rejection;
        statuses = &all_statuses;
      }
      PostFilterResult pf;
      Status ps = Timed(fw, "PostFilter", [&] {
        return Guarded("PostFilter", [&] {
          return fw.RunPostFilterPlugins(state, *qpi.pod_info, *statuses, &pf, &post_messages,
                                         record_details_ ? &attempt.post_filter_outcomes : nullptr);
        });
      });
      if (ps.IsSuccess()) post_messages.clear();
      nominating = pf.nominating;
      attempt.victims = pf.victims;
    }
    attempt.nominating = nominating;
    attempt.message =
        FitErrorMessage(static_cast<int>(snapshot_.size()),
                        attempt.pre_filter_rejection ? &*attempt.pre_filter_rejection : nullptr,
                        attempt.filter_statuses, post_messages);
    attempt.outcome = SchedulingAttempt::Outcome::kUnschedulable;
    if (!attempt.pre_filter_rejection) {
      attempt.filter_reason_counts = ReasonCounts(attempt.filter_statuses);
    }
    if (!record_details_) attempt.filter_statuses.clear();
    HandleFailure(fw, qpi, Status(Code::kUnschedulable, attempt.message), nominating, attempt);
  } else {
    attempt.outcome = s.IsRejected() ? SchedulingAttempt::Outcome::kUnschedulable
                                     : SchedulingAttempt::Outcome::kError;
    attempt.message = s.Message();
    if (s.IsRejected()) qpi.unschedulable_plugins.insert(s.plugin().empty() ? "" : s.plugin());
    HandleFailure(fw, qpi, s, NominatingInfo{"", true}, attempt);
  }
}

void Scheduler::NoteRejectingPlugins(QueuedPodInfo& qpi, SchedulingAttempt& attempt) {
  AddDeferredRejections(&attempt);
  AddOutsideNodeStatuses(&attempt);
  for (const auto& [node, st] : attempt.filter_statuses) {
    if (st.code() == Code::kPending) {
      qpi.pending_plugins.insert(st.plugin());
    } else {
      qpi.unschedulable_plugins.insert(st.plugin());
    }
  }
  if (attempt.pre_filter_rejection)
    qpi.unschedulable_plugins.insert(attempt.pre_filter_rejection->plugin());
  if (attempt.rejected_by_extender)
    qpi.unschedulable_plugins.insert(std::string(kExtenderRejection));
}

// Runs the binding cycle of a reserved and permitted pod: inline (simulation), or on the
// binding executor; a pod that waits at Permit holds no thread until the wait is decided.
void Scheduler::StartBindingCycle(std::unique_ptr<BindingTask> task, bool waits) {
  Framework* fw = task->fw;
  const PodInfoPtr assumed = task->assumed;
  if (nominate_before_binding_) {
    // As kube-scheduler: a pod that will take a while to bind (it waits at Permit, or PreBind
    // has work) shows where it is going. The write is queued; a failure only costs the hint.
    Status flight = fw->RunPreBindPreFlights(task->state, *assumed, task->host);
    if (!flight.IsSuccess() && !flight.IsSkip()) {
      task->preflight_failure = std::move(flight);
    } else if ((flight.IsSuccess() || waits) && client_) {
      if (VoidResult r = client_->SetNominatedNodeName(*assumed->pod, task->host);
          !r.ok() && log_) {
        log_->Info("Failed to record the nominated node before binding",
                   {observe::KV::Str("pod", assumed->pod->Key()),
                    observe::KV::Str("err", r.error().message)});
      }
    }
  }
  if (inline_binding_) {
    if (waits) {
      waiting_bindings_.push_back(std::move(task));
    } else {
      RunBindingCycle(std::move(task));
    }
  } else if (waits) {
    // The pod waits at Permit holding no thread: the rest of its binding cycle is submitted
    // once the wait is decided, by an Allow or Reject from any thread, or by the timer at its
    // deadline. It counts as a binding cycle meanwhile.
    binding_cycles_running_.fetch_add(1, std::memory_order_relaxed);
    BindingTask* raw = task.release();
    std::shared_ptr<const Pod> held = assumed->pod;
    std::shared_ptr<const Generation> generation = raw->generation;  // fw, for the timer
    // The wait's count is given up only after the rest of the cycle has run, so the count
    // never reads zero while the pod is still assumed.
    std::optional<TimePoint> deadline = fw->OnPermitDecided(*held, [this, raw] {
      binding_executor_->Submit([this, raw] {
        RunBindingCycle(std::unique_ptr<BindingTask>(raw));
        binding_cycles_running_.fetch_sub(1, std::memory_order_relaxed);
      });
    });
    if (deadline)
      permit_timer_->At(*deadline, [fw, held, generation] { fw->ExpireWaitingPod(*held); });
  } else {
    BindingTask* raw = task.release();
    binding_executor_->Submit([this, raw] { RunBindingCycle(std::unique_ptr<BindingTask>(raw)); });
  }
}

// ---------------------------------------------------------------- binding cycle

void Scheduler::RunBindingCycle(std::unique_ptr<BindingTask> task) {
  binding_cycles_running_.fetch_add(1, std::memory_order_relaxed);
  struct Ended {
    std::atomic<int>& running;
    ~Ended() { running.fetch_sub(1, std::memory_order_relaxed); }
  } ended{binding_cycles_running_};
  Framework& fw = *task->fw;
  const Pod& pod = *task->assumed->pod;
  auto fail = [&](Status st) {
    TimedVoid(fw, "Unreserve",
              [&] { fw.RunReservePluginsUnreserve(task->state, *task->assumed, task->host); });
    // The resources the assumed pod held are free again: like an assigned pod's deletion. As in
    // kube-scheduler, a rejected pod is requeued before that move and is not moved by it (it
    // waits for a change of its own); after an error it is retried with everyone else.
    const bool forgotten = cache_.ForgetPod(pod).ok();
    const ClusterEvent freed{EventResource::kPod, kDelete};
    if (forgotten && !st.IsRejected()) Requeue(freed, task->assumed->pod, {});
    SchedulingAttempt& attempt = task->attempt;
    if (st.IsRejected()) {
      NodeStatusMap one;
      one[task->host] = st;
      attempt.filter_statuses = one;
      attempt.filter_reason_counts = ReasonCounts(one);
      attempt.message = FitErrorMessage(1, nullptr, one, {});
      attempt.outcome = SchedulingAttempt::Outcome::kUnschedulable;
      task->qpi.unschedulable_plugins.insert(st.plugin());
    } else {
      attempt.message = st.Message();
      attempt.outcome = SchedulingAttempt::Outcome::kError;
    }
    HandleFailure(fw, task->qpi, st, NominatingInfo{"", true}, attempt);
    if (forgotten && st.IsRejected()) Requeue(freed, task->assumed->pod, {}, UidOf(pod));
  };

  // The scheduler is stopping: the pod is forgotten (its resources freed in the cache), not
  // bound, requeued or reported.
  auto abandon = [&] {
    TimedVoid(fw, "Unreserve",
              [&] { fw.RunReservePluginsUnreserve(task->state, *task->assumed, task->host); });
    (void)cache_.ForgetPod(pod);
  };
  if (stopping_.load()) return abandon();
  if (Status ws = fw.WaitOnPermit(pod); !ws.IsSuccess())
    return stopping_.load() ? abandon() : fail(ws);
  if (stopping_.load()) return abandon();
  if (task->preflight_failure) return fail(*task->preflight_failure);
  queue_->Done(UidOf(pod));
  if (Status pb = Timed(fw, "PreBind",
                        [&] {
                          return Guarded("PreBind", [&] {
                            return fw.RunPreBindPlugins(
                                task->state, *task->assumed, task->host,
                                record_details_ ? &task->attempt.pre_bind_outcomes : nullptr);
                          });
                        });
      !pb.IsSuccess())
    return fail(pb);
  // An interested binder extender binds instead of the Bind plugins.
  std::optional<Status> by_extender =
      BindWithExtenders(task->generation->extenders, pod, task->host);
  Status bs = by_extender ? std::move(*by_extender) : Timed(fw, "Bind", [&] {
    return Guarded("Bind", [&] {
      return fw.RunBindPlugins(task->state, *task->assumed, task->host,
                               record_details_ ? &task->attempt.bind_outcomes : nullptr);
    });
  });
  cache_.FinishBinding(pod);
  if (!bs.IsSuccess()) {
    if (bs.IsSkip()) bs = Status::Error("no bind plugin handled the pod");
    return fail(bs);
  }
  TimedVoid(fw, "PostBind", [&] {
    // PostBind is informational: a plugin that throws there changes nothing (Guarded keeps it
    // from unwinding the binding thread).
    const Status guarded = Guarded("PostBind", [&] {
      fw.RunPostBindPlugins(task->state, *task->assumed, task->host);
      return Status::Success();
    });
    if (!guarded.IsSuccess() && log_)
      log_->Error("PostBind failed",
                  {observe::KV::Str("pod", pod.Key()), observe::KV::Str("err", guarded.Message())});
  });
  task->attempt.outcome = SchedulingAttempt::Outcome::kScheduled;
  task->attempt.node = task->host;
  Report(task->attempt);
}

int Scheduler::CompleteWaitingBindings() {
  for (const auto& gen : LiveGenerations())
    for (const auto& fw : gen->profiles) fw->ExpireWaitingPods();
  int done = 0;
  for (size_t i = 0; i < waiting_bindings_.size();) {
    BindingTask& t = *waiting_bindings_[i];
    // Rejected and timed-out pods still list their waiting plugins; they are decided too.
    if (t.fw->IsWaitingOnPermit(UidOf(*t.assumed->pod))) {
      ++i;
      continue;
    }
    auto task = std::move(waiting_bindings_[i]);
    waiting_bindings_.erase(waiting_bindings_.begin() + static_cast<long>(i));
    RunBindingCycle(std::move(task));
    ++done;
  }
  return done;
}

bool Scheduler::HasWaitingBindings() const { return !waiting_bindings_.empty(); }

// ---------------------------------------------------------------- failures

void Scheduler::HandleFailure(Framework& /*fw*/, QueuedPodInfo& qpi, const Status& status,
                              const std::optional<NominatingInfo>& nominating,
                              SchedulingAttempt& attempt) {
  const Pod& pod = qpi.pod();
  // The pod may have been bound or deleted meanwhile; requeue only a live, unbound pod.
  Ptr<Pod> live = client_->GetPod(pod.metadata.namespace_, pod.metadata.name);
  if (live && live->spec.node_name.empty()) {
    qpi.pod_info = PodInfo::Create(live);
    queue_->AddUnschedulableIfNotPresent(qpi, queue_->scheduling_cycle());
  } else {
    queue_->Done(UidOf(pod));
  }
  std::string nominated = pod.status.nominated_node_name;
  if (nominating && nominating->override_nomination) nominated = nominating->node_name;
  if (!nominated.empty()) {
    queue_->AddNominatedPod(live ? PodInfo::Create(live) : qpi.pod_info, nominated);
  } else {
    queue_->DeleteNominatedPodIfExists(pod);
  }
  if (live) {
    std::string msg = status.Message();
    PodCondition cond{"PodScheduled", "False",
                      status.IsRejected() ? "Unschedulable" : "SchedulerError", msg};
    if (cond.message.size() > kMaxEventMessage)
      cond.message = cond.message.substr(0, kMaxEventMessage - 4) + " ...";
    // The daemon's writer queues both (off this thread) and logs what fails there; what fails
    // here (the in-memory twin, a full queue) is logged too.
    if (VoidResult r = client_->SetPodScheduledCondition(*live, cond); !r.ok())
      LogFailedWrite("updating the PodScheduled condition of", *live, r.error());
    if (nominating && nominating->override_nomination &&
        live->status.nominated_node_name != nominating->node_name) {
      if (VoidResult r = client_->SetNominatedNodeName(*live, nominating->node_name); !r.ok())
        LogFailedWrite("setting nominatedNodeName of", *live, r.error());
    }
  }
  Report(attempt);
}

void Scheduler::LogFailedWrite(std::string_view what, const Pod& pod, const Error& error) {
  // A pod deleted meanwhile needs no status: not worth an error line.
  if (!log_ || error.code == ErrorCode::kNotFound) return;
  log_->Error("Error updating pod",
              {observe::KV::Str("pod", pod.Key()), observe::KV::Str("what", what),
               observe::KV::Str("err", error.message)});
}

// ---------------------------------------------------------------- events

void Scheduler::Requeue(const ClusterEvent& event, const EventObject& old_object,
                        const EventObject& new_object, std::string_view except_uid) {
  // Nobody registered: no pod can be helped, and the pool need not be scanned (the in-flight
  // replay would find nothing either).
  if (!CurrentGeneration()->requeue->AnyInterest(event)) return;
  queue_->OnClusterEvent(event, old_object, new_object, except_uid);
}

void Scheduler::OnPodAdd(const Ptr<Pod>& pod) {
  if (!pod->spec.node_name.empty()) {
    Handled("AssignedPodAdd", [&] {
      cache_.AddPod(pod);
      Requeue({EventResource::kPod, kAdd}, {}, pod);
    });
    return;
  }
  Handled("UnscheduledPodAdd", [&] {
    const std::shared_ptr<const Generation> gen = CurrentGeneration();
    if (gen->ProfileFor(*pod) && !pod->metadata.deletion_timestamp)
      queue_->Add(PodInfo::Create(pod));
    // A gang's members wait for the last one to appear; nobody else asks for these events,
    // which a burst of pending pods would otherwise spend on scanning the pool.
    const ClusterEvent added{EventResource::kUnscheduledPod, kAdd};
    if (gen->requeue->NamedInterest(added)) Requeue(added, {}, pod);
  });
}

void Scheduler::OnPodUpdate(const Ptr<Pod>& old_pod, const Ptr<Pod>& new_pod) {
  const bool was_assigned = !old_pod->spec.node_name.empty();
  const bool is_assigned = !new_pod->spec.node_name.empty();
  if (is_assigned) {
    if (was_assigned) {
      Handled("AssignedPodUpdate", [&] {
        cache_.UpdatePod(old_pod, new_pod);
        Requeue({EventResource::kPod, AssignedPodUpdateActions(*old_pod, *new_pod)}, old_pod,
                new_pod);
      });
    } else {
      // Bound: it leaves the queue and joins (or confirms) the cache; for everyone else an
      // assigned pod appeared.
      Handled("AssignedPodAdd", [&] {
        queue_->Delete(*old_pod);
        cache_.AddPod(new_pod);
        Requeue({EventResource::kPod, kAdd}, {}, new_pod);
      });
    }
    return;
  }
  Handled("UnscheduledPodUpdate", [&] {
    // An assumed pod is in its binding cycle (a status write such as the nomination before
    // binding): queueing it again would schedule it twice, as kube-scheduler's handler knows.
    if (cache_.IsAssumedPod(*new_pod)) return;
    if (CurrentGeneration()->ProfileFor(*new_pod)) queue_->Update(PodInfo::Create(new_pod));
  });
}

void Scheduler::OnPodDelete(const Ptr<Pod>& pod) {
  if (!pod->spec.node_name.empty()) {
    Handled("AssignedPodDelete", [&] {
      cache_.RemovePod(*pod);
      queue_->DeleteNominatedPodIfExists(*pod);
      Requeue({EventResource::kPod, kDelete}, pod, {});
    });
    return;
  }
  Handled("UnscheduledPodDelete", [&] {
    queue_->Delete(*pod);
    for (const auto& gen : LiveGenerations())
      for (const auto& fw : gen->profiles) fw->RejectWaitingPod(pod->metadata.uid);
    // A nominated pod held room on its node for filtering.
    if (!pod->status.nominated_node_name.empty()) Requeue({EventResource::kPod, kDelete}, pod, {});
  });
}

void Scheduler::OnNodeAdd(const Ptr<Node>& node) {
  Handled("NodeAdd", [&] {
    cache_.AddNode(node);
    Requeue({EventResource::kNode, kAdd}, {}, node);
  });
}

void Scheduler::OnNodeUpdate(const Ptr<Node>& old_node, const Ptr<Node>& new_node) {
  Handled("NodeUpdate", [&] {
    cache_.UpdateNode(new_node);
    // A kubelet's status heartbeat changes nothing a plugin reads: no event.
    if (const uint32_t actions = NodeUpdateActions(*old_node, *new_node); actions != 0)
      Requeue({EventResource::kNode, actions}, old_node, new_node);
  });
}

void Scheduler::OnNodeDelete(const Ptr<Node>& node) {
  Handled("NodeDelete", [&] {
    cache_.RemoveNode(*node);
    Requeue({EventResource::kNode, kDelete}, node, {});
  });
}

void Scheduler::OnObjectEvent(const ClusterEvent& event, const EventObject& old_object,
                              const EventObject& new_object) {
  if (!metrics_) return Requeue(event, old_object, new_object);
  Handled(EventLabel(event), [&] { Requeue(event, old_object, new_object); });
}

void Scheduler::OnDraEvent(const DraClusterEvent& event, const DraEventObject& old_object,
                           const DraEventObject& new_object) {
  static constexpr std::string_view kLabels[] = {"ResourceClaimChange", "ResourceSliceChange",
                                                 "DeviceClassChange"};
  const std::string_view label = kLabels[static_cast<int>(event.resource)];
  auto requeue = [&] {
    const std::shared_ptr<const Generation> gen = CurrentGeneration();
    if (!gen->requeue->AnyDraInterest(event)) return;
    queue_->OnOtherEvent(label, [&](const QueuedPodInfo& pod) {
      return gen->requeue->DecideDra(pod, event, old_object, new_object);
    });
  };
  if (!metrics_) return requeue();
  Handled(label, requeue);
}

void Scheduler::OnVolumeAttachmentDelete(const VolumeAttachmentInfo& deleted) {
  constexpr std::string_view kLabel = "VolumeAttachmentDelete";
  auto requeue = [&] {
    const std::shared_ptr<const Generation> gen = CurrentGeneration();
    if (!gen->requeue->AnyVolumeAttachmentInterest()) return;
    queue_->OnOtherEvent(kLabel, [&](const QueuedPodInfo& pod) {
      return gen->requeue->DecideVolumeAttachmentDelete(pod, deleted);
    });
  };
  if (!metrics_) return requeue();
  Handled(kLabel, requeue);
}

}  // namespace berth
