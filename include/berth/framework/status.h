// Status: the outcome of one plugin call, with kube-scheduler's codes.
//
// A Status is a small value type. Success carries no allocation. Rejections carry one or more
// human-readable reasons (they become the FitError histogram) and the name of the plugin that
// rejected, which the framework stamps after the call. The reasons and the plugin name are one
// immutable block shared by copies, so a plugin that rejects many nodes for the same reason can
// build its Status once (with WithPlugin(Name()) already applied) and return copies of it: a
// copy costs a reference count, not an allocation, and the framework's stamp of the same name
// changes nothing. Modifying a Status (WithPlugin with another name, AppendReason) copies the
// block first, so a copy never changes under its holder.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "berth/export.h"

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

BERTH_EXPORT std::string_view CodeName(Code c);

// Exported member by member: GCC takes no visibility attribute after [[nodiscard]].
class [[nodiscard]] Status {
 public:
  Status() = default;  // Success
  BERTH_EXPORT Status(Code code, std::vector<std::string> reasons);
  BERTH_EXPORT Status(Code code, std::string reason);

  static Status Success() { return {}; }
  static Status Error(std::string msg) { return {Code::kError, std::move(msg)}; }
  static Status Unschedulable(std::string reason) {
    return {Code::kUnschedulable, std::move(reason)};
  }
  static Status Unresolvable(std::string reason) {
    return {Code::kUnschedulableAndUnresolvable, std::move(reason)};
  }
  static Status Skip() { return Status(Code::kSkip); }
  static Status Wait() { return Status(Code::kWait); }
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

  BERTH_EXPORT const std::vector<std::string>& reasons() const;
  // Reasons joined with ", ".
  BERTH_EXPORT std::string Message() const;

  // The plugin that produced this status (set by the framework on rejection).
  BERTH_EXPORT const std::string& plugin() const;
  // Sets the plugin name; a no-op when it is already `name`.
  BERTH_EXPORT Status& WithPlugin(std::string_view name);
  // Adds a reason after the others.
  BERTH_EXPORT Status& AppendReason(std::string reason);

  friend bool operator==(const Status& a, const Status& b) {
    return a.code_ == b.code_ && a.reasons() == b.reasons();
  }

 private:
  struct Detail {
    std::vector<std::string> reasons;
    std::string plugin;
  };
  explicit Status(Code code) : code_(code) {}
  Code code_ = Code::kSuccess;
  // Null: no reasons and no plugin. Shared by copies, so changed in place only while this
  // Status is its only holder.
  std::shared_ptr<Detail> detail_;
  Detail& OwnDetail();
};

}  // namespace berth
