#include "berth/framework/cycle_state.h"

namespace berth {

void CycleState::Put(const void* id, std::shared_ptr<StateData> data) {
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->first != id) continue;
    if (data) {
      it->second = std::move(data);
    } else {
      entries_.erase(it);
    }
    return;
  }
  if (data) entries_.emplace_back(id, std::move(data));
}

CycleState CycleState::Clone() const {
  CycleState out;
  out.skip_filter_ = skip_filter_;
  out.skip_score_ = skip_score_;
  out.record_plugin_metrics_ = record_plugin_metrics_;
  out.entries_.reserve(entries_.size());
  for (const auto& [k, v] : entries_) out.entries_.emplace_back(k, v->Clone());
  return out;
}

}  // namespace berth
