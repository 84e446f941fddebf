// What the client's tests share: a temporary directory per test, a REST client for a server,
// and a fixture that runs the embedded API server over plain HTTP.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "apiserver/server.h"
#include "client/rest_client.h"
#include "net/http_client.h"

namespace berth::client {

// A directory of the running test's own, removed when it ends.
class TempDir {
 public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("berth-client-test-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() { std::filesystem::remove_all(path_); }
  std::string File(const std::string& name, const std::string& text) const {
    std::string p = (path_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A REST client for `server` (timeout 5 s).
inline std::unique_ptr<RestClient> RestFor(const std::string& server, const std::string& token = "",
                                           RestOptions ro = {}) {
  net::HttpClientOptions o;
  o.server = server;
  o.bearer_token = token;
  o.timeout = std::chrono::seconds(5);
  auto http = net::HttpClient::Create(o);
  EXPECT_TRUE(http.ok());
  return std::make_unique<RestClient>(std::move(http).value(), ro);
}

// The embedded API server in the test's TempDir, over plain HTTP, and a REST client for it
// without a rate limit.
class ApiServerFixture : public ::testing::Test {
 protected:
  void Start(size_t watch_window = 200000) {
    apiserver::ServerOptions o;
    o.data_dir = dir_.path() + "/data";
    o.port = 0;
    o.plain_http = true;
    o.watch_window = watch_window;
    auto s = apiserver::Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(s).value();
    rest_ = RestFor(server_->url(), server_->token(), RestOptions{.qps = 0});
  }
  nlohmann::json Pod(const std::string& name) {
    return {{"apiVersion", "v1"},
            {"kind", "Pod"},
            {"metadata", {{"name", name}}},
            {"spec", {{"containers", {{{"name", "c"}, {"image", "x"}}}}}}};
  }
  TempDir dir_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<RestClient> rest_;
};

}  // namespace berth::client
