#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>

#include "config/decode_util.h"
#include "framework/guard.h"
#include "observe/log.h"
#include "runtime/framework.h"
#include "runtime/framework_internal.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// ---------------------------------------------------------------- scheduling cycle

Status Framework::RunPreEnqueuePlugins(const Pod& pod) const {
  for (const auto* pl : pre_enqueue_) {
    Status s = pl->PreEnqueue(pod);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(
          fmt::format("running PreEnqueue plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  return Status::Success();
}

Status Framework::RunPreFilterPlugins(CycleState& state, const PodInfo& pod,
                                      PreFilterResult* result,
                                      std::vector<std::string>* rejected_by,
                                      PluginOutcomes* outcomes) {
  state.skip_filter_.assign(filter_.size(), false);
  *result = PreFilterResult{};
  std::vector<std::string> with_nodes;
  std::optional<Status> unschedulable;
  std::span<const NodeInfo* const> nodes(snapshot_->nodes());
  for (size_t i = 0; i < pre_filter_.size(); ++i) {
    const PreFilterEntry& e = pre_filter_[i];
    PluginSeries* series = SeriesAt(series_.pre_filter, i);
    PreFilterResult r;
    Status s = Measured(state, series, [&] { return e.plugin->PreFilter(state, pod, nodes, &r); });
    if (outcomes) {
      PluginOutcome& o = outcomes->emplace_back(std::string(e.plugin->Name()), s);
      if (s.IsSuccess() && !r.AllNodes())
        o.node_names.emplace(r.node_names->begin(), r.node_names->end());
    }
    if (s.IsSkip()) {
      if (e.filter_index >= 0) state.skip_filter_[e.filter_index] = true;
      continue;
    }
    if (series) series->Evaluated(1);
    if (!s.IsSuccess()) {
      s.WithPlugin(e.plugin->Name());
      if (s.code() == Code::kUnschedulableAndUnresolvable) {
        rejected_by->push_back(std::string(e.plugin->Name()));
        return s;
      }
      if (s.code() == Code::kUnschedulable) {
        // Later PreFilters still run so that preemption sees their state; as in
        // kube-scheduler, the last Unschedulable status is the one reported.
        rejected_by->push_back(std::string(e.plugin->Name()));
        unschedulable = std::move(s);
        continue;
      }
      Status err = Status::Error(
          fmt::format("running PreFilter plugin \"{}\": {}", e.plugin->Name(), s.Message()));
      err.WithPlugin(e.plugin->Name());
      return err;
    }
    if (!r.AllNodes()) {
      // Kept sorted: messages list the plugins by name, as kube-scheduler's sets do.
      std::string name(e.plugin->Name());
      with_nodes.insert(std::lower_bound(with_nodes.begin(), with_nodes.end(), name), name);
    }
    *result = result->Merge(r);
    if (!result->AllNodes() && result->node_names->empty()) {
      std::string msg = with_nodes.size() == 1
                            ? fmt::format("node(s) didn't satisfy plugin {}", with_nodes[0])
                            : fmt::format("node(s) didn't satisfy plugin(s) [{}] simultaneously",
                                          fmt::join(with_nodes, " "));
      *rejected_by = with_nodes;
      return Status::Unresolvable(msg);
    }
  }
  if (unschedulable) return *unschedulable;
  // The plugins that narrowed the node set name the status of the nodes left out.
  if (!result->AllNodes()) *rejected_by = with_nodes;
  return Status::Success();
}

Status Framework::RunPreFilterExtension(ExtensionCall call, std::string_view what,
                                        CycleState& state, const PodInfo& pod_to_schedule,
                                        const PodInfoPtr& pod, const NodeInfo& node) {
  for (const auto& e : pre_filter_) {
    // A plugin whose PreFilter skipped has no state to update.
    if (e.filter_index >= 0 && state.skip_filter_.size() > static_cast<size_t>(e.filter_index) &&
        state.skip_filter_[e.filter_index])
      continue;
    const PreFilterExtensions* ext = e.plugin->Extensions();
    if (!ext) continue;
    Status s = (ext->*call)(state, pod_to_schedule, pod, node);
    if (!s.IsSuccess())
      return Status::Error(fmt::format("running {} on PreFilter plugin \"{}\": {}", what,
                                       e.plugin->Name(), s.Message()));
  }
  return Status::Success();
}

Status Framework::RunPreFilterExtensionAddPod(CycleState& state, const PodInfo& pod_to_schedule,
                                              const PodInfoPtr& pod_to_add, const NodeInfo& node) {
  return RunPreFilterExtension(&PreFilterExtensions::AddPod, "AddPod", state, pod_to_schedule,
                               pod_to_add, node);
}

Status Framework::RunPreFilterExtensionRemovePod(CycleState& state, const PodInfo& pod_to_schedule,
                                                 const PodInfoPtr& pod_to_remove,
                                                 const NodeInfo& node) {
  return RunPreFilterExtension(&PreFilterExtensions::RemovePod, "RemovePod", state, pod_to_schedule,
                               pod_to_remove, node);
}

Status Framework::RunFilterPlugins(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node, bool time_plugins, size_t first,
                                   size_t last) const {
  const bool timed = time_plugins && !series_.filter.empty();
  for (size_t i = first; i < filter_.size() && i < last; ++i) {
    if (i < state.skip_filter_.size() && state.skip_filter_[i]) continue;
    Status s = timed ? Measured(state, series_.filter[i],
                                [&] { return filter_[i]->Filter(state, pod, node); })
                     : filter_[i]->Filter(state, pod, node);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(
          fmt::format("running \"{}\" filter plugin: {}", filter_[i]->Name(), s.Message()));
    s.WithPlugin(filter_[i]->Name());
    return s;
  }
  return Status::Success();
}

void Framework::ActiveFilters(const CycleState& state, size_t first, size_t last,
                              std::vector<ActiveFilter>* out) const {
  out->clear();
  for (size_t i = first; i < filter_.size() && i < last; ++i) {
    if (i < state.skip_filter_.size() && state.skip_filter_[i]) continue;
    out->push_back({filter_[i], series_.filter.empty() ? nullptr : series_.filter[i]});
  }
}

Status Framework::RunActiveFilters(const CycleState& state, const PodInfo& pod,
                                   const NodeInfo& node, std::span<const ActiveFilter> filters,
                                   bool time_plugins) const {
  const bool timed = time_plugins && !series_.filter.empty();
  for (const ActiveFilter& f : filters) {
    Status s = timed ? Measured(state, f.series, [&] { return f.plugin->Filter(state, pod, node); })
                     : f.plugin->Filter(state, pod, node);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(
          fmt::format("running \"{}\" filter plugin: {}", f.plugin->Name(), s.Message()));
    s.WithPlugin(f.plugin->Name());
    return s;
  }
  return Status::Success();
}

Status Framework::RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                    const NodeInfo& node) {
  return FilterWithNominated(state, pod, node, false);
}

Status Framework::RunFilterPluginsWithNominatedPods(const CycleState& state, const PodInfo& pod,
                                                    const NodeInfo& node, bool time_plugins) {
  return FilterWithNominated(state, pod, node, time_plugins);
}

int Framework::FilterPluginIndex(std::string_view name) const {
  for (size_t i = 0; i < filter_.size(); ++i)
    if (filter_[i]->Name() == name) return static_cast<int>(i);
  return -1;
}

int Framework::ScorePluginIndex(std::string_view name) const {
  for (size_t i = 0; i < score_.size(); ++i)
    if (score_[i].plugin->Name() == name) return static_cast<int>(i);
  return -1;
}

void Framework::CountFilterEvaluations(const CycleState& state, uint64_t passed,
                                       std::span<const uint64_t> rejected_at) {
  if (series_.filter.empty()) return;
  // A node rejected at plugin j ran every plugin up to j: plugin i ran on the nodes that passed
  // and on those rejected at i or later.
  uint64_t reached = passed;
  for (size_t i = filter_.size(); i-- > 0;) {
    if (i < rejected_at.size()) reached += rejected_at[i];
    if (i < state.skip_filter_.size() && state.skip_filter_[i]) continue;
    if (PluginSeries* series = series_.filter[i]) series->Evaluated(reached);
  }
}

Status Framework::FilterWithNominated(const CycleState& state, const PodInfo& pod,
                                      const NodeInfo& node, bool time_plugins) {
  std::vector<PodInfoPtr> nominated;
  if (services_.nominator && has_nominated_) {
    for (auto& pi : services_.nominator->NominatedPodsForNode(node.name())) {
      if (pi->pod->Priority() >= pod.pod->Priority() &&
          pi->pod->metadata.uid != pod.pod->metadata.uid)
        nominated.push_back(std::move(pi));
    }
  }
  if (nominated.empty()) return RunFilterPlugins(state, pod, node, time_plugins);

  // First pass with the nominated pods added: they must still fit alongside this pod.
  CycleState with = state.Clone();
  NodeInfo node_with = node;
  for (const auto& pi : nominated) {
    node_with.AddPod(pi);
    Status s = RunPreFilterExtensionAddPod(with, pod, pi, node_with);
    if (!s.IsSuccess()) return s;
  }
  Status s = RunFilterPlugins(with, pod, node_with);
  if (!s.IsSuccess()) return s;
  // Second pass without them: affinity-like filters may pass only because of them.
  return RunFilterPlugins(state, pod, node, time_plugins);
}

Status Framework::RunPostFilterPlugins(CycleState& state, const PodInfo& pod,
                                       const NodeStatusMap& statuses, PostFilterResult* result,
                                       std::vector<std::string>* messages,
                                       PluginOutcomes* outcomes) {
  std::string rejector;
  for (size_t i = 0; i < post_filter_.size(); ++i) {
    PostFilterPlugin* pl = post_filter_[i];
    PostFilterResult r;
    Status s = Measured(state, SeriesAt(series_.post_filter, i),
                        [&] { return pl->PostFilter(state, pod, statuses, &r); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSuccess()) {
      *result = std::move(r);
      return s;
    }
    if (s.code() == Code::kUnschedulableAndUnresolvable) {
      *result = std::move(r);
      *messages = s.reasons();
      s.WithPlugin(pl->Name());
      return s;
    }
    if (!s.IsRejected()) {
      Status err = Status::Error(s.Message());
      err.WithPlugin(pl->Name());
      messages->assign(1, err.Message());
      return err;
    }
    if (r.nominating && r.nominating->override_nomination) *result = r;
    for (const auto& reason : s.reasons()) messages->push_back(reason);
    if (rejector.empty()) rejector = pl->Name();
  }
  Status out(Code::kUnschedulable, *messages);
  out.WithPlugin(rejector);
  return out;
}

}  // namespace berth
