// CoschedulingArgs: decoded, defaulted and validated once, when the configuration loads, as
// scheduler-plugins' defaults and ValidateCoschedulingArgs do.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "config/decode_util.h"
#include "plugins/coscheduling/coscheduling.h"

namespace berth {

using config::internal::Fields;
using config::internal::Problems;

Result<std::shared_ptr<const PluginArgs>> DecodeCoschedulingArgs(const nlohmann::json* raw,
                                                                 const std::string& path) {
  Problems p;
  Fields f(raw, path, p,
           {"apiVersion", "kind", "permitWaitingTimeSeconds", "podGroupBackoffSeconds",
            "podGroupRejectPercentage"});
  auto args = std::make_shared<CoschedulingArgs>();
  if (auto v = f.Int64("permitWaitingTimeSeconds")) args->permit_waiting_time_seconds = *v;
  if (auto v = f.Int64("podGroupBackoffSeconds")) args->pod_group_backoff_seconds = *v;
  if (auto v = f.Int32("podGroupRejectPercentage")) args->pod_group_reject_percentage = *v;
  if (p.ok()) {
    if (args->permit_waiting_time_seconds < 0)
      p.Add(f.PathOf("permitWaitingTimeSeconds"),
            fmt::format("invalid value {}: must be greater than 0",
                        args->permit_waiting_time_seconds));
    if (args->pod_group_backoff_seconds < 0)
      p.Add(
          f.PathOf("podGroupBackoffSeconds"),
          fmt::format("invalid value {}: must be greater than 0", args->pod_group_backoff_seconds));
    if (args->pod_group_reject_percentage < 0 || args->pod_group_reject_percentage > 100)
      p.Add(f.PathOf("podGroupRejectPercentage"),
            fmt::format("invalid value {}: must be between 0 and 100",
                        args->pod_group_reject_percentage));
  }
  if (!p.ok()) return p.error();
  return std::shared_ptr<const PluginArgs>(std::move(args));
}

void CoschedulingArgs::Encode(nlohmann::json& out) const {
  out["permitWaitingTimeSeconds"] = permit_waiting_time_seconds;
  out["podGroupBackoffSeconds"] = pod_group_backoff_seconds;
  out["podGroupRejectPercentage"] = pod_group_reject_percentage;
}

}  // namespace berth
