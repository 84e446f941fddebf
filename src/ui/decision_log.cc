#include "ui/decision_log.h"

#include <chrono>
#include <nlohmann/json.hpp>
#include <utility>

namespace berth::ui {

namespace {

const char* OutcomeName(SchedulingAttempt::Outcome outcome) {
  switch (outcome) {
    case SchedulingAttempt::Outcome::kScheduled:
      return "Scheduled";
    case SchedulingAttempt::Outcome::kUnschedulable:
      return "Unschedulable";
    case SchedulingAttempt::Outcome::kError:
      return "Error";
  }
  return "Error";
}

size_t StringsBytes(const std::vector<std::string>& v) {
  size_t n = 0;
  for (const auto& s : v) n += sizeof(s) + s.size();
  return n;
}

}  // namespace

Decision::Decision(const SchedulingAttempt& a, size_t max_nodes)
    : pod_(a.pod ? a.pod->Key() : ""),
      profile_(a.profile),
      outcome_(OutcomeName(a.outcome)),
      node_(a.node),
      message_(a.message),
      attempt_(a.attempt),
      evaluated_nodes_(a.evaluated_nodes),
      feasible_nodes_(a.feasible_nodes),
      victims_(a.victims),
      score_plugins_(a.score_plugins),
      score_weights_(a.score_weights),
      decided_at_ms_(std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count()),
      nodes_(explain::SelectNodeResults(a, max_nodes)) {
  if (a.nominating) nominated_node_ = a.nominating->node_name;
  if (a.pre_filter_rejection)
    pre_filter_rejection_.emplace(a.pre_filter_rejection->plugin(),
                                  a.pre_filter_rejection->Message());
}

std::string Decision::Json() const {
  using nlohmann::json;
  json head = json::object();
  head["pod"] = pod_;
  head["profile"] = profile_;
  head["outcome"] = outcome_;
  head["node"] = node_;
  head["message"] = message_;
  head["attempt"] = attempt_;
  head["evaluatedNodes"] = evaluated_nodes_;
  head["feasibleNodes"] = feasible_nodes_;
  if (nominated_node_) head["nominatedNode"] = *nominated_node_;
  head["victims"] = victims_;
  head["filterPlugins"] = nodes_.filter_plugins;
  head["scorePlugins"] = score_plugins_;
  head["scoreWeights"] = score_weights_;
  head["decidedAt"] = decided_at_ms_;
  const explain::NodeResults nodes = explain::NodeResultsJson(nodes_);
  std::string out = head.dump();
  out.pop_back();  // the closing brace
  out += ",\"filter\":" + nodes.filter;
  out += ",\"score\":" + nodes.score;
  out += ",\"finalScore\":" + nodes.final_score;
  // Only a PreFilter rejection is shown (the records list every PreFilter plugin's outcome).
  out += ",\"preFilter\":";
  out += pre_filter_rejection_
             ? json{{pre_filter_rejection_->first, pre_filter_rejection_->second}}.dump()
             : std::string("null");
  out += ",\"truncatedNodes\":" + std::to_string(nodes_.truncated);
  out += "}";
  return out;
}

size_t Decision::bytes() const {
  return sizeof(*this) + pod_.size() + profile_.size() + node_.size() + message_.size() +
         StringsBytes(victims_) + StringsBytes(score_plugins_) +
         score_weights_.size() * sizeof(int64_t) + nodes_.bytes();
}

std::string DecisionJson(const SchedulingAttempt& a, size_t max_nodes) {
  return Decision(a, max_nodes).Json();
}

DecisionLog::DecisionLog(DecisionLogOptions options) : options_(options) {}

void DecisionLog::OnAttempt(const SchedulingAttempt& attempt) {
  if (!attempt.pod) return;
  auto decision = std::make_shared<const Decision>(attempt, options_.max_nodes);
  std::string key = decision->pod_key();
  const size_t size = decision->bytes();
  std::lock_guard lock(mu_);
  if (auto it = entries_.find(key); it != entries_.end()) {
    bytes_ -= it->second.bytes;
    order_.erase(it->second.order);
    entries_.erase(it);
  }
  bytes_ += size;
  order_.push_back(key);
  entries_.emplace(std::move(key), Entry{std::move(decision), size, std::prev(order_.end())});
  // The newest entry stays even when it alone exceeds the byte budget.
  while (entries_.size() > 1 &&
         (entries_.size() > options_.max_pods || bytes_ > options_.max_bytes)) {
    auto oldest = entries_.find(order_.front());
    bytes_ -= oldest->second.bytes;
    entries_.erase(oldest);
    order_.pop_front();
  }
}

std::optional<std::string> DecisionLog::Get(const std::string& pod_key) const {
  std::shared_ptr<const Decision> decision;
  {
    std::lock_guard lock(mu_);
    auto it = entries_.find(pod_key);
    if (it == entries_.end()) return std::nullopt;
    decision = it->second.decision;
  }
  return decision->Json();
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
