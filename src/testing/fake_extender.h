// FakeExtender: the in-memory twin of an HTTP extender for tests. Behaviour is set through
// public members before use; calls are counted. Thread-safe for the counters only.
#pragma once

#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "berth/framework/extender.h"

namespace berth::testing {

class FakeExtender final : public Extender {
 public:
  explicit FakeExtender(std::string name) : name_(std::move(name)) {}

  // Capabilities.
  bool filter = false, prioritize = false, bind = false, preempt = false;
  bool ignorable = false;
  int64_t weight = 1;
  bool interested = true;
  // Filter: nodes listed here are rejected with the reason given (unresolvable ones too);
  // `fail` makes every call an error.
  std::map<std::string, std::string> reject, reject_unresolvable;
  // Prioritize: node -> score (0..10); others score 0.
  std::map<std::string, int64_t> scores;
  // Preempt: only these nodes stay candidates (empty: all).
  std::vector<std::string> preempt_allowed;
  bool fail = false;

  std::atomic<int> filter_calls{0}, prioritize_calls{0}, bind_calls{0}, preempt_calls{0};
  std::mutex mu;
  std::vector<std::string> bound;  // "ns/name@node"

  const std::string& Name() const override { return name_; }
  bool IsFilter() const override { return filter; }
  bool IsPrioritizer() const override { return prioritize; }
  bool IsBinder() const override { return bind; }
  bool SupportsPreemption() const override { return preempt; }
  bool IsIgnorable() const override { return ignorable; }
  int64_t Weight() const override { return weight; }
  bool IsInterested(const Pod&) const override { return interested; }

  Result<ExtenderFilterResult> Filter(const Pod&, std::span<const NodeInfo* const> nodes) override {
    ExtenderFilterResult r;
    if (!filter) {  // like an HTTP extender without a filter verb
      r.feasible.assign(nodes.begin(), nodes.end());
      return r;
    }
    ++filter_calls;
    if (fail) return Error{name_ + " failed"};
    for (const NodeInfo* n : nodes) {
      if (auto it = reject_unresolvable.find(n->name()); it != reject_unresolvable.end()) {
        r.failed_and_unresolvable[n->name()] = it->second;
      } else if (auto it2 = reject.find(n->name()); it2 != reject.end()) {
        r.failed[n->name()] = it2->second;
      } else {
        r.feasible.push_back(n);
      }
    }
    return r;
  }
  Result<std::vector<HostPriority>> Prioritize(const Pod&,
                                               std::span<const NodeInfo* const> nodes) override {
    std::vector<HostPriority> out;
    if (!prioritize) {
      for (const NodeInfo* n : nodes) out.push_back({n->name(), 0});
      return out;
    }
    ++prioritize_calls;
    if (fail) return Error{name_ + " failed"};
    for (const NodeInfo* n : nodes) {
      auto it = scores.find(n->name());
      out.push_back({n->name(), it == scores.end() ? 0 : it->second});
    }
    return out;
  }
  VoidResult Bind(const Pod& pod, std::string_view node) override {
    ++bind_calls;
    if (fail) return Error{name_ + " failed"};
    std::lock_guard lock(mu);
    bound.push_back(pod.Key() + "@" + std::string(node));
    return {};
  }
  Result<std::map<std::string, Victims>> ProcessPreemption(const Pod&,
                                                           const std::map<std::string, Victims>& in,
                                                           const Snapshot&) override {
    ++preempt_calls;
    if (fail) return Error{name_ + " failed"};
    std::map<std::string, Victims> out;
    for (const auto& [node, v] : in) {
      if (preempt_allowed.empty() ||
          std::find(preempt_allowed.begin(), preempt_allowed.end(), node) != preempt_allowed.end())
        out[node] = v;
    }
    return out;
  }

 private:
  std::string name_;
};

}  // namespace berth::testing
