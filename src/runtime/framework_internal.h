// What the files of the Framework share and nobody else reads: metric helpers and the key of
// a waiting pod.
#pragma once

#include <string>
#include <vector>

#include "runtime/framework.h"
#include "runtime/scheduler_metrics.h"

namespace berth {

// The metric series of the i-th plugin at a point; null when the framework takes no metrics.
inline PluginSeries* SeriesAt(const std::vector<PluginSeries*>& series, size_t i) {
  return series.empty() ? nullptr : series[i];
}

// Waiting pods are keyed by UID; pods without one (manifests in simulation) by namespace/name.
inline std::string WaitingKey(const Pod& pod) {
  return pod.metadata.uid.empty() ? pod.Key() : pod.metadata.uid;
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

}  // namespace berth
