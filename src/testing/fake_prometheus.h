// FakePrometheus: the in-memory twin of a Prometheus server for tests — its instant-query API
// (/api/v1/query) on 127.0.0.1 answering a fixed vector of node_network_receive_bytes_total
// sums, counting queries and keeping the last one.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "net/http_server.h"

namespace berth::testing {

class FakePrometheus {
 public:
  // node -> bytes, labelled `kubernetes_node`.
  explicit FakePrometheus(std::map<std::string, double> bytes) : bytes_(std::move(bytes)) {
    auto s = net::HttpServer::Start({}, [this](net::HttpRequest& req) {
      ++queries;
      {
        std::lock_guard lock(mu_);
        last_query_ = req.Query("query").value_or("");
      }
      std::string result;
      for (const auto& [node, v] : bytes_) {
        if (!result.empty()) result += ",";
        result += fmt::format(
            R"({{"metric":{{"kubernetes_node":"{}"}},"value":[1700000000,"{}"]}})", node, v);
      }
      net::HttpResponse r;
      r.body = R"({"status":"success","data":{"resultType":"vector","result":[)" + result + "]}}";
      return r;
    });
    if (s.ok()) server_ = std::move(s).value();
  }

  std::string url() const { return fmt::format("http://127.0.0.1:{}", server_->port()); }
  std::string last_query() {
    std::lock_guard lock(mu_);
    return last_query_;
  }
  void Stop() { server_->Stop(); }

  std::atomic<int> queries{0};

 private:
  std::map<std::string, double> bytes_;
  std::unique_ptr<net::HttpServer> server_;
  std::mutex mu_;
  std::string last_query_;
};

}  // namespace berth::testing
