// berth compare -o html: one self-contained page, the plots drawn here as inline SVG (no
// script, nothing fetched).
#include <fmt/format.h>

#include <algorithm>
#include <unordered_map>

#include "sim/compare.h"

namespace berth::sim {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                   "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};
const char* ColorOf(size_t c) { return kColors[c % std::size(kColors)]; }

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string Legend(const CompareResult& r) {
  std::string out = "<p class=\"legend\">";
  for (size_t c = 0; c < r.configs.size(); ++c)
    out += fmt::format(
        "<span><svg width=\"12\" height=\"12\"><rect width=\"12\" height=\"12\" "
        "fill=\"{}\"/></svg> {}</span> ",
        ColorOf(c), Escape(r.configs[c].name));
  return out + "</p>";
}

// Grouped bars: one group per label, one bar per configuration.
std::string GroupedBars(const std::string& id, const std::string& title,
                        const std::vector<std::string>& labels,
                        const std::vector<std::vector<int>>& values) {
  int top = 1;
  for (const auto& row : values)
    for (int v : row) top = std::max(top, v);
  const double group = std::max(8.0, 900.0 / std::max<size_t>(1, labels.size()));
  const double bar = std::max(1.0, group * 0.8 / std::max<size_t>(1, values.size()));
  const double width = 60 + group * labels.size(), height = 260, plot = 200;
  std::string out = fmt::format(
      "<h3>{}</h3><svg id=\"{}\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\">",
      Escape(title), id, width, height);
  out += fmt::format(
      "<line x1=\"50\" y1=\"10\" x2=\"50\" y2=\"{0}\" stroke=\"#333\"/>"
      "<line x1=\"50\" y1=\"{0}\" x2=\"{1:.0f}\" y2=\"{0}\" stroke=\"#333\"/>"
      "<text x=\"45\" y=\"15\" text-anchor=\"end\">{2}</text>"
      "<text x=\"45\" y=\"{0}\" text-anchor=\"end\">0</text>",
      10 + plot, width, top);
  for (size_t i = 0; i < labels.size(); ++i) {
    for (size_t c = 0; c < values.size(); ++c) {
      const int v = values[c][i];
      const double h = plot * v / top;
      out += fmt::format(
          "<rect class=\"bar\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\" "
          "fill=\"{}\"><title>{}: {}</title></rect>",
          52 + i * group + c * bar, 10 + plot - h, bar, h, ColorOf(c), Escape(labels[i]), v);
    }
    if (labels.size() <= 40)
      out += fmt::format(
          "<text x=\"{0:.1f}\" y=\"{1}\" font-size=\"10\" transform=\"rotate(45 {0:.1f} {1})\">"
          "{2}</text>",
          52 + i * group, 22 + plot, Escape(labels[i]));
  }
  return out + "</svg>";
}

// Lines: one per configuration, points (x, y) scaled to the plot.
std::string Lines(const std::string& id, const std::string& title, const std::string& x_label,
                  const std::vector<std::vector<std::pair<double, double>>>& series) {
  double max_x = 1, max_y = 1;
  for (const auto& s : series)
    for (const auto& [x, y] : s) max_x = std::max(max_x, x), max_y = std::max(max_y, y);
  const double w = 900, h = 220;
  std::string out = fmt::format(
      "<h3>{}</h3><svg id=\"{}\" class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" "
      "width=\"{:.0f}\" height=\"{:.0f}\">",
      Escape(title), id, w + 80, h + 50);
  out += fmt::format(
      "<line x1=\"50\" y1=\"10\" x2=\"50\" y2=\"{0:.0f}\" stroke=\"#333\"/>"
      "<line x1=\"50\" y1=\"{0:.0f}\" x2=\"{1:.0f}\" y2=\"{0:.0f}\" stroke=\"#333\"/>"
      "<text x=\"45\" y=\"15\" text-anchor=\"end\">{2:g}</text>"
      "<text x=\"45\" y=\"{0:.0f}\" text-anchor=\"end\">0</text>"
      "<text x=\"{1:.0f}\" y=\"{3:.0f}\" text-anchor=\"end\">{4} (max {5:g})</text>",
      10 + h, 50 + w, max_y, 35 + h, Escape(x_label), max_x);
  for (size_t c = 0; c < series.size(); ++c) {
    std::string points;
    for (const auto& [x, y] : series[c])
      points += fmt::format("{:.1f},{:.1f} ", 50 + w * x / max_x, 10 + h - h * y / max_y);
    out += fmt::format(
        "<polyline class=\"series\" fill=\"none\" stroke=\"{}\" "
        "stroke-width=\"2\" points=\"{}\"/>",
        ColorOf(c), points);
  }
  return out + "</svg>";
}

std::string PerNodePlot(const CompareResult& r) {
  std::vector<std::string> nodes;
  for (const auto& [node, n] : r.configs[0].per_node) nodes.push_back(node);
  if (nodes.size() <= 150) {
    std::vector<std::vector<int>> values;
    for (const ConfigMetrics& m : r.configs) {
      values.emplace_back();
      for (const auto& node : nodes) {
        auto it = m.per_node.find(node);
        values.back().push_back(it == m.per_node.end() ? 0 : it->second);
      }
    }
    return GroupedBars("per-node", "Pods per node", nodes, values);
  }
  // Too many nodes for bars: each configuration's nodes sorted by their pod count.
  std::vector<std::vector<std::pair<double, double>>> series;
  for (const ConfigMetrics& m : r.configs) {
    std::vector<int> counts;
    for (const auto& [node, n] : m.per_node) counts.push_back(n);
    std::sort(counts.rbegin(), counts.rend());
    const size_t step = std::max<size_t>(1, counts.size() / 900);
    series.emplace_back();
    for (size_t i = 0; i < counts.size(); i += step) series.back().emplace_back(i, counts[i]);
    if (!counts.empty()) series.back().emplace_back(counts.size() - 1, counts.back());
  }
  return Lines("per-node", "Pods per node (nodes sorted by pods, busiest first)", "nodes", series);
}

std::string PerZonePlot(const CompareResult& r) {
  if (r.configs[0].per_zone.empty()) return "<p>No node has a zone label.</p>";
  std::vector<std::string> zones;
  for (const auto& [zone, n] : r.configs[0].per_zone)
    zones.push_back(zone.empty() ? "(none)" : zone);
  std::vector<std::vector<int>> values;
  for (const ConfigMetrics& m : r.configs) {
    values.emplace_back();
    for (const auto& [zone, n] : m.per_zone) values.back().push_back(n);
  }
  return GroupedBars("per-zone", "Pods per zone", zones, values);
}

// Where differing pods went: one dot per pod at (its node under the first configuration,
// its node under another), one colour per other configuration; pending pods on the last row
// or column.
std::string DifferencesPlot(const CompareResult& r) {
  if (r.diffs.empty()) return "<p>Every configuration placed every pod on the same node.</p>";
  std::unordered_map<std::string, size_t> index;
  for (const auto& [node, n] : r.configs[0].per_node) index.emplace(node, index.size());
  const size_t pending = index.size();
  const double side = 420, cell = side / (pending + 1);
  std::string out = fmt::format(
      "<h3>Where pods differ ({} pods)</h3><svg id=\"differences\" class=\"plot\" "
      "xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\">"
      "<rect x=\"60\" y=\"10\" width=\"{:.0f}\" height=\"{:.0f}\" fill=\"none\" "
      "stroke=\"#333\"/><text x=\"60\" y=\"{:.0f}\">node under {} (last: not placed)</text>"
      "<text x=\"12\" y=\"{:.0f}\" transform=\"rotate(-90 12 {:.0f})\">node under the "
      "others</text>",
      r.diffs.size(), side + 80, side + 70, side, side, side + 50, Escape(r.configs[0].name),
      10 + side, 10 + side);
  auto pos = [&](const ConfigDecision& cd) {
    auto it = index.find(cd.node);
    return cd.node.empty() || it == index.end() ? pending : it->second;
  };
  if (index.size() <= 40) {
    for (const auto& [node, i] : index)
      out += fmt::format(
          "<text x=\"{0:.1f}\" y=\"{1:.0f}\" font-size=\"9\" transform=\"rotate(45 {0:.1f} "
          "{1:.0f})\">{2}</text><text x=\"58\" y=\"{3:.1f}\" font-size=\"9\" "
          "text-anchor=\"end\">{2}</text>",
          60 + cell * (i + 0.3), side + 16, Escape(node), 10 + side - cell * (i + 0.3));
  }
  const size_t shown = std::min<size_t>(r.diffs.size(), 5000);
  for (size_t i = 0; i < shown; ++i) {
    const PodDiff& d = r.diffs[i];
    const double x = 60 + cell * (pos(d.per_config[0]) + 0.5);
    for (size_t c = 1; c < d.per_config.size(); ++c) {
      const double y = 10 + side - cell * (pos(d.per_config[c]) + 0.5);
      out += fmt::format(
          "<circle class=\"diff\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"3\" fill=\"{}\" "
          "fill-opacity=\"0.6\"><title>{}: {} / {}</title></circle>",
          x, y, ColorOf(c), Escape(d.pod), Escape(d.per_config[0].node),
          Escape(d.per_config[c].node));
    }
  }
  return out + "</svg>";
}

std::string SummaryTable(const CompareResult& r) {
  std::string out = "<table><tr><th></th>";
  for (const ConfigMetrics& m : r.configs) out += "<th>" + Escape(m.name) + "</th>";
  out += "</tr>";
  auto row = [&](std::string_view label, auto&& cell) {
    out += "<tr><td>" + Escape(label) + "</td>";
    for (const ConfigMetrics& m : r.configs) out += "<td>" + Escape(cell(m)) + "</td>";
    out += "</tr>";
  };
  row("scheduled",
      [](const ConfigMetrics& m) { return fmt::format("{}/{}", m.scheduled, m.pods); });
  row("pending", [](const ConfigMetrics& m) { return std::to_string(m.pending); });
  row("preemptions (victims)",
      [](const ConfigMetrics& m) { return fmt::format("{} ({})", m.preemptors, m.victims); });
  row("nodes used",
      [](const ConfigMetrics& m) { return fmt::format("{}/{}", m.nodes_used, m.nodes); });
  row("pods per node max/min", [](const ConfigMetrics& m) {
    return fmt::format("{}/{}", m.node_spread.max, m.node_spread.min);
  });
  if (!r.configs[0].per_zone.empty())
    row("pods per zone max/min", [](const ConfigMetrics& m) {
      return fmt::format("{}/{}", m.zone_spread.max, m.zone_spread.min);
    });
  if (!r.shape.empty())
    row("more " + r.shape + " fit", [](const ConfigMetrics& m) {
      return m.shape_fit ? fmt::format("{}{}", *m.shape_fit, m.shape_fit_capped ? "+" : "")
                         : std::string("-");
    });
  if (r.replay)
    row("pending seconds mean/max", [](const ConfigMetrics& m) {
      return fmt::format("{:.1f}/{:.1f}", m.mean_pending_seconds, m.max_pending_seconds);
    });
  row("scheduling time", [](const ConfigMetrics& m) { return fmt::format("{:.3f} s", m.seconds); });
  return out + "</table>";
}

std::string DiffTable(const CompareResult& r) {
  std::string out = "<h3>Pods placed differently</h3><table><tr><th>pod</th>";
  for (const ConfigMetrics& m : r.configs) out += "<th>" + Escape(m.name) + "</th>";
  out += "</tr>";
  const size_t shown = std::min<size_t>(r.diffs.size(), 1000);
  for (size_t i = 0; i < shown; ++i) {
    const PodDiff& d = r.diffs[i];
    out += "<tr><td>" + Escape(d.pod) + "</td>";
    for (const ConfigDecision& cd : d.per_config) {
      out += "<td><b>" + Escape(cd.node.empty() ? cd.result : cd.node) + "</b>";
      for (const NodeView& v : cd.views) {
        out += "<br>" + Escape(v.node) + ": ";
        if (v.state == NodeView::State::kScored) {
          out += fmt::format("{}", v.total);
          std::string parts;
          for (const auto& [p, points] : v.weighted)
            parts += fmt::format("{}{}={}", parts.empty() ? "" : " ", p, points);
          out += " <small>" + Escape(parts) + "</small>";
        } else {
          out += Escape(v.state == NodeView::State::kRejected ? v.reason
                                                              : std::string(StateName(v.state)));
        }
      }
      if (!cd.tipped_by.empty())
        out += "<br><i>tipped by " + Escape(cd.tipped_by[0].first) + "</i>";
      out += "</td>";
    }
    out += "</tr>";
  }
  if (shown < r.diffs.size())
    out += fmt::format("<tr><td colspan=\"{}\">... {} more (see -o json)</td></tr>",
                       r.configs.size() + 1, r.diffs.size() - shown);
  return out + "</table>";
}

std::string PendingPlot(const CompareResult& r) {
  std::vector<std::vector<std::pair<double, double>>> series;
  for (const ConfigMetrics& m : r.configs) {
    series.emplace_back();
    // Steps: the count holds until the next change.
    for (const PendingSample& s : m.pending_over_time) {
      if (!series.back().empty())
        series.back().emplace_back(s.at_ms / 1000.0, series.back().back().second);
      series.back().emplace_back(s.at_ms / 1000.0, s.pending);
    }
  }
  return Lines("pending-over-time", "Pods pending over time", "recorded seconds", series);
}

}  // namespace

std::string ToHtml(const CompareResult& r) {
  std::string out =
      "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>berth compare</title><style>"
      "body{font-family:sans-serif;margin:20px}table{border-collapse:collapse}"
      "td,th{border:1px solid #ccc;padding:3px 6px;vertical-align:top;text-align:left}"
      "svg text{font-size:11px;font-family:sans-serif}.legend span{margin-right:16px}"
      "</style></head><body><h1>berth compare</h1>";
  out += fmt::format("<p>{} configurations, {} pods{}: <b>{}</b> placed differently.</p>",
                     r.configs.size(), r.pods,
                     r.replay ? fmt::format(", {} recorded events", r.events) : "", r.differing);
  if (r.configs.empty()) return out + "</body></html>";
  out += Legend(r);
  out += SummaryTable(r);
  if (r.replay) out += PendingPlot(r);
  out += PerNodePlot(r);
  out += PerZonePlot(r);
  out += DifferencesPlot(r);
  if (!r.diffs.empty()) out += DiffTable(r);
  return out + "</body></html>\n";
}

}  // namespace berth::sim
