// CycleState: the only channel between a plugin's extension points within one scheduling
// cycle. Plugins write typed data under typed keys (usually in PreFilter / PreScore) and read it
// in Filter / Score.
//
// Threading: written only from the scheduling thread at PreFilter, PreScore, Reserve and
// AddPod/RemovePod; read concurrently by Filter and Score. Clone() is used for nominated-pod
// evaluation and preemption dry-runs: each StateData decides how to copy itself.
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/export.h"

namespace berth {

class BERTH_EXPORT StateData {
 public:
  virtual ~StateData() = default;
  // A copy independent of this one for mutation via AddPod/RemovePod. Data that is never
  // mutated after it is written may return a shared pointer to itself.
  virtual std::shared_ptr<StateData> Clone() const = 0;
};

// A typed key. Declare one per datum as `inline constexpr StateKey<MyData> kMyKey{"..."};`
// Keys are compared by identity, so each declared key is distinct.
template <class T>
class StateKey {
 public:
  constexpr explicit StateKey(std::string_view name) : name_(name) {}
  std::string_view name() const { return name_; }
  const void* id() const { return this; }

 private:
  std::string_view name_;
};

class BERTH_EXPORT CycleState {
 public:
  template <class T>
  const T* Read(const StateKey<T>& key) const {
    return static_cast<const T*>(Find(key.id()));
  }
  template <class T>
  T* ReadMutable(const StateKey<T>& key) {
    return static_cast<T*>(const_cast<StateData*>(Find(key.id())));
  }
  template <class T>
  void Write(const StateKey<T>& key, std::shared_ptr<T> data) {
    Put(key.id(), std::move(data));
  }
  template <class T>
  void Delete(const StateKey<T>& key) {
    Put(key.id(), nullptr);
  }

  CycleState Clone() const;

  // Plugins whose PreFilter / PreScore returned Skip; the paired Filter / Score is not run.
  // Indexed by the plugin's position in the profile's filter / score list. Set by the
  // framework only.
  const std::vector<bool>& skipped_filters() const { return skip_filter_; }
  const std::vector<bool>& skipped_scores() const { return skip_score_; }

  // True in the sample of cycles (kube-scheduler's 10%) whose plugin calls the framework times
  // for scheduler_plugin_execution_duration_seconds. Set by the scheduler when the cycle starts.
  bool ShouldRecordPluginMetrics() const { return record_plugin_metrics_; }
  void SetRecordPluginMetrics(bool record) { record_plugin_metrics_ = record; }

 private:
  friend class Framework;
  std::vector<bool> skip_filter_;
  std::vector<bool> skip_score_;
  bool record_plugin_metrics_ = false;

  const StateData* Find(const void* id) const {
    for (const auto& [k, v] : entries_)
      if (k == id) return v.get();
    return nullptr;
  }
  void Put(const void* id, std::shared_ptr<StateData> data);

  std::vector<std::pair<const void*, std::shared_ptr<StateData>>> entries_;
};

}  // namespace berth
