#include "ui/report.h"

#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "explain/explain.h"
#include "ui/decision_log.h"
#include "ui/web_view.h"

namespace berth::ui {
namespace {

// JSON inside <script>: no "<" at all, so neither "</script>" nor "<!--" can end it early.
std::string ScriptSafe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

bool ReplaceOnce(std::string& text, const std::string& what, const std::string& with) {
  const size_t at = text.find(what);
  if (at == std::string::npos) return false;
  text.replace(at, what.size(), with);
  return true;
}

// The explanations of the pods the simulation left pending, over the cluster as it left it:
// placed pods on their nodes, preempted pods gone. Also how many pending pods were left out.
std::pair<nlohmann::json, size_t> Explanations(const std::vector<Object>& objects,
                                               const sim::SimulationResult& result,
                                               const ReportOptions& options) {
  std::map<std::string, std::string> placed;
  std::set<std::string> gone, pending;
  std::vector<std::string> order;
  for (const auto& r : result.results) {
    if (r.result == "Scheduled") placed[r.pod] = r.node;
    gone.insert(r.victims.begin(), r.victims.end());
    if (r.result == "Unschedulable" || r.result == "Error") {
      pending.insert(r.pod);
      order.push_back(r.pod);
    }
  }
  std::vector<Object> after;
  for (const auto& o : objects) {
    if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o)) {
      const std::string key = (*p)->Key();
      if (gone.count(key) && !placed.count(key) && !pending.count(key)) continue;
      if (auto it = placed.find(key); it != placed.end() && (*p)->spec.node_name != it->second) {
        auto bound = std::make_shared<Pod>(**p);
        bound->spec.node_name = it->second;
        after.push_back(Object(std::shared_ptr<const Pod>(std::move(bound))));
        continue;
      }
    }
    after.push_back(o);
  }
  explain::ExplainOptions eo;
  eo.seed = options.seed;
  eo.config_source = options.config_source;
  nlohmann::json out = nlohmann::json::object();
  size_t omitted = 0;
  for (const auto& key : order) {
    if (out.size() >= options.max_explanations) {
      ++omitted;
      continue;
    }
    auto e = explain::Explain(*options.config, *options.registry, after, key, eo);
    // A pod that cannot be explained says why in its place; the rest of the report stands.
    out[key] = e.ok() ? explain::ToJson(*e)
                      : nlohmann::json{{"pod", key},
                                       {"result", "Error"},
                                       {"message", e.error().message},
                                       {"suggestions", nlohmann::json::array()}};
  }
  return std::make_pair(std::move(out), omitted);
}

}  // namespace

Result<std::string> SimulationReportHtml(const std::vector<Object>& objects,
                                         const sim::SimulationResult& result,
                                         const ReportOptions& options) {
  using nlohmann::json;
  std::map<std::string, const sim::PodResult*> outcome;
  for (const auto& r : result.results) outcome[r.pod] = &r;
  json nodes = json::array(), pods = json::array(), decisions = json::object();
  for (const auto& o : objects) {
    if (auto* n = std::get_if<std::shared_ptr<const Node>>(&o)) {
      nodes.push_back(EncodeNode(**n));
    } else if (auto* p = std::get_if<std::shared_ptr<const Pod>>(&o)) {
      json pod = EncodePod(**p);
      auto it = outcome.find((*p)->Key());
      if (it != outcome.end()) {
        const sim::PodResult& r = *it->second;
        if (r.result == "Scheduled") {
          pod["spec"]["nodeName"] = r.node;
        } else {
          pod["status"]["conditions"] =
              json::array({{{"type", "PodScheduled"},
                            {"status", "False"},
                            {"reason", r.result == "Gated" ? "SchedulingGated" : r.result},
                            {"message", r.message}}});
        }
        if (r.last) {
          json d = json::parse(DecisionJson(*r.last, DecisionLogOptions{}.max_nodes));
          d.erase("decidedAt");  // when the page was written, not a time of the simulation
          decisions[r.pod] = std::move(d);
        }
      }
      pods.push_back(std::move(pod));
    }
  }
  json report = {{"nodes", std::move(nodes)},
                 {"pods", std::move(pods)},
                 {"decisions", std::move(decisions)},
                 {"simulation", sim::ToJson(result)}};
  if (options.config && options.registry) {
    auto [explanations, omitted] = Explanations(objects, result, options);
    report["explanations"] = std::move(explanations);
    report["explanationsOmitted"] = omitted;
  }
  return EmbeddedPage("berth-report", report);
}

Result<std::string> TimelineReportHtml(const nlohmann::json& report) {
  return EmbeddedPage("berth-timeline", report);
}

Result<std::string> CompareReportHtml(const nlohmann::json& report) {
  if (!report.is_object() || !report.contains("configurations") ||
      !report["configurations"].is_array())
    return Error{"the comparison report has no \"configurations\" array"};
  // The Timeline tab tells a comparison from a scenario by that array.
  return EmbeddedPage("berth-timeline", report);
}

Result<std::string> EmbeddedPage(const std::string& data_id, const nlohmann::json& data) {
  auto index = FindAsset("index.html");
  auto css = FindAsset("app.css");
  if (!index || !css) return Error{"the web view's files are missing from this binary"};
  std::string page(*index);
  if (!ReplaceOnce(page, "<link rel=\"stylesheet\" href=\"/ui/app.css\">",
                   "<style>\n" + std::string(*css) + "</style>")) {
    return Error{"the web view's index.html does not load app.css as expected"};
  }
  // Each script the page loads, inline; the data before the first of them.
  std::string data_script =
      "<script id=\"" + data_id + "\" type=\"application/json\">" +
      ScriptSafe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)) +
      "</script>\n";
  for (const char* name : {"timeline.js", "compare.js", "app.js"}) {
    auto js = FindAsset(name);
    if (!js) return Error{fmt::format("the web view's {} is missing from this binary", name)};
    const bool ok = ReplaceOnce(page, fmt::format("<script src=\"/ui/{}\"></script>", name),
                                data_script + "<script>\n" + std::string(*js) + "</script>");
    if (!ok) return Error{fmt::format("the web view's index.html does not load {}", name)};
    data_script.clear();
  }
  return page;
}

}  // namespace berth::ui
