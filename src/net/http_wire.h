// Internal to src/net: a Beast message's bytes appended to a string, so that several messages
// (pipelined requests, their answers) go out in one write.
#pragma once

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <string>

namespace berth::net {

// Appends the message's start line, headers and body to `out`.
template <bool isRequest, class Body, class Fields>
void AppendSerialized(boost::beast::http::message<isRequest, Body, Fields>& message,
                      std::string* out) {
  namespace beast = boost::beast;
  beast::http::serializer<isRequest, Body, Fields> sr{message};
  boost::system::error_code ec;
  while (!ec && !sr.is_done()) {
    sr.next(ec, [&](boost::system::error_code&, const auto& buffers) {
      for (const auto b : beast::buffers_range_ref(buffers))
        out->append(static_cast<const char*>(b.data()), b.size());
      sr.consume(beast::buffer_bytes(buffers));
    });
  }
}

}  // namespace berth::net
