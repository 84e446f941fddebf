// What the Job controller computes from a Job and its pods, without the API (upstream's
// pkg/controller/job indexed_job_utils.go, backoff_utils.go and the condition helpers).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "berth/framework/clock.h"
#include "controllers/object_util.h"

namespace berth::controllers {

inline constexpr std::string_view kJobCompletionIndex = "batch.kubernetes.io/job-completion-index";
inline constexpr std::string_view kJobNameLabel = "batch.kubernetes.io/job-name";
inline constexpr std::string_view kControllerUidLabel = "batch.kubernetes.io/controller-uid";

// The first pod failure delays replacements by 10 s, each further failure since the last
// success doubles it, up to 6 minutes (DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff).
inline constexpr Duration kJobPodFailureBackoff = std::chrono::seconds(10);
inline constexpr Duration kJobPodFailureMaxBackoff = std::chrono::minutes(6);

// A set of completion indexes, written as status.completedIndexes ("1,3-5,7").
std::set<int> ParseIndexes(const std::string& text, int completions);
std::string FormatIndexes(const std::set<int>& indexes);

// The pod's completion index (annotation, else label), -1 when absent or malformed.
int CompletionIndexOf(const Json& pod);

// When a finished pod finished: its containers' latest finishedAt, else its Ready condition's
// transition to False, else its creation (Unix seconds).
UnixTime FinishedAt(const Json& pod);

// How long new pods must still wait after the failures in `pods` (0: none): the failures
// after the last success count, from the last failure.
Duration BackoffRemaining(const std::vector<const Json*>& pods, TimePoint now,
                          Duration base = kJobPodFailureBackoff,
                          Duration max = kJobPodFailureMaxBackoff);

// The condition of `type` in status.conditions, or null.
const Json* FindJobCondition(const Json& job, std::string_view type);
bool JobConditionTrue(const Json& job, std::string_view type);
// Complete or Failed is True (the job controller is done with it).
bool IsJobFinished(const Json& job);
// The time the Job finished (its Complete or Failed condition's transition), if it did.
std::optional<UnixTime> JobFinishTime(const Json& job);
Json NewJobCondition(std::string_view type, std::string_view status, std::string_view reason,
                     std::string_view message, UnixTime now);

// The lowest `count` indexes below `completions` that neither succeeded nor have an active pod.
std::vector<int> FirstPendingIndexes(const std::set<int>& succeeded, const std::set<int>& active,
                                     int count, int completions);

}  // namespace berth::controllers
