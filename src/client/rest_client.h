// RestClient: Kubernetes API calls over HttpClient — client-side rate limiting (qps/burst token
// bucket), retries with backoff for 429, 5xx and connection errors, and Status bodies turned
// into a ClientError (client_error.h) with the matching ErrorCode, the server's message and
// the Status's details.
//
// Threads: every method is thread-safe.
#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/result.h"
#include "client/client_error.h"
#include "client/local_list_watch.h"
#include "net/http_client.h"

namespace berth::client {

struct RestOptions {
  double qps = 50;
  int burst = 100;
  int max_retries = 5;
  std::chrono::milliseconds initial_backoff{200};
};

class RestClient {
 public:
  RestClient(std::unique_ptr<net::HttpClient> http, RestOptions options);

  // JSON in, JSON out. `path` includes the query. Non-2xx answers are errors.
  RequestResult<nlohmann::json> Get(std::string_view path);
  RequestResult<nlohmann::json> Post(std::string_view path, const nlohmann::json& body);
  RequestResult<nlohmann::json> Put(std::string_view path, const nlohmann::json& body);
  RequestResult<nlohmann::json> Patch(std::string_view path, const nlohmann::json& body,
                                      std::string_view patch_content_type);
  RequestResult<nlohmann::json> Delete(std::string_view path, const nlohmann::json& options = {});

  // A write whose answer the caller does not read (a binding, an event, a status patch): a 2xx
  // is success and its body is not parsed. Errors and retries as for the calls above.
  VoidRequestResult Send(std::string_view method, std::string_view path, const nlohmann::json& body,
                         std::string_view content_type = "application/json");
  // The same with the body already encoded (bodies written without a document, json_text.h).
  VoidRequestResult SendEncoded(std::string_view method, std::string_view path,
                                const std::string& body,
                                std::string_view content_type = "application/json");

  // Writes of the same method sent together on one connection (HttpClient::DoPipelined), each
  // throttled as one call. One result per write, none retried here: a 429, a 5xx or a lost
  // answer is the caller's to send again (SendEncoded retries). For writes that are safe to
  // repeat.
  struct EncodedWrite {
    std::string path, body;
  };
  std::vector<VoidRequestResult> SendEncodedPipelined(
      std::string_view method, std::span<const EncodedWrite> writes,
      std::string_view content_type = "application/json");

  // A watch stream (see HttpClient::Stream); each line is one event.
  Result<int> Watch(std::string_view path, const std::function<bool(std::string_view)>& on_line,
                    net::StreamHandle* handle, std::chrono::milliseconds idle_timeout);

  net::HttpClient& http() { return *http_; }

  // Lists and watches served in the process (null: none). Informers of this client read the
  // paths it serves from it instead of over HTTP; writes are unaffected. Set before any
  // informer starts; `local` must outlive them.
  void set_local(LocalListWatch* local) { local_ = local; }
  LocalListWatch* local() const { return local_; }

 private:
  RequestResult<nlohmann::json> Call(std::string_view method, std::string_view path,
                                     const std::string& body, std::string_view content_type,
                                     bool idempotent);
  // The 2xx response of a call, after throttling and retries.
  RequestResult<net::ClientResponse> Exchange(std::string_view method, std::string_view path,
                                              const std::string& body,
                                              std::string_view content_type, bool idempotent);
  void Throttle();

  std::unique_ptr<net::HttpClient> http_;
  RestOptions options_;
  LocalListWatch* local_ = nullptr;
  std::mutex bucket_mu_;
  double tokens_;
  std::chrono::steady_clock::time_point last_refill_;
};

}  // namespace berth::client
