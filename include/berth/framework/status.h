// Status: the outcome of one plugin call, with kube-scheduler's codes.
//
// A Status is a small value type. Success carries no allocation. Rejections carry one or more
// human-readable reasons (they become the FitError histogram) and the name of the plugin that
// rejected, which the framework stamps after the call.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace berth {

enum class Code : uint8_t {
  kSuccess = 0,
  // Internal error: the cycle is aborted and the pod retried after error backoff.
  kError = 1,
  // The node (or cycle) cannot host the pod now; preemption may help.
  kUnschedulable = 2,
  // Like kUnschedulable, but preemption cannot help (node excluded from preemption candidates).
  kUnschedulableAndUnresolvable = 3,
  // Permit only: hold the pod until allowed or rejected, or the timeout expires.
  kWait = 4,
  // Bind: not handled by this plugin. PreFilter/PreScore: skip the paired Filter/Score.
  kSkip = 5,
  // The cycle stops without being a failure; the pod is retried without backoff.
  kPending = 6,
};

std::string_view CodeName(Code c);

class [[nodiscard]] Status {
 public:
  Status() = default;  // Success
  Status(Code code, std::vector<std::string> reasons) : code_(code), reasons_(std::move(reasons)) {}
  Status(Code code, std::string reason) : code_(code) { reasons_.push_back(std::move(reason)); }

  static Status Success() { return {}; }
  static Status Error(std::string msg) { return {Code::kError, std::move(msg)}; }
  static Status Unschedulable(std::string reason) {
    return {Code::kUnschedulable, std::move(reason)};
  }
  static Status Unresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, std::move(reason)};
  }
  static Status Skip() { return Status(Code::kSkip, std::vector<std::string>{}); }
  static Status Wait() { return Status(Code::kWait, std::vector<std::string>{}); }
  static Status Pending(std::string reason) { return {Code::kPending, std::move(reason)}; }

  Code code() const { return code_; }
  bool IsSuccess() const { return code_ == Code::kSuccess; }
  bool IsSkip() const { return code_ == Code::kSkip; }
  bool IsWait() const { return code_ == Code::kWait; }
  bool IsError() const { return code_ == Code::kError; }
  // Unschedulable, UnschedulableAndUnresolvable or Pending.
  bool IsRejected() const {
    return code_ == Code::kUnschedulable || code_ == Code::kUnschedulableAndUnresolvable ||
           code_ == Code::kPending;
  }

  const std::vector<std::string>& reasons() const { return reasons_; }
  // Reasons joined with ", ".
  std::string Message() const;

  // The plugin that produced this status (set by the framework on rejection).
  const std::string& plugin() const { return plugin_; }
  Status& WithPlugin(std::string_view name) {
    plugin_.assign(name);
    return *this;
  }
  // Prefixes every reason, e.g. for errors raised while running a plugin.
  Status& AppendReason(std::string reason) {
    reasons_.push_back(std::move(reason));
    return *this;
  }

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.reasons_ == b.reasons_;
  }

 private:
  Code code_ = Code::kSuccess;
  std::vector<std::string> reasons_;
  std::string plugin_;
};

}  // namespace berth
