#include "runtime/framework.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <limits>
#include <set>

#include "config/decode_util.h"
#include "framework/guard.h"
#include "observe/log.h"
#include "runtime/framework_internal.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// ---------------------------------------------------------------- construction

namespace {

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

// Every plugin the profile mentions, instantiated once (with its args, or its defaulted args),
// by name; `owned` keeps them.
Result<std::map<std::string, Plugin*>> InstantiatePlugins(
    const config::Profile& profile, const std::vector<PointSpec>& points, const Registry& registry,
    Handle& handle, std::vector<std::unique_ptr<Plugin>>* owned) {
  const std::string& pname = profile.scheduler_name;
  const auto& P = profile.plugins;
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
    auto plugin = reg->factory(args, handle);
    if (!plugin.ok())
      return Error{fmt::format("profile \"{}\": initializing plugin \"{}\": {}", pname, name,
                               plugin.error().message)};
    instances[name] = plugin->get();
    owned->push_back(std::move(plugin).value());
  }
  return instances;
}

// Score weights by plugin: a per-point Score entry takes precedence over the multiPoint entry; an
// unset weight is 1. The weighted total must not overflow.
Result<std::map<std::string, int64_t>> ScoreWeights(const config::Plugins& P,
                                                    const std::map<std::string, Plugin*>& instances,
                                                    const std::string& pname) {
  std::map<std::string, int64_t> weights;
  std::vector<config::PluginRef> weight_sources = P.score.enabled;
  weight_sources.insert(weight_sources.end(), P.multi_point.enabled.begin(),
                        P.multi_point.enabled.end());
  int64_t total = 0;
  for (const auto& e : weight_sources) {
    if (!Implements<ScorePlugin>(instances.at(e.name)) || weights.count(e.name)) continue;
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
  return weights;
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

  auto instantiated = InstantiatePlugins(profile, points, registry, *fw, &fw->owned_);
  if (!instantiated.ok()) return instantiated.error();
  const std::map<std::string, Plugin*> instances = std::move(instantiated).value();

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

  auto score_weights = ScoreWeights(P, instances, pname);
  if (!score_weights.ok()) return score_weights.error();
  std::map<std::string, int64_t> weights = std::move(score_weights).value();
  for (const auto& n : lists["Score"]) {
    auto* plugin = dynamic_cast<ScorePlugin*>(get(n));
    fw->score_.push_back(
        {plugin, weights.count(n) ? weights[n] : 1, dynamic_cast<const NodeBatchScorer*>(plugin)});
  }
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
    if (const auto* dra = dynamic_cast<const DraEnqueueExtensions*>(plugin.get())) {
      try {
        entry.dra_events = dra->DraEventsToRegister();
      } catch (...) {
        entry.dra_events.clear();
      }
    }
    if (const auto* va = dynamic_cast<const VolumeAttachmentEnqueueExtensions*>(plugin.get())) {
      try {
        entry.volume_attachment_delete_hint = va->VolumeAttachmentDeleteHint();
      } catch (...) {
        // Unknown: every deletion moves the plugin's pods.
        entry.volume_attachment_delete_hint = [](const Pod&, const VolumeAttachmentInfo&) {
          return QueueingHint::kQueue;
        };
      }
    }
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

std::vector<const Plugin*> Framework::CyclePlugins() const {
  std::vector<const Plugin*> out;
  auto add = [&](const Plugin* p) {
    if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  };
  for (const auto& e : pre_filter_) add(e.plugin);
  for (const auto* p : filter_) add(p);
  for (const auto& e : pre_score_) add(e.plugin);
  for (const auto& e : score_) add(e.plugin);
  return out;
}

std::string Framework::queue_sort_name() const { return std::string(queue_sort_->Name()); }

DetachedServices Framework::Detached() const {
  // Copies of what the scheduler lent this profile, which outlive it; not `this`.
  DetachedServices detached;
  if (services_.activate)
    detached.activate = services_.activate;
  else
    detached.activate = [](const Pod&) {};
  detached.log_error = [log = services_.log, profile = profile_name_](std::string_view plugin,
                                                                      std::string_view message) {
    if (log)
      log->Error("Plugin failed",
                 {observe::KV::Str("plugin", plugin), observe::KV::Str("err", message),
                  observe::KV::Str("profile", profile)});
  };
  detached.preemptions_in_flight = services_.preemptions_in_flight;
  return detached;
}

void Framework::LogError(std::string_view plugin, std::string_view message) {
  if (services_.log)
    services_.log->Error("Plugin failed",
                         {observe::KV::Str("plugin", plugin), observe::KV::Str("err", message),
                          observe::KV::Str("profile", profile_name_)});
}

}  // namespace berth
