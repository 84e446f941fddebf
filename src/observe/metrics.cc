#include "observe/metrics.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace berth::observe {
namespace {

std::string Escape(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

std::string Number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

std::string Labels(const std::vector<std::string>& names, const std::vector<std::string>& values,
                   const std::string& extra = "") {
  std::string out;
  for (size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (!out.empty()) out += ',';
    out += fmt::format("{}=\"{}\"", names[i], Escape(values[i]));
  }
  if (!extra.empty()) {
    if (!out.empty()) out += ',';
    out += extra;
  }
  return out.empty() ? "" : "{" + out + "}";
}

}  // namespace

std::vector<double> ExponentialBuckets(double start, double factor, int count) {
  std::vector<double> b;
  for (int i = 0; i < count; ++i) b.push_back(start * std::pow(factor, i));
  return b;
}

MetricFamily::MetricFamily(std::string name, std::string help, Type type,
                           std::vector<std::string> labels, std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      type_(type),
      labels_(std::move(labels)),
      bounds_(std::move(buckets)) {}

void MetricFamily::Add(const std::vector<std::string>& lv, double v) {
  std::lock_guard lock(mu_);
  series_[lv].value += v;
}

MetricFamily::SeriesData& MetricFamily::SeriesLocked(std::initializer_list<std::string_view> lv) {
  auto it = series_.find(lv);
  if (it == series_.end())
    it = series_.emplace(std::vector<std::string>(lv.begin(), lv.end()), SeriesData{}).first;
  return it->second;
}

void MetricFamily::Add(std::initializer_list<std::string_view> lv, double v) {
  std::lock_guard lock(mu_);
  SeriesLocked(lv).value += v;
}

void MetricFamily::Observe(std::initializer_list<std::string_view> lv, double v) {
  std::lock_guard lock(mu_);
  ObserveLocked(SeriesLocked(lv), v);
}

void MetricFamily::Set(const std::vector<std::string>& lv, double v) {
  std::lock_guard lock(mu_);
  series_[lv].value = v;
}

void MetricFamily::Observe(const std::vector<std::string>& lv, double v) {
  std::lock_guard lock(mu_);
  ObserveLocked(series_[lv], v);
}

void MetricFamily::ObserveLocked(SeriesData& s, double v) {
  if (s.buckets.empty()) s.buckets.assign(bounds_.size(), 0);
  auto it = std::lower_bound(bounds_.begin(), bounds_.end(), v);
  if (it != bounds_.end()) ++s.buckets[it - bounds_.begin()];
  s.sum += v;
  ++s.count;
}

MetricFamily::Series* MetricFamily::Child(const std::vector<std::string>& lv) {
  std::lock_guard lock(mu_);
  SeriesData& s = series_[lv];
  if (type_ == Type::kHistogram && s.buckets.empty()) s.buckets.assign(bounds_.size(), 0);
  return &s;
}

void MetricFamily::AddTo(Series* series, double v) {
  std::lock_guard lock(mu_);
  series->value += v;
}

void MetricFamily::ObserveOn(Series* series, double v) {
  std::lock_guard lock(mu_);
  ObserveLocked(*series, v);
}

void MetricFamily::Reset() {
  std::lock_guard lock(mu_);
  series_.clear();
}

void MetricFamily::AppendText(std::string* out) const {
  const char* type = type_ == Type::kCounter ? "counter"
                     : type_ == Type::kGauge ? "gauge"
                                             : "histogram";
  *out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name_, help_, name_, type);
  std::lock_guard lock(mu_);
  for (const auto& [lv, s] : series_) {
    if (type_ != Type::kHistogram) {
      *out += fmt::format("{}{} {}\n", name_, Labels(labels_, lv), Number(s.value));
      continue;
    }
    uint64_t cumulative = 0;
    for (size_t i = 0; i < bounds_.size(); ++i) {
      cumulative += s.buckets[i];
      *out += fmt::format("{}_bucket{} {}\n", name_,
                          Labels(labels_, lv, fmt::format("le=\"{}\"", Number(bounds_[i]))),
                          cumulative);
    }
    *out += fmt::format("{}_bucket{} {}\n", name_, Labels(labels_, lv, "le=\"+Inf\""), s.count);
    *out += fmt::format("{}_sum{} {}\n", name_, Labels(labels_, lv), Number(s.sum));
    *out += fmt::format("{}_count{} {}\n", name_, Labels(labels_, lv), s.count);
  }
}

MetricFamily* MetricsRegistry::Counter(const std::string& name, const std::string& help,
                                       std::vector<std::string> labels) {
  families_.push_back(
      std::make_unique<MetricFamily>(name, help, MetricFamily::Type::kCounter, std::move(labels)));
  return families_.back().get();
}

MetricFamily* MetricsRegistry::Gauge(const std::string& name, const std::string& help,
                                     std::vector<std::string> labels) {
  families_.push_back(
      std::make_unique<MetricFamily>(name, help, MetricFamily::Type::kGauge, std::move(labels)));
  return families_.back().get();
}

MetricFamily* MetricsRegistry::Histogram(const std::string& name, const std::string& help,
                                         std::vector<std::string> labels,
                                         std::vector<double> buckets) {
  families_.push_back(std::make_unique<MetricFamily>(name, help, MetricFamily::Type::kHistogram,
                                                     std::move(labels), std::move(buckets)));
  return families_.back().get();
}

std::string MetricsRegistry::Expose() const {
  std::string out;
  for (const auto& f : families_) f->AppendText(&out);
  return out;
}

}  // namespace berth::observe
