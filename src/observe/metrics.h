// A small Prometheus registry: counters, gauges and histograms with label vectors, exposed in
// the text format (0.0.4) that Prometheus scrapes.
//
// Threads: every method is thread-safe; an update takes one short lock on its metric family.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace berth::observe {

// Bucket helpers with Prometheus client_golang's semantics.
std::vector<double> ExponentialBuckets(double start, double factor, int count);

class MetricFamily {
  struct SeriesData;

 public:
  enum class Type { kCounter, kGauge, kHistogram };
  // One label combination, resolved once so that hot paths update it without building label
  // vectors or searching the family (as client_golang's cached children). Valid until Reset().
  using Series = SeriesData;
  MetricFamily(std::string name, std::string help, Type type, std::vector<std::string> labels,
               std::vector<double> buckets = {});

  // Counter: adds; gauge: adds (Set replaces); histogram: observes. The string_view forms
  // find an existing series without building a label vector (a braced list picks them).
  void Add(const std::vector<std::string>& label_values, double v = 1);
  void Add(std::initializer_list<std::string_view> label_values, double v = 1);
  void Observe(std::initializer_list<std::string_view> label_values, double v);
  void Set(const std::vector<std::string>& label_values, double v);
  void Observe(const std::vector<std::string>& label_values, double v);
  // The series of `label_values`, created (at zero) if absent.
  Series* Child(const std::vector<std::string>& label_values);
  // Named apart from Add/Observe: `{}` label values must not convert to a null Series.
  void AddTo(Series* series, double v = 1);
  void ObserveOn(Series* series, double v);
  // Drops every series; pointers from Child() dangle afterwards (not used on families whose
  // children are cached).
  void Reset();
  void AppendText(std::string* out) const;

 private:
  struct SeriesData {
    double value = 0;               // counter / gauge
    std::vector<uint64_t> buckets;  // histogram: per bucket (not cumulative)
    double sum = 0;
    uint64_t count = 0;
  };
  std::string name_, help_;
  Type type_;
  std::vector<std::string> labels_;
  std::vector<double> bounds_;
  mutable std::mutex mu_;
  // Orders label vectors and lists of views alike, so a series is found without a copy.
  struct LabelsLess {
    using is_transparent = void;
    template <class A, class B>
    bool operator()(const A& a, const B& b) const {
      return std::lexicographical_compare(
          a.begin(), a.end(), b.begin(), b.end(),
          [](std::string_view x, std::string_view y) { return x < y; });
    }
  };
  // Nodes are stable: Child() keeps them.
  std::map<std::vector<std::string>, SeriesData, LabelsLess> series_;
  SeriesData& SeriesLocked(std::initializer_list<std::string_view> label_values);

  void ObserveLocked(SeriesData& s, double v);
};

class MetricsRegistry {
 public:
  MetricFamily* Counter(const std::string& name, const std::string& help,
                        std::vector<std::string> labels = {});
  MetricFamily* Gauge(const std::string& name, const std::string& help,
                      std::vector<std::string> labels = {});
  MetricFamily* Histogram(const std::string& name, const std::string& help,
                          std::vector<std::string> labels, std::vector<double> buckets);
  // The text exposition of every family, in registration order.
  std::string Expose() const;

 private:
  std::vector<std::unique_ptr<MetricFamily>> families_;
};

}  // namespace berth::observe
