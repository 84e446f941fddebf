// libFuzzer target: the bytes a client sends to HttpServer, as the API server runs it (a head
// check that wants a token except on /healthz, small limits so they are reached), over a real
// loopback connection: the request parser, the head check, the limits and the answers to
// malformed requests, pipelining and streams. Every input must end with the server closing the
// connection (the client half-closes after sending), and everything it answers must be
// well-formed HTTP whose status is one the server gives.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <set>
#include <string>

#include "net/http_request_head.h"
#include "net/http_server.h"

namespace net = berth::net;
namespace http = boost::beast::http;

namespace {

net::HttpServer& Server() {
  static std::unique_ptr<net::HttpServer> server = [] {
    net::HttpServerOptions options;
    options.threads = 2;
    options.max_header_bytes = 4096;
    options.max_target_bytes = 1024;
    options.max_body_bytes = 8192;
    options.refused_body_bytes = 512;
    options.check_head = [](const net::HttpRequest& head) -> std::optional<net::HttpResponse> {
      if (head.path == "/healthz" || head.Header("authorization") == "Bearer t")
        return std::nullopt;
      return net::StatusResponse(401, "Unauthorized", "Unauthorized");
    };
    auto started = net::HttpServer::Start(options, [](net::HttpRequest& r) {
      net::HttpResponse resp;
      if (r.path == "/watch") {
        resp.stream = [body = r.body](std::shared_ptr<net::StreamSink> sink) {
          sink->Write(body);
          sink->Close();
        };
        return resp;
      }
      resp.body = r.method + " " + r.path + " " + r.body;
      return resp;
    });
    if (!started.ok()) std::abort();
    return std::move(started).value();
  }();
  return *server;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const uint16_t port = Server().port();
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  timeval tv{.tv_sec = 5, .tv_usec = 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) std::abort();
  size_t sent = 0;
  while (sent < size) {
    const ssize_t n = send(fd, data + sent, size - sent, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;  // libFuzzer's timeout alarm
    if (n <= 0) break;                      // the server closed early (a refusal): fine
    sent += n;
  }
  shutdown(fd, SHUT_WR);
  std::string answers;
  char buf[4096];
  for (;;) {
    const ssize_t n = recv(fd, buf, sizeof(buf), 0);
    if (n > 0) {
      answers.append(buf, n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    // The server must close (EOF or reset) rather than wait on a client that is done.
    if (n < 0 && errno != ECONNRESET) {
      std::fprintf(stderr, "recv: %s after %zu bytes\n", std::strerror(errno), answers.size());
      std::abort();
    }
    break;
  }
  close(fd);
  static const std::set<unsigned> kStatuses = {200, 400, 401, 413, 414, 431, 501};
  boost::beast::flat_buffer buffer;
  buffer.commit(
      boost::asio::buffer_copy(buffer.prepare(answers.size()), boost::asio::buffer(answers)));
  while (buffer.size() > 0) {
    http::response_parser<http::string_body> parser;
    parser.body_limit(boost::none);
    parser.eager(true);
    boost::system::error_code ec;
    while (!ec && !parser.is_done()) buffer.consume(parser.put(buffer.data(), ec));
    // A reset may cut the last answer short; what arrived must parse as far as it goes.
    if (ec == http::error::need_more) break;
    if (ec) std::abort();
    if (!kStatuses.count(parser.get().result_int())) std::abort();
  }
  return 0;
}
