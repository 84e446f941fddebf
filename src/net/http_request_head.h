// Internal to src/net: what HttpServer decides about a request from its head, before the body is
// read (the limits, the answers to a malformed request), kept apart from the I/O so that the
// rules are in one place and the request fuzz target runs the same ones.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "net/http_server.h"

namespace berth::net {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// A parser for the next request: the header limit set, the body not limited yet (the head is
// judged first, then LimitBody applies the limit its verdict calls for).
void PrepareParser(RequestParser& parser, const HttpServerOptions& options);

// The request's head as the handler sees it (no body): method, target, decoded path and query,
// lower-cased header names.
HttpRequest HeadOf(const RequestParser& parser, std::string remote);

// The answer that ends the connection for a head the server refuses by its own rules: a target
// longer than max_target_bytes (414), a Content-Length over max_body_bytes (413), a
// Transfer-Encoding whose last coding is not chunked (400: the body's end cannot be told) or
// that has another coding (501, as Go's server, kube-apiserver's, answers).
std::optional<HttpResponse> CheckLimits(const RequestParser& parser, const HttpRequest& head,
                                        const HttpServerOptions& options);

// The status that answers a request the parser rejected, or 0 when there is nothing to answer
// (the client left, reset the connection or was too slow). For a header over the limit, a
// request line too long (414) is told from too many or too long fields (431) by the parser's
// progress and, when it is still at the request line, by what the read buffer holds
// (`unparsed`).
int StatusForParseError(const boost::system::error_code& ec, const RequestParser& parser,
                        std::string_view unparsed, const HttpServerOptions& options);

// A kube-apiserver Status document answering `code`, for the server's own refusals.
HttpResponse StatusResponse(int code, std::string_view reason, std::string_view message);

// StatusResponse for one of the codes StatusForParseError returns.
HttpResponse ParseErrorResponse(int code);

}  // namespace berth::net
