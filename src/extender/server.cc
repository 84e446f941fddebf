// The extender SDK server on Berth's HTTP server (src/net).
#include "berth/extender/server.h"

#include <fmt/format.h>
#include <signal.h>

#include <exception>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <unordered_map>

#include "extender/wire_internal.h"
#include "extender/wire_read.h"
#include "net/http_server.h"

namespace berth::extender {
namespace {

net::HttpResponse Text(int status, std::string body) {
  net::HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

net::HttpResponse Json(std::string body) {
  net::HttpResponse r;
  r.body = std::move(body);
  return r;
}

// The last segment of a request path: "/prefix/filter" -> "filter".
std::string_view LastSegment(std::string_view path) {
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  const size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Decodes the body and answers with `respond(arguments)` (the handler's encoded answer); handler
// exceptions become 500s.
template <class Decode, class Respond>
net::HttpResponse Call(const std::string& body, Decode decode, const Respond& respond) {
  auto args = decode(body);
  if (!args.ok()) return Text(400, args.error().message + "\n");
  try {
    return Json(respond(*args));
  } catch (const std::exception& e) {
    return Text(500, fmt::format("extender handler failed: {}\n", e.what()));
  } catch (...) {
    return Text(500, "extender handler failed\n");
  }
}

// Arguments as ArgsDecoder hands them to a handler.
struct DecodedArgs {
  std::shared_ptr<const v1::ExtenderArgs> args;
  // Whole nodes read by the fast path: where each of args->nodes lies in the request text (the
  // same in any request with the same text), so an answer can repeat a node as it came.
  std::shared_ptr<const std::vector<std::pair<size_t, size_t>>> node_spans;
};

// Filter and prioritize arguments decoded with memory of earlier requests. A scheduler sends one
// pod to filter and then to prioritize, usually with the same nodes (the filter kept them all),
// so the second request is the first's text: its decoded arguments are reused whole, or at least
// its pod. Whole nodes (a scheduler without nodeCacheCapable) arrive again and again with the
// same text until the node changes: each text is decoded once and kept, up to a bound.
// Thread-safe; the decoding itself runs outside the lock.
class ArgsDecoder {
 public:
  Result<DecodedArgs> Decode(const std::string& text) {
    {
      std::lock_guard lock(mu_);
      if (last_.args && text == last_text_) return last_;
    }
    DecodedArgs out;
    auto args = std::make_shared<v1::ExtenderArgs>();
    BERTH_TRY_ASSIGN(parts, v1::read::Args(text));
    if (parts.pod_error) return *parts.pod_error;
    if (parts.pod_json) {
      BERTH_TRY_ASSIGN(pod, PodOf(*parts.pod_json));
      args->pod = std::move(pod);
    }
    if (parts.nodes_error) return *parts.nodes_error;
    if (parts.node_items) {
      BERTH_TRY_ASSIGN(nodes, NodesOf(*parts.node_items));
      args->nodes = std::move(nodes);
      auto spans = std::make_shared<std::vector<std::pair<size_t, size_t>>>();
      spans->reserve(parts.node_items->size());
      for (std::string_view item : *parts.node_items)
        spans->emplace_back(item.data() - text.data(), item.size());
      out.node_spans = std::move(spans);
    }
    if (parts.names_error) return *parts.names_error;
    args->node_names = std::move(parts.node_names);
    out.args = std::move(args);
    std::lock_guard lock(mu_);
    last_text_ = text;
    last_ = out;
    return out;
  }

 private:
  // Bounds the decoded nodes kept: their texts' bytes (the decoded nodes take a few times more).
  static constexpr size_t kMaxKeptNodeBytes = 16 << 20;

  Result<v1::PodPtr> PodOf(std::string_view pod_json) {
    {
      std::lock_guard lock(mu_);
      if (last_pod_ && pod_json == last_pod_json_) return last_pod_;
    }
    BERTH_TRY_ASSIGN(pod, v1::DecodeArgsPod(pod_json));
    std::lock_guard lock(mu_);
    last_pod_json_.assign(pod_json);
    last_pod_ = pod;
    return pod;
  }

  Result<std::vector<v1::NodePtr>> NodesOf(const std::vector<std::string_view>& items) {
    std::vector<v1::NodePtr> nodes(items.size());
    std::vector<size_t> unseen;
    {
      std::lock_guard lock(mu_);
      for (size_t i = 0; i < items.size(); ++i) {
        auto it = nodes_by_text_.find(items[i]);
        if (it != nodes_by_text_.end()) {
          nodes[i] = it->second;
        } else {
          unseen.push_back(i);
        }
      }
    }
    for (size_t i : unseen) {
      BERTH_TRY_ASSIGN(node, v1::DecodeArgsNode(items[i], i));
      nodes[i] = std::move(node);
    }
    std::lock_guard lock(mu_);
    for (size_t i : unseen) {
      if (kept_node_bytes_ + items[i].size() > kMaxKeptNodeBytes) {
        nodes_by_text_.clear();
        kept_node_bytes_ = 0;
      }
      if (nodes_by_text_.emplace(std::string(items[i]), nodes[i]).second)
        kept_node_bytes_ += items[i].size();
    }
    return nodes;
  }

  struct TextHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  std::mutex mu_;
  std::string last_text_;
  DecodedArgs last_;
  std::string last_pod_json_;
  v1::PodPtr last_pod_;
  std::unordered_map<std::string, v1::NodePtr, TextHash, std::equal_to<>> nodes_by_text_;
  size_t kept_node_bytes_ = 0;
};

}  // namespace

struct ExtenderServer::Impl {
  std::map<std::string, FilterHandler, std::less<>> filters;
  std::map<std::string, PrioritizeHandler, std::less<>> prioritizers;
  std::map<std::string, BindHandler, std::less<>> binders;
  std::map<std::string, PreemptHandler, std::less<>> preempters;
  std::unique_ptr<net::HttpServer> server;
  bool tls = false;
  std::string bind_address;
  mutable ArgsDecoder args_decoder;

  auto Decoder() const {
    return [this](const std::string& text) { return args_decoder.Decode(text); };
  }
  net::HttpResponse CallFilter(const std::string& body, const FilterHandler& handler) const {
    return Call(body, Decoder(), [&](const DecodedArgs& d) {
      v1::ExtenderFilterResult r = handler(*d.args);
      if (!r.nodes || !d.node_spans) return v1::Encode(r);
      // Nodes of the arguments go back as they came, not decoded and encoded again.
      std::vector<std::string_view> texts;
      texts.reserve(d.node_spans->size());
      for (const auto& [at, size] : *d.node_spans)
        texts.push_back(std::string_view(body).substr(at, size));
      return v1::EncodeFilterResultEchoingNodes(r, *d.args->nodes, texts);
    });
  }
  net::HttpResponse CallPrioritize(const std::string& body,
                                   const PrioritizeHandler& handler) const {
    return Call(body, Decoder(),
                [&](const DecodedArgs& d) { return v1::Encode(handler(*d.args)); });
  }
  template <class Args, class Handler>
  static auto Encoded(const Handler& handler) {
    return [&handler](const Args& args) { return v1::Encode(handler(args)); };
  }

  net::HttpResponse Handle(net::HttpRequest& req) const {
    if (req.path == "/healthz" || req.path == "/livez" || req.path == "/readyz") {
      return Text(200, "ok");
    }
    const std::string_view verb = LastSegment(req.path);
    if (req.method != "POST") {
      return Text(405, fmt::format("{} {}: extender verbs take POST\n", req.method, req.path));
    }
    if (auto it = filters.find(verb); it != filters.end()) return CallFilter(req.body, it->second);
    if (auto it = prioritizers.find(verb); it != prioritizers.end())
      return CallPrioritize(req.body, it->second);
    if (auto it = binders.find(verb); it != binders.end())
      return Call(req.body, v1::DecodeExtenderBindingArgs,
                  Encoded<v1::ExtenderBindingArgs>(it->second));
    if (auto it = preempters.find(verb); it != preempters.end())
      return Call(req.body, v1::DecodeExtenderPreemptionArgs,
                  Encoded<v1::ExtenderPreemptionArgs>(it->second));
    return Text(404, fmt::format("no extender verb \"{}\" here\n", verb));
  }
};

ExtenderServer::ExtenderServer() : impl_(std::make_unique<Impl>()) {}
ExtenderServer::~ExtenderServer() { Stop(); }

ExtenderServer& ExtenderServer::Filter(std::string verb, FilterHandler handler) {
  impl_->filters[std::move(verb)] = std::move(handler);
  return *this;
}
ExtenderServer& ExtenderServer::Prioritize(std::string verb, PrioritizeHandler handler) {
  impl_->prioritizers[std::move(verb)] = std::move(handler);
  return *this;
}
ExtenderServer& ExtenderServer::Bind(std::string verb, BindHandler handler) {
  impl_->binders[std::move(verb)] = std::move(handler);
  return *this;
}
ExtenderServer& ExtenderServer::Preempt(std::string verb, PreemptHandler handler) {
  impl_->preempters[std::move(verb)] = std::move(handler);
  return *this;
}

VoidResult ExtenderServer::Start(const ServerOptions& options) {
  if (impl_->server) return Error{"extender server already started"};
  net::HttpServerOptions so;
  so.bind_address = options.bind_address;
  so.port = options.port;
  so.threads = options.threads;
  // A scheduler keeps a few keep-alive connections busy: each served on one thread, with no
  // hand-off per request (handlers are quick; one that blocks delays its thread's others).
  so.pin_connections = true;
  if (!options.tls_cert_pem.empty() || !options.tls_key_pem.empty()) {
    if (options.tls_cert_pem.empty() || options.tls_key_pem.empty())
      return Error{"extender server: TLS needs both a certificate and a key"};
    so.tls = net::TlsServerConfig{options.tls_cert_pem, options.tls_key_pem};
  }
  const Impl* impl = impl_.get();
  auto server =
      net::HttpServer::Start(so, [impl](net::HttpRequest& req) { return impl->Handle(req); });
  if (!server.ok()) return server.error();
  impl_->server = std::move(server).value();
  impl_->tls = so.tls.has_value();
  impl_->bind_address = options.bind_address;
  return {};
}

uint16_t ExtenderServer::port() const { return impl_->server ? impl_->server->port() : 0; }

std::string ExtenderServer::url() const {
  std::string host = impl_->bind_address;
  if (host.empty() || host == "0.0.0.0") host = "127.0.0.1";
  if (host.find(':') != std::string::npos) host = "[" + host + "]";
  return fmt::format("{}://{}:{}", impl_->tls ? "https" : "http", host, port());
}

void ExtenderServer::Stop() {
  if (impl_ && impl_->server) {
    impl_->server->Stop();
    impl_->server.reset();
  }
}

int ExtenderServer::ServeUntilSignal(const ServerOptions& options) {
  // Block the signals before the I/O threads start so that they all inherit the mask and the
  // signal is taken here, by sigwait.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  if (VoidResult r = Start(options); !r.ok()) {
    std::cerr << "error: " << r.error().message << "\n";
    return 1;
  }
  std::cerr << "extender serving on " << url() << "\n";
  int sig = 0;
  sigwait(&set, &sig);
  std::cerr << "extender shutting down\n";
  Stop();
  return 0;
}

std::vector<std::string> NodeNamesOf(const v1::ExtenderArgs& args) {
  if (args.node_names) return *args.node_names;
  std::vector<std::string> out;
  if (args.nodes) {
    out.reserve(args.nodes->size());
    for (const auto& n : *args.nodes) out.push_back(n->metadata.name);
  }
  return out;
}

v1::ExtenderFilterResult FilterResultFor(const v1::ExtenderArgs& args,
                                         const std::vector<std::string>& passing) {
  v1::ExtenderFilterResult r;
  if (args.node_names || !args.nodes) {
    r.node_names = passing;
    return r;
  }
  const std::set<std::string_view> keep(passing.begin(), passing.end());
  std::vector<v1::NodePtr> nodes;
  for (const auto& n : *args.nodes)
    if (keep.count(n->metadata.name)) nodes.push_back(n);
  r.nodes = std::move(nodes);
  return r;
}

}  // namespace berth::extender
