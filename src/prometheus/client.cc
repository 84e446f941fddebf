#include "prometheus/client.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

namespace berth::prometheus {
namespace {

using nlohmann::json;

// Prometheus writes sample values as strings ("123.4", "NaN", "+Inf").
Result<double> ParseValue(const json& pair, std::string_view what) {
  if (!pair.is_array() || pair.size() != 2 || !pair[1].is_string())
    return Error{fmt::format("{}: expected a [timestamp, \"value\"] pair", what)};
  const std::string text = pair[1].get<std::string>();
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0')
    return Error{fmt::format("{}: value \"{}\" is not a number", what, text)};
  return v;
}

}  // namespace

Result<std::unique_ptr<PrometheusClient>> PrometheusClient::Create(
    const std::string& address, std::chrono::milliseconds timeout) {
  std::string server = address;
  while (!server.empty() && server.back() == '/') server.pop_back();
  net::HttpClientOptions options;
  options.server = server;
  options.timeout = timeout;
  options.user_agent = "berth";
  auto http = net::HttpClient::Create(options);
  if (!http.ok()) return Error{fmt::format("prometheus address: {}", http.error().message)};
  std::unique_ptr<PrometheusClient> c(new PrometheusClient());
  c->address_ = server;
  c->http_ = std::move(http).value();
  return c;
}

Result<std::vector<Sample>> PrometheusClient::Query(std::string_view promql) {
  const std::string what = fmt::format("prometheus {} query {}", address_, promql);
  auto response = http_->Do("GET", "/api/v1/query?query=" + net::QueryEscape(promql), {},
                            "application/json", "application/json");
  if (!response.ok()) return Error{fmt::format("{}: {}", what, response.error().message)};
  json doc = json::parse(response->body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object())
    return Error{
        fmt::format("{}: HTTP {} with an answer that is not JSON", what, response->status)};
  if (doc.value("status", "") != "success") {
    return Error{fmt::format("{}: {} ({})", what, doc.value("error", "query failed"),
                             doc.value("errorType", fmt::format("HTTP {}", response->status)))};
  }
  const json& data = doc["data"];
  if (!data.is_object()) return Error{fmt::format("{}: answer has no data", what)};
  const std::string type = data.value("resultType", "");
  std::vector<Sample> out;
  if (type == "scalar") {
    BERTH_TRY_ASSIGN(v, ParseValue(data["result"], what));
    out.push_back(Sample{{}, v});
    return out;
  }
  if (type != "vector" || !data["result"].is_array())
    return Error{fmt::format("{}: expected an instant vector, got \"{}\"", what, type)};
  for (const json& series : data["result"]) {
    Sample s;
    if (series.contains("metric") && series["metric"].is_object()) {
      for (auto it = series["metric"].begin(); it != series["metric"].end(); ++it)
        if (it->is_string()) s.labels[it.key()] = it->get<std::string>();
    }
    BERTH_TRY_ASSIGN(v, ParseValue(series.value("value", json()), what));
    s.value = v;
    out.push_back(std::move(s));
  }
  return out;
}

Result<std::map<std::string, double>> NodeReceiveBytes(PrometheusClient& client,
                                                       std::string_view device, int minutes,
                                                       std::string_view node_label) {
  const std::string query = fmt::format(
      "sum by ({0}) (sum_over_time(node_network_receive_bytes_total{{device=\"{1}\"}}[{2}m]))",
      node_label, device, minutes);
  BERTH_TRY_ASSIGN(samples, client.Query(query));
  std::map<std::string, double> out;
  for (const Sample& s : samples) {
    auto it = s.labels.find(std::string(node_label));
    if (it != s.labels.end()) out[it->second] += s.value;
  }
  return out;
}

}  // namespace berth::prometheus
