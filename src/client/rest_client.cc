#include "client/rest_client.h"

#include <fmt/format.h>

#include <cstdlib>
#include <thread>

#include "api/json_parse.h"

namespace berth::client {

namespace {

std::string StringField(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The Status body's reason and details, when the body is a Status.
void ReadStatus(const nlohmann::json& doc, ClientError* e) {
  e->reason = StringField(doc, "reason");
  auto details = doc.find("details");
  if (details == doc.end() || !details->is_object()) return;
  e->details_name = StringField(*details, "name");
  e->details_kind = StringField(*details, "kind");
  auto causes = details->find("causes");
  if (causes == details->end() || !causes->is_array()) return;
  for (const auto& c : *causes) {
    if (!c.is_object()) continue;
    e->causes.push_back(
        {StringField(c, "reason"), StringField(c, "message"), StringField(c, "field")});
  }
}

}  // namespace

ClientError ErrorFromResponse(int status, std::string_view body, std::string_view what) {
  ClientError e;
  e.http_status = status;
  std::string message;
  auto doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_object()) {
    message = StringField(doc, "message");
    ReadStatus(doc, &e);
  }
  const std::string& reason = e.reason;
  if (message.empty()) message = fmt::format("HTTP {}", status);
  ErrorCode code = ErrorCode::kUnknown;
  switch (status) {
    case 400:
      code = ErrorCode::kBadRequest;
      break;
    case 401:
      code = ErrorCode::kUnauthorized;
      break;
    case 403:
      code = ErrorCode::kForbidden;
      break;
    case 404:
      code = ErrorCode::kNotFound;
      break;
    case 405:
      code = ErrorCode::kMethodNotAllowed;
      break;
    case 409:
      code = reason == "AlreadyExists" ? ErrorCode::kAlreadyExists : ErrorCode::kConflict;
      break;
    case 410:
      code = ErrorCode::kGone;
      break;
    case 415:
      code = ErrorCode::kUnsupportedMediaType;
      break;
    case 422:
      code = ErrorCode::kInvalid;
      break;
    case 429:
      code = ErrorCode::kTooManyRequests;
      break;
    default:
      if (status >= 500) code = ErrorCode::kUnavailable;
  }
  e.message = fmt::format("{}: {}", what, message);
  e.code = code;
  return e;
}

namespace {

// The error of a request that got no answer.
ClientError Unanswered(const net::TransportError& t) {
  ClientError e(static_cast<const Error&>(t));
  e.never_sent = t.never_sent;
  return e;
}

}  // namespace

RestClient::RestClient(std::unique_ptr<net::HttpClient> http, RestOptions options)
    : http_(std::move(http)),
      options_(options),
      tokens_(options.burst),
      last_refill_(std::chrono::steady_clock::now()) {}

void RestClient::Throttle() {
  if (options_.qps <= 0) return;
  std::unique_lock lock(bucket_mu_);
  for (;;) {
    auto now = std::chrono::steady_clock::now();
    double elapsed = std::chrono::duration<double>(now - last_refill_).count();
    last_refill_ = now;
    tokens_ = std::min<double>(options_.burst, tokens_ + elapsed * options_.qps);
    if (tokens_ >= 1) {
      tokens_ -= 1;
      return;
    }
    auto wait = std::chrono::duration<double>((1 - tokens_) / options_.qps);
    lock.unlock();
    std::this_thread::sleep_for(wait);
    lock.lock();
  }
}

RequestResult<nlohmann::json> RestClient::Call(std::string_view method, std::string_view path,
                                               const std::string& body,
                                               std::string_view content_type, bool idempotent) {
  auto res = Exchange(method, path, body, content_type, idempotent);
  if (!res.ok()) return res.error();
  if (res->body.empty()) return nlohmann::json::object();
  nlohmann::json doc;
  if (!ParseJsonFast(res->body, &doc)) doc = nlohmann::json::parse(res->body, nullptr, false);
  if (doc.is_discarded()) {
    ClientError e(
        Error{fmt::format("{} {}{}: the response is not JSON", method, http_->server(), path),
              ErrorCode::kUnknown});
    e.http_status = res->status;
    return e;
  }
  return doc;
}

VoidRequestResult RestClient::Send(std::string_view method, std::string_view path,
                                   const nlohmann::json& body, std::string_view content_type) {
  return SendEncoded(method, path, body.dump(), content_type);
}

VoidRequestResult RestClient::SendEncoded(std::string_view method, std::string_view path,
                                          const std::string& body, std::string_view content_type) {
  auto res = Exchange(method, path, body, content_type, false);
  if (!res.ok()) return res.error();
  return {};
}

std::vector<VoidRequestResult> RestClient::SendEncodedPipelined(
    std::string_view method, std::span<const EncodedWrite> writes, std::string_view content_type) {
  std::vector<net::ClientRequest> requests;
  requests.reserve(writes.size());
  for (const EncodedWrite& w : writes) {
    Throttle();
    requests.push_back({method, w.path, w.body, content_type});
  }
  auto responses = http_->DoPipelined(requests);
  std::vector<VoidRequestResult> out;
  out.reserve(writes.size());
  for (size_t i = 0; i < writes.size(); ++i) {
    auto& r = responses[i];
    if (!r.ok()) {
      out.push_back(Unanswered(r.error()));
    } else if (r->status < 200 || r->status >= 300) {
      out.push_back(ErrorFromResponse(
          r->status, r->body, fmt::format("{} {}{}", method, http_->server(), writes[i].path)));
    } else {
      out.push_back(VoidRequestResult{});
    }
  }
  return out;
}

RequestResult<net::ClientResponse> RestClient::Exchange(std::string_view method,
                                                        std::string_view path,
                                                        const std::string& body,
                                                        std::string_view content_type,
                                                        bool idempotent) {
  auto what = [&] { return fmt::format("{} {}{}", method, http_->server(), path); };
  auto backoff = options_.initial_backoff;
  for (int attempt = 0;; ++attempt) {
    Throttle();
    auto res = http_->Do(method, path, body, content_type, "application/json");
    bool retry = false;
    std::chrono::milliseconds wait = backoff;
    if (!res.ok()) {
      // A connection that could not be made did not reach the server: safe to retry.
      retry = idempotent || res.error().never_sent;
      if (!retry || attempt >= options_.max_retries) return Unanswered(res.error());
    } else if (res->status == 429 || (res->status >= 500 && idempotent)) {
      retry = attempt < options_.max_retries;
      if (!res->retry_after.empty()) {
        wait = std::chrono::seconds(std::max(1, std::atoi(res->retry_after.c_str())));
      }
      if (!retry) return ErrorFromResponse(res->status, res->body, what());
    } else if (res->status < 200 || res->status >= 300) {
      return ErrorFromResponse(res->status, res->body, what());
    } else {
      return std::move(*res);
    }
    std::this_thread::sleep_for(wait);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(10000));
  }
}

RequestResult<nlohmann::json> RestClient::Get(std::string_view path) {
  return Call("GET", path, "", "", true);
}
RequestResult<nlohmann::json> RestClient::Post(std::string_view path, const nlohmann::json& body) {
  return Call("POST", path, body.dump(), "application/json", false);
}
RequestResult<nlohmann::json> RestClient::Put(std::string_view path, const nlohmann::json& body) {
  return Call("PUT", path, body.dump(), "application/json", false);
}
RequestResult<nlohmann::json> RestClient::Patch(std::string_view path, const nlohmann::json& body,
                                                std::string_view patch_content_type) {
  return Call("PATCH", path, body.dump(), patch_content_type, false);
}
RequestResult<nlohmann::json> RestClient::Delete(std::string_view path,
                                                 const nlohmann::json& options) {
  return Call("DELETE", path, options.is_null() ? std::string() : options.dump(),
              "application/json", false);
}

Result<int> RestClient::Watch(std::string_view path,
                              const std::function<bool(std::string_view)>& on_line,
                              net::StreamHandle* handle, std::chrono::milliseconds idle_timeout) {
  Throttle();
  return http_->Stream(path, "application/json", on_line, handle, idle_timeout);
}

}  // namespace berth::client
