#include "net/http_request_head.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

namespace berth::net {

namespace http = boost::beast::http;

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < s.size(); ++i) {
    char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      int hi = hex(s[i + 1]), lo = hex(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::optional<std::string> HttpRequest::Query(std::string_view name) const {
  for (const auto& [k, v] : query) {
    if (k == name) return v;
  }
  return std::nullopt;
}

std::string HttpRequest::Header(std::string_view lower_name) const {
  for (auto it = headers.rbegin(); it != headers.rend(); ++it) {
    if (it->first == lower_name) return it->second;
  }
  return std::string();
}

void PrepareParser(RequestParser& parser, const HttpServerOptions& options) {
  parser.header_limit(
      static_cast<uint32_t>(std::min<size_t>(options.max_header_bytes, UINT32_MAX)));
  parser.body_limit(boost::none);
}

HttpRequest HeadOf(const RequestParser& parser, std::string remote) {
  const auto& req = parser.get();
  HttpRequest r;
  r.method = std::string(req.method_string());
  r.target = std::string(req.target());
  std::string_view target = req.target();
  size_t q = target.find('?');
  r.path = PercentDecode(target.substr(0, q), false);
  if (q != std::string_view::npos) {
    std::string_view rest = target.substr(q + 1);
    while (!rest.empty()) {
      size_t amp = rest.find('&');
      std::string_view part = rest.substr(0, amp);
      if (!part.empty()) {
        size_t eq = part.find('=');
        r.query.emplace_back(PercentDecode(part.substr(0, eq), true),
                             eq == std::string_view::npos
                                 ? std::string()
                                 : PercentDecode(part.substr(eq + 1), true));
      }
      if (amp == std::string_view::npos) break;
      rest.remove_prefix(amp + 1);
    }
  }
  r.headers.reserve(std::distance(req.begin(), req.end()));
  for (const auto& field : req) {
    std::string name(field.name_string());
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    r.headers.emplace_back(std::move(name), std::string(field.value()));
  }
  r.remote_address = std::move(remote);
  return r;
}

std::optional<HttpResponse> CheckLimits(const RequestParser& parser, const HttpRequest& head,
                                        const HttpServerOptions& options) {
  if (head.target.size() > options.max_target_bytes) return ParseErrorResponse(414);
  const auto length = parser.content_length();
  if (length && *length > options.max_body_bytes) return ParseErrorResponse(413);
  const auto& req = parser.get();
  if (auto te = req.find(http::field::transfer_encoding); te != req.end()) {
    if (!parser.chunked()) return ParseErrorResponse(400);
    if (!boost::beast::iequals(te->value(), "chunked")) return ParseErrorResponse(501);
  }
  return std::nullopt;
}

int StatusForParseError(const boost::system::error_code& ec, const RequestParser& parser,
                        std::string_view unparsed, const HttpServerOptions& options) {
  if (ec.category() != http::make_error_code(http::error::bad_method).category()) return 0;
  switch (static_cast<http::error>(ec.value())) {
    case http::error::header_limit: {
      // The parser does not say which part was too long. Past the request line (it is then
      // consumed from the buffer), the fields were; before it, a request line without its end
      // among the bytes read, or longer than a target may be, is the URL's fault.
      if (!parser.get().target().empty()) return 431;
      const size_t eol = unparsed.find('\n');
      return eol == std::string_view::npos || eol > options.max_target_bytes ? 414 : 431;
    }
    case http::error::body_limit:
      return 413;
    case http::error::bad_line_ending:
    case http::error::bad_method:
    case http::error::bad_target:
    case http::error::bad_version:
    case http::error::bad_field:
    case http::error::bad_value:
    case http::error::bad_content_length:
    case http::error::bad_transfer_encoding:
    case http::error::bad_chunk:
    case http::error::bad_chunk_extension:
    case http::error::bad_obs_fold:
    case http::error::multiple_content_length:
    case http::error::unexpected_body:
      return 400;
    default:
      // end_of_stream, partial_message and the like: the client stopped sending.
      return 0;
  }
}

HttpResponse StatusResponse(int code, std::string_view reason, std::string_view message) {
  HttpResponse r;
  r.status = code;
  r.body = fmt::format(
      R"({{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure","message":"{}","reason":"{}","code":{}}})",
      message, reason, code);
  return r;
}

HttpResponse ParseErrorResponse(int code) {
  switch (code) {
    case 413:
      return StatusResponse(413, "RequestEntityTooLarge", "the request body is too large");
    case 414:
      return StatusResponse(414, "BadRequest", "the request line is too long");
    case 431:
      return StatusResponse(431, "BadRequest", "the request header fields are too large");
    case 501:
      return StatusResponse(501, "NotImplemented", "unsupported Transfer-Encoding");
    default:
      return StatusResponse(400, "BadRequest", "malformed HTTP request");
  }
}

}  // namespace berth::net
