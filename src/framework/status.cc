#include "berth/framework/status.h"

namespace berth {

std::string_view CodeName(Code c) {
  switch (c) {
    case Code::kSuccess:
      return "Success";
    case Code::kError:
      return "Error";
    case Code::kUnschedulable:
      return "Unschedulable";
    case Code::kUnschedulableAndUnresolvable:
      return "UnschedulableAndUnresolvable";
    case Code::kWait:
      return "Wait";
    case Code::kSkip:
      return "Skip";
    case Code::kPending:
      return "Pending";
  }
  return "Unknown";
}

namespace {
const std::vector<std::string> kNoReasons;
const std::string kNoPlugin;
}  // namespace

Status::Status(Code code, std::vector<std::string> reasons) : code_(code) {
  if (!reasons.empty()) detail_ = std::make_shared<Detail>(Detail{std::move(reasons), {}});
}

Status::Status(Code code, std::string reason) : code_(code) {
  auto detail = std::make_shared<Detail>();
  detail->reasons.push_back(std::move(reason));
  detail_ = std::move(detail);
}

const std::vector<std::string>& Status::reasons() const {
  return detail_ ? detail_->reasons : kNoReasons;
}

const std::string& Status::plugin() const { return detail_ ? detail_->plugin : kNoPlugin; }

Status::Detail& Status::OwnDetail() {
  if (!detail_) {
    detail_ = std::make_shared<Detail>();
  } else if (detail_.use_count() > 1) {
    detail_ = std::make_shared<Detail>(*detail_);
  }
  return *detail_;
}

Status& Status::WithPlugin(std::string_view name) {
  if (plugin() != name) OwnDetail().plugin.assign(name);
  return *this;
}

Status& Status::AppendReason(std::string reason) {
  OwnDetail().reasons.push_back(std::move(reason));
  return *this;
}

std::string Status::Message() const {
  std::string out;
  for (const auto& r : reasons()) {
    if (!out.empty()) out += ", ";
    out += r;
  }
  return out;
}

}  // namespace berth
