#include "plugins/defaultpreemption/plugin.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "config/plugin_args_codec.h"
#include "framework/detached_services.h"

namespace berth {

using preemption::Candidate;
using preemption::CompiledPdb;
using preemption::Victims;

namespace {

constexpr std::string_view kNoVictimsReason = "No preemption victims found for incoming pod";
constexpr std::string_view kNotHelpfulReason = "Preemption is not helpful for scheduling";

bool ByImportance(const PodInfoPtr& a, const PodInfoPtr& b) {
  return preemption::MoreImportantPod(*a->pod, *b->pod);
}

// A pod already being deleted because the scheduler preempted it (its DisruptionTarget
// condition says so); other terminating pods do not hold back a new preemption.
bool TerminatingByPreemption(const Pod& pod) {
  if (!pod.metadata.deletion_timestamp) return false;
  for (const auto& c : pod.status.conditions) {
    if (c.type == "DisruptionTarget")
      return c.status == "True" && c.reason == "PreemptionByScheduler";
  }
  return false;
}

// The FitError text of a preemption that found no candidate: dry-run failures by reason, and
// every node that was not dry-run counted as not helped by preemption.
std::string NoCandidateMessage(size_t num_all_nodes, const NodeStatusMap& statuses) {
  std::map<std::string, size_t> counts;
  for (const auto& [node, status] : statuses)
    for (const auto& reason : status.reasons()) ++counts[reason];
  if (statuses.size() < num_all_nodes)
    counts[std::string(kNotHelpfulReason)] += num_all_nodes - statuses.size();
  std::vector<std::string> entries;
  entries.reserve(counts.size());
  for (const auto& [reason, n] : counts) entries.push_back(fmt::format("{} {}", n, reason));
  // kube-scheduler sorts the entries as whole strings ("10 x" before "2 y").
  std::sort(entries.begin(), entries.end());
  std::string msg = fmt::format("0/{} nodes are available:", num_all_nodes);
  if (!entries.empty()) msg += fmt::format(" {}.", fmt::join(entries, ", "));
  return msg;
}

// Several errors read as one, duplicates dropped: "msg" or "[msg1, msg2]".
std::string AggregateErrors(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return errors.front();
  std::vector<std::string> unique;
  std::set<std::string_view> seen;
  for (const auto& e : errors)
    if (seen.insert(e).second) unique.push_back(e);
  if (unique.size() == 1) return unique.front();
  return fmt::format("[{}]", fmt::join(unique, ", "));
}

}  // namespace

DefaultPreemption::DefaultPreemption(Handle& handle, const config::DefaultPreemptionArgs& args,
                                     bool async_preemption)
    : handle_(handle), args_(args) {
  if (!async_preemption) return;
  // The scheduler's table, which outlives this profile: a reload's new instance must still
  // gate the preemptors whose deletions this one started.
  in_flight_ = DetachedFrom(handle_).preemptions_in_flight;
  if (!in_flight_)
    in_flight_ = std::make_shared<preemption::PreemptionsInFlight>(&handle_.listers());
}

bool DefaultPreemption::IsPodRunningPreemption(const Pod& pod) const {
  return in_flight_ && in_flight_->IsRunning(preemption::PreemptionsInFlight::KeyOf(pod));
}

Status DefaultPreemption::PreEnqueue(const Pod& pod) const {
  if (!IsPodRunningPreemption(pod)) return Status::Success();
  return Status::Unresolvable("waiting for the preemption for this pod to be finished");
}

std::vector<ClusterEventWithHint> DefaultPreemption::EventsToRegister() const {
  if (!in_flight_) return {};
  return {{ClusterEvent{EventResource::kPod, kDelete}, {}}};
}

Status DefaultPreemption::PostFilter(CycleState& state, const PodInfo& pod,
                                     const NodeStatusMap& filtered_statuses,
                                     PostFilterResult* result) {
  Status s = Preempt(state, pod, filtered_statuses, result);
  if (s.IsSuccess()) return s;
  std::string msg = s.Message();
  if (msg.empty()) return s;
  return Status(s.code(), "preemption: " + msg);
}

Status DefaultPreemption::Preempt(CycleState& state, const PodInfo& pod,
                                  const NodeStatusMap& filtered_statuses,
                                  PostFilterResult* result) {
  // The queued copy may predate a nomination or deletion; decide on the stored object.
  const Pod& queued = *pod.pod;
  Ptr<Pod> latest = handle_.listers().GetPod(queued.metadata.namespace_, queued.metadata.name);
  if (!latest) return Status::Error(fmt::format("pod \"{}\" not found", queued.metadata.name));

  std::string reason;
  if (!PodEligibleToPreemptOthers(*latest, filtered_statuses, &reason))
    return Status::Unschedulable(std::move(reason));

  const std::vector<const NodeInfo*>& all_nodes = handle_.snapshot().nodes();
  if (all_nodes.empty()) return Status::Error("no nodes available");

  // Only nodes rejected as plainly Unschedulable might be helped by removing pods.
  std::vector<const NodeInfo*> potential;
  for (const NodeInfo* ni : all_nodes) {
    auto it = filtered_statuses.find(ni->name());
    if (it != filtered_statuses.end() && it->second.code() == Code::kUnschedulable)
      potential.push_back(ni);
  }

  DryRunResult dry_run;
  if (!potential.empty()) {
    const std::vector<CompiledPdb> pdbs = preemption::CompilePdbs(handle_.listers().ListPDBs());
    auto [offset, num_candidates] =
        GetOffsetAndNumCandidates(static_cast<int32_t>(potential.size()));
    dry_run = DryRunPreemption(state, pod, potential, pdbs, offset, num_candidates);
    if (dry_run.candidates.empty() && !dry_run.errors.empty())
      return Status::Error(AggregateErrors(dry_run.errors));
  }
  if (dry_run.candidates.empty()) {
    result->nominating = NominatingInfo{"", true};
    return Status::Unschedulable(NoCandidateMessage(all_nodes.size(), dry_run.statuses));
  }

  auto narrowed = preemption::CallExtenders(handle_.extenders(), *latest,
                                            std::move(dry_run.candidates), handle_.snapshot());
  if (!narrowed.ok()) return Status::Error(narrowed.error().message);
  const std::vector<Candidate>& candidates = *narrowed;

  const int best = preemption::PickOneNodeForPreemption(candidates);
  if (best < 0 || candidates[best].node_name.empty())
    return Status::Unschedulable("no candidate node for preemption");
  const Candidate& chosen = candidates[best];

  Status prepared = PrepareCandidate(chosen, *latest);
  if (!prepared.IsSuccess()) return prepared;

  result->nominating = NominatingInfo{chosen.node_name, true};
  result->victims.clear();
  result->victims.reserve(chosen.victims.pods.size());
  for (const auto& v : chosen.victims.pods) result->victims.push_back(v->pod->Key());
  return Status::Success();
}

bool DefaultPreemption::PodEligibleToPreemptOthers(const Pod& pod, const NodeStatusMap& statuses,
                                                   std::string* reason) const {
  if (pod.spec.preemption_policy == "Never") {
    *reason = "not eligible due to preemptionPolicy=Never.";
    return false;
  }
  const std::string& nominated = pod.status.nominated_node_name;
  if (nominated.empty()) return true;
  // A nominated node that the filters now reject for good is no reason to wait: preempt again.
  auto it = statuses.find(nominated);
  if (it == statuses.end() || it->second.code() == Code::kUnschedulableAndUnresolvable) return true;
  if (const NodeInfo* ni = handle_.snapshot().Get(nominated)) {
    const int32_t priority = pod.Priority();
    for (const auto& p : ni->pods()) {
      if (p->pod->Priority() < priority && TerminatingByPreemption(*p->pod)) {
        *reason = "not eligible due to a terminating pod on the nominated node.";
        return false;
      }
    }
  }
  return true;
}

std::pair<int32_t, int32_t> DefaultPreemption::GetOffsetAndNumCandidates(int32_t num_nodes) {
  const auto offset = static_cast<int32_t>(handle_.random().Intn(num_nodes));
  return {offset,
          preemption::CalculateNumCandidates(num_nodes, args_.min_candidate_nodes_percentage,
                                             args_.min_candidate_nodes_absolute)};
}

DefaultPreemption::DryRunResult DefaultPreemption::DryRunPreemption(
    const CycleState& state, const PodInfo& pod, std::span<const NodeInfo* const> potential,
    std::span<const CompiledPdb> pdbs, int32_t offset, int32_t num_candidates) {
  DryRunResult out;
  const int n = static_cast<int>(potential.size());
  if (n == 0) return out;
  const size_t cap = static_cast<size_t>(std::max(num_candidates, 0));

  struct Outcome {
    Status status;
    Victims victims;
  };
  std::vector<Outcome> outcomes;
  std::vector<Candidate> violating;
  Parallelizer& par = handle_.parallelizer();
  // A batch large enough to fill the remaining quota in one parallel pass, and never smaller
  // than the number of workers. With one worker this is exactly a node-at-a-time evaluation.
  const int min_batch = std::max(1, par.parallelism());

  int processed = 0;
  bool done = false;
  while (!done && processed < n) {
    const int found = static_cast<int>(out.candidates.size() + violating.size());
    const int wanted = std::max(1, num_candidates - found);
    const int batch = std::min(n - processed, std::max(wanted, min_batch));
    outcomes.assign(batch, Outcome{});
    const int base = offset + processed;
    par.Until(batch, [&](int j) {
      const NodeInfo& src = *potential[(base + j) % n];
      NodeInfo node_copy = src;
      CycleState state_copy = state.Clone();
      Outcome& o = outcomes[j];
      o.status = SelectVictimsOnNode(state_copy, pod, node_copy, pdbs, &o.victims);
      if (o.status.IsSuccess() && o.victims.pods.empty())
        o.status = Status::Error(
            fmt::format("expected at least one victim pod on node \"{}\"", src.name()));
    });

    // Merge in evaluation order, so the outcome does not depend on the parallelism: nodes past
    // the point where a sequential evaluation would stop are dropped.
    for (int j = 0; j < batch; ++j) {
      Outcome& o = outcomes[j];
      const std::string& name = potential[(base + j) % n]->name();
      if (!o.status.IsSuccess()) {
        if (o.status.IsError()) out.errors.push_back(o.status.Message());
        out.statuses[name] = std::move(o.status);
        continue;
      }
      auto& list = o.victims.num_pdb_violations == 0 ? out.candidates : violating;
      if (list.size() < cap) list.push_back({name, std::move(o.victims)});
      if (!out.candidates.empty() && out.candidates.size() + violating.size() >= cap) {
        done = true;
        break;
      }
    }
    processed += batch;
  }
  for (auto& c : violating) out.candidates.push_back(std::move(c));
  return out;
}

Status DefaultPreemption::RemoveFromNode(CycleState& state, const PodInfo& pod,
                                         const PodInfoPtr& victim, NodeInfo& node) const {
  if (!node.RemovePod(*victim->pod))
    return Status::Error(fmt::format("no corresponding pod {} in pods of node {}",
                                     victim->pod->metadata.name, node.name()));
  Status s = handle_.RunPreFilterExtensionRemovePod(state, pod, victim, node);
  if (!s.IsSuccess()) return Status::Error(s.Message());
  return Status::Success();
}

Status DefaultPreemption::SelectVictimsOnNode(CycleState& state, const PodInfo& pod, NodeInfo& node,
                                              std::span<const CompiledPdb> pdbs,
                                              Victims* victims) const {
  victims->pods.clear();
  victims->num_pdb_violations = 0;
  const int32_t priority = pod.pod->Priority();

  std::vector<PodInfoPtr> potential;
  for (const auto& p : node.pods())
    if (p->pod->Priority() < priority) potential.push_back(p);
  for (const auto& p : potential) {
    Status s = RemoveFromNode(state, pod, p, node);
    if (!s.IsSuccess()) return s;
  }
  if (potential.empty()) return Status::Unresolvable(std::string(kNoVictimsReason));

  // If the pod does not fit even with every lower-priority pod gone, the node is no candidate.
  // (Affinity of the pod to one of those pods is deliberately not considered.)
  Status fits = handle_.RunFilterPluginsWithNominatedPods(state, pod, node);
  if (!fits.IsSuccess()) return fits;

  // Stable, so equally important pods keep the node's order and results are reproducible.
  std::stable_sort(potential.begin(), potential.end(), ByImportance);
  std::vector<PodInfoPtr> violating, non_violating;
  preemption::SplitByPdbViolation(potential, pdbs, &violating, &non_violating);

  // Put pods back one at a time, most important first; a pod the preemptor cannot live with
  // becomes a victim. Budget-violating pods get the first chance to stay.
  auto reprieve = [&](const PodInfoPtr& p, bool* kept) -> Status {
    node.AddPod(p);
    Status s = handle_.RunPreFilterExtensionAddPod(state, pod, p, node);
    if (!s.IsSuccess()) return Status::Error(s.Message());
    *kept = handle_.RunFilterPluginsWithNominatedPods(state, pod, node).IsSuccess();
    if (!*kept) {
      Status r = RemoveFromNode(state, pod, p, node);
      if (!r.IsSuccess()) return r;
      victims->pods.push_back(p);
    }
    return Status::Success();
  };
  for (const auto& p : violating) {
    bool kept = false;
    Status s = reprieve(p, &kept);
    if (!s.IsSuccess()) return s;
    if (!kept) ++victims->num_pdb_violations;
  }
  for (const auto& p : non_violating) {
    bool kept = false;
    Status s = reprieve(p, &kept);
    if (!s.IsSuccess()) return s;
  }
  if (!violating.empty() && !non_violating.empty())
    std::stable_sort(victims->pods.begin(), victims->pods.end(), ByImportance);
  return Status::Success();
}

Status DefaultPreemption::PrepareCandidate(const Candidate& candidate, const Pod& preemptor) {
  ClusterWriter& writer = handle_.writer();
  // In the daemon a deletion is queued on the client's victim writers, which delete in parallel
  // off this thread (as upstream's asynchronous preemption); the in-memory twin deletes at once,
  // in this order, so that simulation stays deterministic.
  // One copy of the preemptor for every victim's failure report (they may outlive this call).
  auto preemptor_copy = std::make_shared<const Pod>(preemptor);
  // A failed deletion is reported after this profile may have been replaced by a reload, so
  // the report holds the scheduler's services, not the handle.
  auto retry_preemptor = [services = DetachedFrom(handle_), preemptor_copy](const Error& error) {
    services.log_error(kDefaultPreemptionName, fmt::format("preempting for pod {} failed: {}",
                                                           preemptor_copy->Key(), error.message));
    services.activate(*preemptor_copy);
  };
  std::vector<PodInfoPtr> to_delete;
  for (const auto& v : candidate.victims.pods) {
    const Pod& victim = *v->pod;
    // Graceful deletion is already under way; another request changes nothing.
    if (victim.metadata.deletion_timestamp) continue;
    if (std::shared_ptr<WaitingPod> waiting = handle_.GetWaitingPod(victim.metadata.uid)) {
      waiting->Reject(kDefaultPreemptionName, "preempted");
      continue;
    }
    if (in_flight_) {
      to_delete.push_back(v);
      continue;
    }
    // A queued deletion that fails leaves the preemptor nominated but waiting for a deletion
    // event that will not come: it is tried again at once (as upstream's asynchronous
    // preemption does), and preempts again if the room is still missing.
    VoidResult deleted = writer.DeletePod(victim, retry_preemptor);
    // A victim that vanished meanwhile is as good as evicted.
    if (!deleted.ok() && deleted.error().code != ErrorCode::kNotFound)
      return Status::Error(deleted.error().message);
  }
  if (!to_delete.empty()) {
    // The preemptor waits for these (PreEnqueue); a failure lets it try again at once.
    in_flight_->Start(writer, preemptor, std::move(to_delete), retry_preemptor);
  }

  // Lower-priority pods nominated to this node may no longer fit there; dropping their
  // nomination lets them look elsewhere without waiting for the victims to go. Failures are
  // not fatal (the nomination only speeds things up), but they are logged.
  const int32_t priority = preemptor.Priority();
  for (const auto& p : handle_.nominator().NominatedPodsForNode(candidate.node_name)) {
    if (p->pod->Priority() >= priority) continue;
    VoidResult cleared = writer.SetNominatedNodeName(*p->pod, "");
    if (!cleared.ok() && cleared.error().code != ErrorCode::kNotFound)
      handle_.LogError(kDefaultPreemptionName,
                       fmt::format("clearing the nominatedNodeName of pod {}: {}", p->pod->Key(),
                                   cleared.error().message));
  }
  return Status::Success();
}

PluginRegistration DefaultPreemptionRegistration(const config::FeatureGates& gates) {
  static const config::DefaultPreemptionArgs kDefaults;
  const bool async_preemption = gates.Enabled(config::features::kSchedulerAsyncPreemption);
  auto factory = [async_preemption](const PluginArgs* args,
                                    Handle& handle) -> Result<std::unique_ptr<Plugin>> {
    auto typed = ArgsAs(args, &kDefaults, "DefaultPreemptionArgs");
    if (!typed.ok()) return typed.error();
    if (VoidResult v = config::ValidateDefaultPreemptionArgs(**typed, "args"); !v.ok())
      return v.error();
    return std::unique_ptr<Plugin>(
        std::make_unique<DefaultPreemption>(handle, **typed, async_preemption));
  };
  return MakeRegistration(kDefaultPreemptionName, factory,
                          config::InTreeArgsDecoder(std::string(kDefaultPreemptionName)));
}

}  // namespace berth
