// PrometheusClient: instant queries against a Prometheus server's HTTP API
// (GET /api/v1/query), for the metric-driven scoring of node network traffic.
//
// Threads: Query may be called from any number of threads at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "net/http_client.h"

namespace berth::prometheus {

// One series of an instant vector: its labels and value.
struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

class PrometheusClient {
 public:
  // `address`: "http://host:9090" (optionally https, with a path prefix). Errors name it.
  static Result<std::unique_ptr<PrometheusClient>> Create(
      const std::string& address, std::chrono::milliseconds timeout = std::chrono::seconds(5));

  // Runs an instant query. A vector answer gives one Sample per series; a scalar answer one
  // Sample without labels. Errors (unreachable server, a query error, an unexpected answer)
  // name the server and the query.
  Result<std::vector<Sample>> Query(std::string_view promql);

  const std::string& address() const { return address_; }

 private:
  PrometheusClient() = default;
  std::string address_;
  std::unique_ptr<net::HttpClient> http_;
};

// Node name -> bytes received on `device` over the last `minutes`, summed per node, from
// node_network_receive_bytes_total series whose `node_label` names the node
// (sum_over_time(...)[Nm], as the NetworkTraffic scoring of the scheduling-framework tutorial).
Result<std::map<std::string, double>> NodeReceiveBytes(PrometheusClient& client,
                                                       std::string_view device, int minutes,
                                                       std::string_view node_label);

}  // namespace berth::prometheus
