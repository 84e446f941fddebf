#include "runtime/framework.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>

#include "config/decode_util.h"
#include "framework/guard.h"
#include "observe/log.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// ---------------------------------------------------------------- waiting pods

class Framework::WaitingPodImpl final : public WaitingPod {
 public:
  struct PendingWait {
    TimePoint deadline;
    Duration timeout;
  };
  WaitingPodImpl(std::shared_ptr<const Pod> pod, std::map<std::string, PendingWait> waits)
      : pod_(std::move(pod)), deadlines_(std::move(waits)) {}

  const Pod& pod() const override { return *pod_; }
  std::vector<std::string> PendingPlugins() const override {
    std::lock_guard lock(mu_);
    std::vector<std::string> out;
    for (const auto& [name, d] : deadlines_) out.push_back(name);
    return out;
  }
  void Allow(std::string_view plugin) override {
    std::unique_lock lock(mu_);
    if (result_) return;
    deadlines_.erase(std::string(plugin));
    if (deadlines_.empty()) Resolve(lock, Status::Success());
  }
  void Reject(std::string_view plugin, std::string_view message) override {
    std::unique_lock lock(mu_);
    if (result_) return;
    Status s = Status::Unschedulable(std::string(message));
    s.WithPlugin(plugin);
    Resolve(lock, std::move(s));
  }
  // Rejects if a plugin's deadline passed; true if it did.
  bool ExpireAt(TimePoint now) {
    std::unique_lock lock(mu_);
    if (result_) return false;
    for (const auto& [name, w] : deadlines_) {
      if (w.deadline <= now) {
        Status s = Status::Unschedulable(fmt::format(
            "rejected due to timeout after waiting {} at plugin {}",
            config::internal::FormatGoDurationMs(
                std::chrono::duration_cast<std::chrono::milliseconds>(w.timeout).count()),
            name));
        s.WithPlugin(name);
        Resolve(lock, std::move(s));
        return true;
      }
    }
    return false;
  }
  // Runs `then` once the wait is decided (at once if it is), on the deciding thread. Returns
  // the earliest deadline while it is not decided.
  std::optional<TimePoint> OnDecided(std::function<void()> then) {
    std::unique_lock lock(mu_);
    if (result_) {
      lock.unlock();
      then();
      return std::nullopt;
    }
    then_ = std::move(then);
    TimePoint earliest = TimePoint::max();
    for (const auto& [n, w] : deadlines_) earliest = std::min(earliest, w.deadline);
    return earliest;
  }
  std::optional<Status> result() const {
    std::lock_guard lock(mu_);
    return result_;
  }
  // Blocks until resolved; with a real clock, also until the earliest deadline.
  Status Wait(const Clock& clock) {
    std::unique_lock lock(mu_);
    while (!result_) {
      TimePoint earliest = TimePoint::max();
      for (const auto& [n, w] : deadlines_) earliest = std::min(earliest, w.deadline);
      auto wait_for = earliest - clock.Now();
      if (wait_for <= Duration::zero()) {
        lock.unlock();
        ExpireAt(clock.Now());
        lock.lock();
        continue;
      }
      // Re-check at least every 100ms so an injected clock that advances is noticed.
      cv_.wait_for(lock, std::min<Duration>(wait_for, std::chrono::milliseconds(100)));
    }
    return *result_;
  }

 private:
  std::shared_ptr<const Pod> pod_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  // Sets the result, wakes a blocked Wait and runs the continuation (outside the lock).
  void Resolve(std::unique_lock<std::mutex>& lock, Status s) {
    result_ = std::move(s);
    cv_.notify_all();
    std::function<void()> then = std::move(then_);
    then_ = nullptr;
    lock.unlock();
    if (then) then();
  }

  std::map<std::string, PendingWait> deadlines_;
  std::optional<Status> result_;
  std::function<void()> then_;  // the rest of the binding cycle, once decided
};

Framework::~Framework() = default;

// ---------------------------------------------------------------- construction

namespace {

// The metric series of the i-th plugin at a point; null when the framework takes no metrics.
PluginSeries* SeriesAt(const std::vector<PluginSeries*>& series, size_t i) {
  return series.empty() ? nullptr : series[i];
}

// Waiting pods are keyed by UID; pods without one (manifests in simulation) by namespace/name.
std::string WaitingKey(const Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
}

struct PointSpec {
  std::string_view name;  // as in error messages: "Filter", "Score", ...
  const config::PluginSet* set;
  bool (*implements)(Plugin*);
};

template <class I>
bool Implements(Plugin* p) {
  return dynamic_cast<I*>(p) != nullptr;
}

// Upstream's multiPoint expansion for one point: explicit per-point entries override, plugins
// enabled only through multiPoint follow, remaining per-point entries come last.
Result<std::vector<std::string>> ExpandPoint(const PointSpec& point, const config::Plugins& plugins,
                                             const std::map<std::string, Plugin*>& instances,
                                             const std::string& profile) {
  std::vector<std::string> enabled;
  for (const auto& p : point.set->enabled) {
    if (std::find(enabled.begin(), enabled.end(), p.name) != enabled.end())
      return Error{fmt::format("profile \"{}\": plugin \"{}\" already registered as \"{}\"",
                               profile, p.name, point.name)};
    if (!point.implements(instances.at(p.name)))
      return Error{fmt::format("profile \"{}\": plugin \"{}\" does not extend {} plugin", profile,
                               p.name, point.name)};
    enabled.push_back(p.name);
  }
  std::set<std::string> disabled(point.set->disabled.begin(), point.set->disabled.end());
  if (disabled.count("*") || plugins.multi_point.enabled.empty()) return enabled;

  std::set<std::string> overridden;
  std::vector<std::string> multi;
  for (const auto& ep : plugins.multi_point.enabled) {
    Plugin* pl = instances.at(ep.name);
    if (!point.implements(pl) || disabled.count(ep.name)) continue;
    if (std::find(enabled.begin(), enabled.end(), ep.name) != enabled.end()) {
      overridden.insert(ep.name);
      continue;
    }
    if (std::find(multi.begin(), multi.end(), ep.name) != multi.end())
      return Error{fmt::format("profile \"{}\": plugin \"{}\" already registered as \"{}\"",
                               profile, ep.name, point.name)};
    multi.push_back(ep.name);
  }
  // Overridden plugins keep the order the point lists them in (not the multiPoint order).
  std::vector<std::string> out;
  for (const auto& n : enabled)
    if (overridden.count(n)) out.push_back(n);
  out.insert(out.end(), multi.begin(), multi.end());
  for (const auto& n : enabled)
    if (!overridden.count(n)) out.push_back(n);
  return out;
}

}  // namespace

Result<std::unique_ptr<Framework>> Framework::Create(const config::Profile& profile,
                                                     const Registry& registry,
                                                     FrameworkServices services) {
  std::unique_ptr<Framework> fw(new Framework());
  fw->profile_name_ = profile.scheduler_name;
  fw->percentage_ = profile.percentage_of_nodes_to_score;
  fw->services_ = services;
  fw->random_ = Random(services.seed);
  const std::string& pname = profile.scheduler_name;
  const auto& P = profile.plugins;

  const std::vector<PointSpec> points = {
      {"PreEnqueue", &P.pre_enqueue, &Implements<PreEnqueuePlugin>},
      {"QueueSort", &P.queue_sort, &Implements<QueueSortPlugin>},
      {"PreFilter", &P.pre_filter, &Implements<PreFilterPlugin>},
      {"Filter", &P.filter, &Implements<FilterPlugin>},
      {"PostFilter", &P.post_filter, &Implements<PostFilterPlugin>},
      {"PreScore", &P.pre_score, &Implements<PreScorePlugin>},
      {"Score", &P.score, &Implements<ScorePlugin>},
      {"Reserve", &P.reserve, &Implements<ReservePlugin>},
      {"Permit", &P.permit, &Implements<PermitPlugin>},
      {"PreBind", &P.pre_bind, &Implements<PreBindPlugin>},
      {"Bind", &P.bind, &Implements<BindPlugin>},
      {"PostBind", &P.post_bind, &Implements<PostBindPlugin>},
  };

  // Instantiate every plugin the profile mentions, once.
  std::vector<std::string> needed;
  auto need = [&](const std::string& n) {
    if (std::find(needed.begin(), needed.end(), n) == needed.end()) needed.push_back(n);
  };
  for (const auto& pt : points)
    for (const auto& e : pt.set->enabled) need(e.name);
  for (const auto& e : P.multi_point.enabled) need(e.name);

  std::map<std::string, Plugin*> instances;
  for (const auto& name : needed) {
    const PluginRegistration* reg = registry.Find(name);
    if (!reg)
      return Error{fmt::format("profile \"{}\": plugin \"{}\" does not exist", pname, name)};
    const PluginArgs* args = profile.ArgsFor(name);
    std::shared_ptr<const PluginArgs> defaulted;
    if (!args && reg->decode_args) {
      auto d = reg->decode_args(nullptr, name + ".args");
      if (!d.ok()) return Error{fmt::format("profile \"{}\": {}", pname, d.error().message)};
      defaulted = *d;
      args = defaulted.get();
    }
    auto plugin = reg->factory(args, *fw);
    if (!plugin.ok())
      return Error{fmt::format("profile \"{}\": initializing plugin \"{}\": {}", pname, name,
                               plugin.error().message)};
    instances[name] = plugin->get();
    fw->owned_.push_back(std::move(plugin).value());
  }

  std::map<std::string_view, std::vector<std::string>> lists;
  for (const auto& pt : points) {
    auto expanded = ExpandPoint(pt, P, instances, pname);
    if (!expanded.ok()) return expanded.error();
    lists[pt.name] = std::move(expanded).value();
  }

  auto get = [&](const std::string& n) { return instances.at(n); };
  for (const auto& n : lists["PreEnqueue"])
    fw->pre_enqueue_.push_back(dynamic_cast<PreEnqueuePlugin*>(get(n)));
  if (lists["QueueSort"].size() != 1)
    return Error{fmt::format(
        "only one queue sort plugin required for profile with scheduler name \"{}\", but got {}",
        pname, lists["QueueSort"].size())};
  fw->queue_sort_ = dynamic_cast<QueueSortPlugin*>(get(lists["QueueSort"][0]));
  for (const auto& n : lists["Filter"]) fw->filter_.push_back(dynamic_cast<FilterPlugin*>(get(n)));
  for (const auto& n : lists["PreFilter"]) {
    const auto& f = lists["Filter"];
    auto it = std::find(f.begin(), f.end(), n);
    fw->pre_filter_.push_back({dynamic_cast<PreFilterPlugin*>(get(n)),
                               it == f.end() ? -1 : static_cast<int>(it - f.begin())});
  }
  for (const auto& n : lists["PostFilter"])
    fw->post_filter_.push_back(dynamic_cast<PostFilterPlugin*>(get(n)));

  // Score weights: a per-point Score entry takes precedence over the multiPoint entry.
  std::map<std::string, int64_t> weights;
  std::vector<config::PluginRef> weight_sources = P.score.enabled;
  weight_sources.insert(weight_sources.end(), P.multi_point.enabled.begin(),
                        P.multi_point.enabled.end());
  int64_t total = 0;
  for (const auto& e : weight_sources) {
    if (!Implements<ScorePlugin>(get(e.name)) || weights.count(e.name)) continue;
    int64_t w = e.weight == 0 ? 1 : e.weight;
    if (w < 0)
      return Error{fmt::format("profile \"{}\": score plugin \"{}\" has negative weight {}", pname,
                               e.name, w)};
    if (w * kMaxNodeScore > std::numeric_limits<int64_t>::max() - total)
      return Error{
          fmt::format("profile \"{}\": total score of Score plugins could overflow", pname)};
    total += w * kMaxNodeScore;
    weights[e.name] = w;
  }
  for (const auto& n : lists["Score"])
    fw->score_.push_back({dynamic_cast<ScorePlugin*>(get(n)), weights.count(n) ? weights[n] : 1});
  for (const auto& n : lists["PreScore"]) {
    const auto& s = lists["Score"];
    auto it = std::find(s.begin(), s.end(), n);
    fw->pre_score_.push_back({dynamic_cast<PreScorePlugin*>(get(n)),
                              it == s.end() ? -1 : static_cast<int>(it - s.begin())});
  }
  fw->WarnAboutScoreWithoutPreScore(lists["Score"], lists["PreScore"], get);
  for (const auto& n : lists["Reserve"])
    fw->reserve_.push_back(dynamic_cast<ReservePlugin*>(get(n)));
  for (const auto& n : lists["Permit"]) fw->permit_.push_back(dynamic_cast<PermitPlugin*>(get(n)));
  for (const auto& n : lists["PreBind"])
    fw->pre_bind_.push_back(dynamic_cast<PreBindPlugin*>(get(n)));
  for (const auto& n : lists["Bind"]) fw->bind_.push_back(dynamic_cast<BindPlugin*>(get(n)));
  if (fw->bind_.empty())
    return Error{fmt::format(
        "at least one bind plugin is needed for profile with scheduler name \"{}\"", pname)};
  for (const auto& n : lists["PostBind"])
    fw->post_bind_.push_back(dynamic_cast<PostBindPlugin*>(get(n)));
  fw->RegisterEvents();
  fw->ResolvePluginSeries();
  return fw;
}

void Framework::WarnAboutScoreWithoutPreScore(
    const std::vector<std::string>& score, const std::vector<std::string>& pre_score,
    const std::function<Plugin*(const std::string&)>& get) {
  for (const std::string& name : score) {
    Plugin* plugin = get(name);
    if (!Implements<PreScorePlugin>(plugin) || dynamic_cast<ScoresWithoutPreScore*>(plugin) ||
        std::find(pre_score.begin(), pre_score.end(), name) != pre_score.end())
      continue;
    warnings_.push_back(fmt::format(
        "profile \"{}\": plugin \"{}\" is enabled at score but not at preScore, and its Score "
        "needs what its PreScore prepares (without it every cycle fails or every node scores "
        "alike): enable it at preScore too, or under multiPoint",
        profile_name_, name));
  }
  if (services_.log)
    for (const std::string& w : warnings_) services_.log->Warning(w);
}

void Framework::ResolvePluginSeries() {
  SchedulerMetricsSink* sink = services_.metrics;
  if (!sink) return;
  auto resolve = [&](std::string_view point, const auto& plugins, auto name_of) {
    std::vector<PluginSeries*> out;
    for (const auto& p : plugins) out.push_back(sink->Plugin(profile_name_, point, name_of(p)));
    return out;
  };
  auto plain = [](const auto* p) { return p->Name(); };
  auto entry = [](const auto& e) { return e.plugin->Name(); };
  series_.pre_filter = resolve("PreFilter", pre_filter_, entry);
  series_.filter = resolve("Filter", filter_, plain);
  series_.post_filter = resolve("PostFilter", post_filter_, plain);
  series_.pre_score = resolve("PreScore", pre_score_, entry);
  series_.score = resolve("Score", score_, entry);
  series_.normalize = resolve("ScoreExtensionNormalize", score_, entry);
  series_.reserve = resolve("Reserve", reserve_, plain);
  series_.unreserve = resolve("Unreserve", reserve_, plain);
  series_.permit = resolve("Permit", permit_, plain);
  series_.pre_bind = resolve("PreBind", pre_bind_, plain);
  series_.bind = resolve("Bind", bind_, plain);
  series_.post_bind = resolve("PostBind", post_bind_, plain);
  // A sink may measure no plugin at all (Plugin() returns null): then nothing is counted either.
  bool any = false;
  for (const auto* v :
       {&series_.pre_filter, &series_.filter, &series_.post_filter, &series_.pre_score,
        &series_.score, &series_.normalize, &series_.reserve, &series_.unreserve, &series_.permit,
        &series_.pre_bind, &series_.bind, &series_.post_bind})
    for (PluginSeries* p : *v) any = any || p != nullptr;
  if (!any) series_ = PluginSeriesSet{};
}

template <class Call>
Status Framework::Measured(const CycleState& state, PluginSeries* series, Call&& call) const {
  if (!series || !state.ShouldRecordPluginMetrics()) return call();
  const TimePoint start = services_.clock->Now();
  Status s = call();
  series->Executed(s.code(), services_.clock->Now() - start);
  return s;
}

template <class Call>
void Framework::MeasuredVoid(const CycleState& state, PluginSeries* series, Call&& call) const {
  if (!series || !state.ShouldRecordPluginMetrics()) return call();
  const TimePoint start = services_.clock->Now();
  call();
  series->Executed(Code::kSuccess, services_.clock->Now() - start);
}

void Framework::RegisterEvents() {
  for (const auto& plugin : owned_) {
    PluginEvents entry{std::string(plugin->Name()), {}};
    const auto* ext = dynamic_cast<const EnqueueExtensions*>(plugin.get());
    bool known = false;
    if (ext) {
      try {
        entry.events = ext->EventsToRegister();
        known = true;
      } catch (...) {
        // Unknown interests: the pods it rejects move on every event, as without the interface.
        entry.events.clear();
      }
    }
    if (!known) entry.events.push_back({ClusterEvent{EventResource::kWildCard, kAllActions}, {}});
    event_registrations_.push_back(std::move(entry));
  }
}

std::vector<std::string> Framework::ListPlugins(std::string_view point) const {
  std::vector<std::string> out;
  auto add = [&](const auto& v) {
    for (const auto* p : v) out.emplace_back(p->Name());
  };
  if (point == "PreEnqueue") add(pre_enqueue_);
  if (point == "QueueSort") out.emplace_back(queue_sort_->Name());
  if (point == "PreFilter")
    for (const auto& e : pre_filter_) out.emplace_back(e.plugin->Name());
  if (point == "Filter") add(filter_);
  if (point == "PostFilter") add(post_filter_);
  if (point == "PreScore")
    for (const auto& e : pre_score_) out.emplace_back(e.plugin->Name());
  if (point == "Score")
    for (const auto& e : score_) out.emplace_back(e.plugin->Name());
  if (point == "Reserve") add(reserve_);
  if (point == "Permit") add(permit_);
  if (point == "PreBind") add(pre_bind_);
  if (point == "Bind") add(bind_);
  if (point == "PostBind") add(post_bind_);
  return out;
}

std::string Framework::queue_sort_name() const { return std::string(queue_sort_->Name()); }

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

Status Framework::RunPreScorePlugins(CycleState& state, const PodInfo& pod,
                                     std::span<const NodeInfo* const> nodes,
                                     PluginOutcomes* outcomes) {
  state.skip_score_.assign(score_.size(), false);
  for (size_t i = 0; i < pre_score_.size(); ++i) {
    const PreScoreEntry& e = pre_score_[i];
    PluginSeries* series = SeriesAt(series_.pre_score, i);
    Status s = Measured(state, series, [&] { return e.plugin->PreScore(state, pod, nodes); });
    if (outcomes) outcomes->emplace_back(std::string(e.plugin->Name()), s);
    if (s.IsSkip()) {
      if (e.score_index >= 0) state.skip_score_[e.score_index] = true;
      continue;
    }
    if (series) series->Evaluated(1);
    if (!s.IsSuccess())
      return Status::Error(
          fmt::format("running PreScore plugin \"{}\": {}", e.plugin->Name(), s.Message()));
  }
  return Status::Success();
}

Status Framework::RunScorePlugins(const CycleState& state, const PodInfo& pod,
                                  std::span<const NodeInfo* const> nodes, ScoreTable* table,
                                  RawScoreMemo* memo) {
  const size_t n = nodes.size();
  table->nodes.assign(nodes.begin(), nodes.end());
  // Rows keep their capacity when the caller reuses the table across cycles.
  table->plugin_scores.resize(score_.size());
  for (auto& row : table->plugin_scores) row.clear();
  table->plugin_ran.assign(score_.size(), false);
  table->totals.assign(n, 0);

  std::vector<size_t> active;
  for (size_t p = 0; p < score_.size(); ++p) {
    if (p < state.skip_score_.size() && state.skip_score_[p]) continue;
    active.push_back(p);
    table->plugin_ran[p] = true;
  }
  if (active.empty()) return Status::Success();
  const size_t num_plugins = score_.size();
  // Per active plugin: scored afresh every cycle, never kept in the memo.
  std::vector<char>& fresh = memo_fresh_buffer_;
  fresh.assign(active.size(), 0);
  bool any_fresh = false;
  if (memo) {
    // Rows filled while other plugins ran (PreScore skipped differently) cannot be reused.
    if (memo->ran != table->plugin_ran) {
      memo->ran = table->plugin_ran;
      memo->NextEpoch();
    }
    memo->scores.resize(memo->filled.size() * num_plugins);
    for (size_t a = 0; a < active.size(); ++a)
      if (active[a] < memo->fresh.size() && memo->fresh[active[a]]) {
        fresh[a] = 1;
        any_fresh = true;
      }
  }

  // Raw scores, node-major so each worker touches one node's data for all plugins. A plugin
  // with NormalizeScore gets them as a NodeScore list (the buffer lives across cycles, scheduling
  // thread only); the others' go straight into the table's row, which is what they end as
  // (at 250,000 nodes a list is 4 MB per plugin).
  std::vector<std::vector<NodeScore>>& scores = score_buffer_;
  if (scores.size() < active.size()) scores.resize(active.size());
  std::vector<int64_t*>& direct = score_direct_buffer_;  // [active plugin]: row, or null
  direct.assign(active.size(), nullptr);
  for (size_t a = 0; a < active.size(); ++a) {
    if (score_[active[a]].plugin->HasNormalize()) {
      scores[a].resize(n);
    } else {
      auto& row = table->plugin_scores[active[a]];
      row.resize(n);
      direct[a] = row.data();
    }
  }
  std::atomic<bool> failed{false};
  std::mutex err_mu;
  Status first_error;
  // In a sampled cycle, every kPerNodeTimingStride-th node's plugin calls are timed.
  const bool timing = !series_.score.empty() && state.ShouldRecordPluginMetrics();
  // Scores node i into scores[*][i] (and its memo row); false when a plugin failed. With
  // `fresh_only`, only the plugins scored afresh run (the node's memo row is valid).
  auto score_node = [&](int i, bool timed, bool fresh_only) {
    int64_t* row = memo ? &memo->scores[memo->rows[i] * num_plugins] : nullptr;
    for (size_t a = 0; a < active.size(); ++a) {
      if (fresh_only && !fresh[a]) continue;
      int64_t s = 0;
      auto call = [&] { return score_[active[a]].plugin->Score(state, pod, *nodes[i], &s); };
      Status st = Guarded("Score", [&] {
        return timed ? Measured(state, series_.score[active[a]], call) : call();
      });
      if (!st.IsSuccess()) {
        std::lock_guard lock(err_mu);
        if (!failed.exchange(true))
          first_error =
              Status::Error(fmt::format("running Score plugins: plugin \"{}\" failed "
                                        "with: {}",
                                        score_[active[a]].plugin->Name(), st.Message()));
        return false;
      }
      if (direct[a]) {
        direct[a][i] = s;
      } else {
        scores[a][i] = {nodes[i], s};
      }
      if (row && !fresh[a]) row[active[a]] = s;
    }
    if (memo && !fresh_only) memo->filled[memo->rows[i]] = memo->epoch;
    return true;
  };
  if (memo) {
    // Only rows without a valid memo are scored (the nodes the last snapshot update
    // overwrote); the others are read from the memo.
    std::vector<int>& stale = memo_stale_buffer_;
    stale.clear();
    std::vector<char>& kept = memo_kept_buffer_;
    kept.assign(n, 1);
    for (size_t i = 0; i < n; ++i)
      if (memo->filled[memo->rows[i]] != memo->epoch) {
        stale.push_back(static_cast<int>(i));
        kept[i] = 0;
      }
    parallelizer().Until(static_cast<int>(stale.size()), [&](int k) {
      if (!failed.load(std::memory_order_relaxed))
        score_node(stale[k], timing && k % kPerNodeTimingStride == 0, false);
    });
    if (failed) return first_error;
    if (any_fresh) {
      parallelizer().Until(static_cast<int>(n), [&](int i) {
        if (kept[i] && !failed.load(std::memory_order_relaxed))
          score_node(i, timing && i % kPerNodeTimingStride == 0, true);
      });
      if (failed) return first_error;
    }
    // Node-major: each memo row is one cache line, loaded once for all plugins.
    for (size_t i = 0; i < n; ++i) {
      const int64_t* row = &memo->scores[memo->rows[i] * num_plugins];
      for (size_t a = 0; a < active.size(); ++a) {
        if (fresh[a]) continue;
        if (direct[a]) {
          direct[a][i] = row[active[a]];
        } else {
          scores[a][i] = {nodes[i], row[active[a]]};
        }
      }
    }
  } else {
    // Nodes are scored last to first: the filter loop just walked them first to last, so on a
    // cluster larger than the cache the nodes it touched last are the ones still cached.
    parallelizer().Until(static_cast<int>(n), [&](int j) {
      if (failed.load(std::memory_order_relaxed)) return;
      const int i = static_cast<int>(n) - 1 - j;
      // Workers take contiguous chunks: load the NodeInfos eight nodes ahead and their Nodes
      // four ahead while this node is scored (the plugins' own time is mostly these loads).
      if (i >= 8) PrefetchNodeInfo(nodes[i - 8]);
      if (i >= 4) PrefetchNode(nodes[i - 4]);
      score_node(i, timing && j % kPerNodeTimingStride == 0, false);
    });
  }
  if (failed) return first_error;
  if (!series_.score.empty())
    for (size_t a : active)
      if (PluginSeries* series = series_.score[a]) series->Evaluated(n);

  for (size_t a = 0; a < active.size(); ++a) {
    const auto& e = score_[active[a]];
    if (e.plugin->HasNormalize()) {
      Status st = Measured(state, SeriesAt(series_.normalize, active[a]),
                           [&] { return e.plugin->NormalizeScore(state, pod, scores[a]); });
      if (!st.IsSuccess())
        return Status::Error(
            fmt::format("running Normalize on Score plugins: plugin \"{}\" "
                        "failed with: {}",
                        e.plugin->Name(), st.Message()));
    }
    auto& out_row = table->plugin_scores[active[a]];
    out_row.resize(n);
    // Raw pointers: through the vectors every store would reload the others' data pointers.
    const NodeScore* in = direct[a] ? nullptr : scores[a].data();
    int64_t* out = out_row.data();
    int64_t* totals = table->totals.data();
    const int64_t weight = e.weight;
    for (size_t i = 0; i < n; ++i) {
      const int64_t s = in ? in[i].score : out[i];
      if (s > kMaxNodeScore || s < kMinNodeScore)
        return Status::Error(fmt::format(
            "applying score defaultWeights on Score plugins: plugin \"{}\" returns an invalid "
            "score {}, it should in the range of [{}, {}] after normalizing",
            e.plugin->Name(), s, kMinNodeScore, kMaxNodeScore));
      out[i] = s;
      totals[i] += s * weight;
    }
  }
  return Status::Success();
}

Status Framework::RunReservePluginsReserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node, PluginOutcomes* outcomes) {
  for (size_t i = 0; i < reserve_.size(); ++i) {
    ReservePlugin* pl = reserve_[i];
    Status s = Measured(state, SeriesAt(series_.reserve, i),
                        [&] { return pl->Reserve(state, pod, node); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(fmt::format("running Reserve plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  return Status::Success();
}

void Framework::RunReservePluginsUnreserve(CycleState& state, const PodInfo& pod,
                                           const std::string& node) {
  // Reverse order, as resources are released in the opposite order they were reserved.
  for (size_t i = reserve_.size(); i-- > 0;) {
    MeasuredVoid(state, SeriesAt(series_.unreserve, i),
                 [&] { reserve_[i]->Unreserve(state, pod, node); });
  }
}

Status Framework::RunPermitPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                   PluginOutcomes* outcomes) {
  constexpr Duration kMaxTimeout = std::chrono::minutes(15);
  std::map<std::string, WaitingPodImpl::PendingWait> waits;
  for (size_t i = 0; i < permit_.size(); ++i) {
    PermitPlugin* pl = permit_[i];
    Duration timeout{};
    Status s = Measured(state, SeriesAt(series_.permit, i), [&] {
      PermitDecision d = pl->Permit(state, pod, node);
      timeout = d.timeout;
      return std::move(d.status);
    });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s, timeout);
    if (s.IsSuccess()) continue;
    if (s.IsWait()) {
      timeout = std::min(timeout, kMaxTimeout);
      waits[std::string(pl->Name())] = {clock().Now() + timeout, timeout};
      continue;
    }
    if (!s.IsRejected())
      s = Status::Error(fmt::format("running Permit plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  if (waits.empty()) return Status::Success();
  auto wp = std::make_shared<WaitingPodImpl>(pod.pod, std::move(waits));
  std::lock_guard lock(waiting_mu_);
  waiting_[WaitingKey(*pod.pod)] = std::move(wp);
  return Status::Wait();
}

Status Framework::WaitOnPermit(const Pod& pod) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(WaitingKey(pod));
    if (it == waiting_.end()) return Status::Success();
    wp = it->second;
  }
  const TimePoint start = clock().Now();
  Status s = wp->Wait(clock());
  if (services_.metrics) services_.metrics->PermitWait(CodeName(s.code()), clock().Now() - start);
  std::lock_guard lock(waiting_mu_);
  waiting_.erase(WaitingKey(pod));
  return s;
}

std::optional<TimePoint> Framework::OnPermitDecided(const Pod& pod, std::function<void()> then) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(WaitingKey(pod));
    if (it != waiting_.end()) wp = it->second;
  }
  if (!wp) {
    then();
    return std::nullopt;
  }
  return wp->OnDecided(std::move(then));
}

bool Framework::ExpireWaitingPod(const Pod& pod) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(WaitingKey(pod));
    if (it == waiting_.end()) return false;
    wp = it->second;
  }
  return wp->ExpireAt(clock().Now());
}

int Framework::ExpireWaitingPods() {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    std::lock_guard lock(waiting_mu_);
    for (auto& [uid, wp] : waiting_) all.push_back(wp);
  }
  int n = 0;
  for (auto& wp : all) n += wp->ExpireAt(clock().Now()) ? 1 : 0;
  return n;
}

bool Framework::IsWaitingOnPermit(std::string_view uid) {
  std::lock_guard lock(waiting_mu_);
  auto it = waiting_.find(uid);
  return it != waiting_.end() && !it->second->result().has_value();
}

Status Framework::RunPreBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                    PluginOutcomes* outcomes) {
  for (size_t i = 0; i < pre_bind_.size(); ++i) {
    PreBindPlugin* pl = pre_bind_[i];
    Status s = Measured(state, SeriesAt(series_.pre_bind, i),
                        [&] { return pl->PreBind(state, pod, node); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSuccess()) continue;
    if (!s.IsRejected())
      s = Status::Error(fmt::format("running PreBind plugin \"{}\": {}", pl->Name(), s.Message()));
    s.WithPlugin(pl->Name());
    return s;
  }
  return Status::Success();
}

Status Framework::RunBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node,
                                 PluginOutcomes* outcomes) {
  for (size_t i = 0; i < bind_.size(); ++i) {
    BindPlugin* pl = bind_[i];
    Status s =
        Measured(state, SeriesAt(series_.bind, i), [&] { return pl->Bind(state, pod, node); });
    if (outcomes) outcomes->emplace_back(std::string(pl->Name()), s);
    if (s.IsSkip()) continue;
    if (!s.IsSuccess()) {
      if (!s.IsRejected())
        s = Status::Error(fmt::format("running Bind plugin \"{}\": {}", pl->Name(), s.Message()));
      s.WithPlugin(pl->Name());
    }
    return s;
  }
  return Status::Skip();
}

void Framework::RunPostBindPlugins(CycleState& state, const PodInfo& pod, const std::string& node) {
  for (size_t i = 0; i < post_bind_.size(); ++i) {
    MeasuredVoid(state, SeriesAt(series_.post_bind, i),
                 [&] { post_bind_[i]->PostBind(state, pod, node); });
  }
}

// ---------------------------------------------------------------- waiting pods (Handle)

void Framework::LogError(std::string_view plugin, std::string_view message) {
  if (services_.log)
    services_.log->Error("Plugin failed",
                         {observe::KV::Str("plugin", plugin), observe::KV::Str("err", message),
                          observe::KV::Str("profile", profile_name_)});
}

void Framework::IterateOverWaitingPods(const std::function<void(WaitingPod&)>& fn) {
  std::vector<std::shared_ptr<WaitingPodImpl>> all;
  {
    std::lock_guard lock(waiting_mu_);
    for (auto& [uid, wp] : waiting_) all.push_back(wp);
  }
  for (auto& wp : all) fn(*wp);
}

std::shared_ptr<WaitingPod> Framework::GetWaitingPod(std::string_view uid) {
  std::lock_guard lock(waiting_mu_);
  auto it = waiting_.find(uid);
  if (it == waiting_.end()) return nullptr;
  return it->second;
}

bool Framework::RejectWaitingPod(std::string_view uid) {
  std::shared_ptr<WaitingPodImpl> wp;
  {
    std::lock_guard lock(waiting_mu_);
    auto it = waiting_.find(uid);
    if (it == waiting_.end()) return false;
    wp = it->second;
  }
  wp->Reject("", "removed");
  return true;
}

}  // namespace berth
