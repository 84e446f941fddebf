// A test fixture for the API server's HTTP surface: a server on 127.0.0.1 with an ephemeral
// port and a data directory of its own, and a one-request client. Shared by the server tests.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "apiserver/server.h"

namespace berth::apiserver::testing {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using Json = nlohmann::json;

struct Reply {
  int status = 0;
  Json body;
  std::vector<std::string> warnings;  // Warning header values, in order
};

class ServerHttpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("berth-server-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    Restart();
  }
  // Stops the server (if running) and starts it again on the same data directory.
  void Restart() {
    server_.reset();
    ServerOptions o;
    o.data_dir = dir_.string();
    o.port = 0;
    o.plain_http = true;
    o.threads = 2;
    o.event_ttl = event_ttl_;
    o.validation = validation_;
    o.workload_api = workload_api_;
    auto s = Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(s).value();
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  Reply Do(http::verb verb, const std::string& target, const std::string& body = "",
           const std::string& content_type = "application/json") {
    asio::io_context io;
    beast::tcp_stream stream(io);
    stream.connect(asio::ip::tcp::endpoint(asio::ip::make_address("127.0.0.1"), server_->port()));
    http::request<http::string_body> req{verb, target, 11};
    req.set(http::field::host, "127.0.0.1");
    req.set(http::field::authorization, "Bearer " + server_->token());
    req.set(http::field::content_type, content_type);
    req.body() = body;
    req.prepare_payload();
    http::write(stream, req);
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    http::read(stream, buffer, res);
    Reply r;
    r.status = static_cast<int>(res.result_int());
    r.body = Json::parse(res.body(), nullptr, false);
    for (const auto& f : res.base()) {
      if (f.name_string() == "Warning") r.warnings.emplace_back(f.value());
    }
    return r;
  }

  static std::string PodJson(const std::string& name, const std::string& extra_spec = "",
                             const std::string& extra_container = "") {
    return R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":")" + name + R"("},"spec":{)" +
           extra_spec + R"("containers":[{"name":"c","image":"x")" + extra_container + "}]}}";
  }

  static constexpr const char* kPods = "/api/v1/namespaces/default/pods";
  std::filesystem::path dir_;
  std::chrono::seconds event_ttl_{3600};  // set before Restart()
  ValidationOptions validation_;          // set before Restart()
  bool workload_api_ = false;             // ServerOptions::workload_api
  std::unique_ptr<Server> server_;
};

}  // namespace berth::apiserver::testing
