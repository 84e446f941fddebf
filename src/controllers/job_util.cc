#include "controllers/job_util.h"

#include <fmt/format.h>

#include <algorithm>

namespace berth::controllers {

std::set<int> ParseIndexes(const std::string& text, int completions) {
  std::set<int> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string part = text.substr(start, comma - start);
    start = comma + 1;
    const size_t dash = part.find('-');
    try {
      const int low = std::stoi(part.substr(0, dash));
      const int high = dash == std::string::npos ? low : std::stoi(part.substr(dash + 1));
      for (int i = std::max(low, 0); i <= high && i < completions; ++i) out.insert(i);
    } catch (const std::exception&) {
      // A malformed interval is skipped, as upstream's parseIndexesFromString.
    }
  }
  return out;
}

std::string FormatIndexes(const std::set<int>& indexes) {
  std::string out;
  auto it = indexes.begin();
  while (it != indexes.end()) {
    const int first = *it;
    int last = first;
    for (++it; it != indexes.end() && *it == last + 1; ++it) last = *it;
    if (!out.empty()) out += ",";
    out += last == first ? std::to_string(first) : fmt::format("{}-{}", first, last);
  }
  return out;
}

int CompletionIndexOf(const Json& pod) {
  const Json& meta = Member(pod, "metadata");
  std::string text = StringAt(Member(meta, "annotations"), kJobCompletionIndex);
  if (text.empty()) text = StringAt(Member(meta, "labels"), kJobCompletionIndex);
  if (text.empty() || text.size() > 9 ||
      !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return -1;
  }
  return std::stoi(text);
}

UnixTime FinishedAt(const Json& pod) {
  const Json& status = Member(pod, "status");
  UnixTime latest = 0;
  bool all = true;
  const Json& containers = Member(status, "containerStatuses");
  if (containers.is_array() && !containers.empty()) {
    for (const Json& c : containers) {
      auto at = ParseTimestamp(StringAt(Member(Member(c, "state"), "terminated"), "finishedAt"));
      if (!at.ok() || *at == 0) {
        all = false;
        break;
      }
      latest = std::max(latest, *at);
    }
    if (all) return latest;
  }
  const Json& conditions = Member(status, "conditions");
  if (conditions.is_array()) {
    for (const Json& c : conditions) {
      if (StringAt(c, "type") != "Ready" || StringAt(c, "status") != "False") continue;
      if (auto at = ParseTimestamp(StringAt(c, "lastTransitionTime")); at.ok() && *at != 0)
        return *at;
    }
  }
  return CreatedAt(pod);
}

Duration BackoffRemaining(const std::vector<const Json*>& pods, TimePoint now, Duration base,
                          Duration max) {
  UnixTime last_success = 0, last_failure = 0;
  std::vector<UnixTime> failures;
  for (const Json* p : pods) {
    const std::string phase = StringAt(Member(*p, "status"), "phase");
    if (phase == "Succeeded") {
      last_success = std::max(last_success, FinishedAt(*p));
    } else if (phase == "Failed") {
      failures.push_back(FinishedAt(*p));
    }
  }
  int count = 0;
  for (UnixTime f : failures) {
    // Failures at the second of the last success count, as upstream's "not after" keeps them.
    if (last_success != 0 && f <= last_success) continue;
    ++count;
    last_failure = std::max(last_failure, f);
  }
  if (count == 0) return Duration::zero();
  Duration backoff = base;
  for (int i = 1; i < count; ++i) {
    backoff *= 2;
    if (backoff >= max) {
      backoff = max;
      break;
    }
  }
  const Duration elapsed = now - TimePoint(std::chrono::seconds(last_failure));
  return backoff < elapsed ? Duration::zero() : backoff - elapsed;
}

const Json* FindJobCondition(const Json& job, std::string_view type) {
  const Json& conditions = Member(Member(job, "status"), "conditions");
  if (!conditions.is_array()) return nullptr;
  for (const Json& c : conditions) {
    if (StringAt(c, "type") == type) return &c;
  }
  return nullptr;
}

bool JobConditionTrue(const Json& job, std::string_view type) {
  const Json* c = FindJobCondition(job, type);
  return c && StringAt(*c, "status") == "True";
}

bool IsJobFinished(const Json& job) {
  return JobConditionTrue(job, "Complete") || JobConditionTrue(job, "Failed");
}

std::optional<UnixTime> JobFinishTime(const Json& job) {
  for (const char* type : {"Complete", "Failed"}) {
    const Json* c = FindJobCondition(job, type);
    if (!c || StringAt(*c, "status") != "True") continue;
    auto at = ParseTimestamp(StringAt(*c, "lastTransitionTime"));
    if (at.ok() && *at != 0) return *at;
  }
  return std::nullopt;
}

Json NewJobCondition(std::string_view type, std::string_view status, std::string_view reason,
                     std::string_view message, UnixTime now) {
  Json c = {{"type", type},
            {"status", status},
            {"lastProbeTime", FormatTimestamp(now)},
            {"lastTransitionTime", FormatTimestamp(now)}};
  if (!reason.empty()) c["reason"] = reason;
  if (!message.empty()) c["message"] = message;
  return c;
}

std::vector<int> FirstPendingIndexes(const std::set<int>& succeeded, const std::set<int>& active,
                                     int count, int completions) {
  std::vector<int> out;
  for (int i = 0; i < completions && static_cast<int>(out.size()) < count; ++i) {
    if (!succeeded.count(i) && !active.count(i)) out.push_back(i);
  }
  return out;
}

}  // namespace berth::controllers
