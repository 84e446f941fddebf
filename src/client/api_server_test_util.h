// What the controllers' and the client's tests run against: an embedded API server over plain
// HTTP in a fresh temporary directory, and a REST client to it (no rate limit), as a
// controller of `berth up` talks to its server.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>

#include "apiserver/server.h"
#include "client/rest_client.h"

namespace berth::controllers {

class TestApiServer {
 public:
  // Starts the server in <tmp>/<name>-<pid>; a failure fails the calling test.
  void Start(const std::string& name) {
    dir_ = std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    apiserver::ServerOptions o;
    o.data_dir = dir_.string();
    o.port = 0;
    o.plain_http = true;
    auto s = apiserver::Server::Start(o);
    ASSERT_TRUE(s.ok()) << s.error().message;
    server_ = std::move(s).value();
    net::HttpClientOptions ho;
    ho.server = server_->url();
    ho.bearer_token = server_->token();
    ho.timeout = std::chrono::seconds(5);
    auto http = net::HttpClient::Create(ho);
    ASSERT_TRUE(http.ok());
    rest_ = std::make_unique<client::RestClient>(std::move(http).value(),
                                                 client::RestOptions{.qps = 0});
  }
  // Stops the server and removes its directory (after the informers using rest() stopped).
  void Stop() {
    if (server_) server_->Stop();
    std::filesystem::remove_all(dir_);
  }
  client::RestClient* rest() const { return rest_.get(); }
  apiserver::Server& server() const { return *server_; }

 private:
  std::filesystem::path dir_;
  std::unique_ptr<apiserver::Server> server_;
  std::unique_ptr<client::RestClient> rest_;
};

}  // namespace berth::controllers
