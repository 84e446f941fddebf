#include "ui/decision_log.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

#include "explain/decision_record.h"

namespace berth::ui {

std::string DecisionJson(const SchedulingAttempt& a, size_t max_nodes) {
  using nlohmann::json;
  json head = json::object();
  head["pod"] = a.pod ? a.pod->Key() : "";
  head["profile"] = a.profile;
  switch (a.outcome) {
    case SchedulingAttempt::Outcome::kScheduled:
      head["outcome"] = "Scheduled";
      break;
    case SchedulingAttempt::Outcome::kUnschedulable:
      head["outcome"] = "Unschedulable";
      break;
    case SchedulingAttempt::Outcome::kError:
      head["outcome"] = "Error";
      break;
  }
  head["node"] = a.node;
  head["message"] = a.message;
  head["attempt"] = a.attempt;
  head["evaluatedNodes"] = a.evaluated_nodes;
  head["feasibleNodes"] = a.feasible_nodes;
  if (a.nominating) head["nominatedNode"] = a.nominating->node_name;
  head["victims"] = a.victims;
  head["filterPlugins"] = a.filter_plugins;
  head["scorePlugins"] = a.score_plugins;
  head["scoreWeights"] = a.score_weights;
  head["decidedAt"] = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  // The per-node results are written as the decision records write them, straight from the
  // attempt: this runs for every attempt `berth up` makes.
  explain::NodeResults nodes = explain::NodeResultsJson(a, max_nodes);
  std::string out = head.dump();
  out.pop_back();  // the closing brace
  out += ",\"filter\":" + nodes.filter;
  out += ",\"score\":" + nodes.score;
  out += ",\"finalScore\":" + nodes.final_score;
  // Only a PreFilter rejection is shown (the records list every PreFilter plugin's outcome).
  out += ",\"preFilter\":";
  out += a.pre_filter_rejection
             ? nlohmann::json{{a.pre_filter_rejection->plugin(), a.pre_filter_rejection->Message()}}
                   .dump()
             : std::string("null");
  out += ",\"truncatedNodes\":" + std::to_string(nodes.truncated);
  out += "}";
  return out;
}

DecisionLog::DecisionLog(DecisionLogOptions options) : options_(options) {}

void DecisionLog::OnAttempt(const SchedulingAttempt& attempt) {
  if (!attempt.pod) return;
  std::string key = attempt.pod->Key();
  std::string json = DecisionJson(attempt, options_.max_nodes);
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    bytes_ -= it->second.json.size();
    order_.erase(it->second.order);
    entries_.erase(it);
  }
  bytes_ += json.size();
  order_.push_back(key);
  entries_.emplace(std::move(key), Entry{std::move(json), std::prev(order_.end())});
  // The newest entry stays even when it alone exceeds the byte budget.
  while (entries_.size() > 1 &&
         (entries_.size() > options_.max_pods || bytes_ > options_.max_bytes)) {
    auto oldest = entries_.find(order_.front());
    bytes_ -= oldest->second.json.size();
    entries_.erase(oldest);
    order_.pop_front();
  }
}

std::optional<std::string> DecisionLog::Get(const std::string& pod_key) const {
  std::lock_guard lock(mu_);
  auto it = entries_.find(pod_key);
  if (it == entries_.end()) return std::nullopt;
  return it->second.json;
}

size_t DecisionLog::size() const {
  std::lock_guard lock(mu_);
  return entries_.size();
}

size_t DecisionLog::bytes() const {
  std::lock_guard lock(mu_);
  return bytes_;
}

}  // namespace berth::ui
