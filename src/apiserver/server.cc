// Server: starting it (data directory, credentials, TLS, the HTTP server, the namespace
// deleter and the CRD controller, the kubeconfig), its accessors, and stopping it. What it
// serves is in the server_*.cc files beside it (server_internal.h names them).
#include "apiserver/server.h"

#include <fmt/format.h>
#include <openssl/rand.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

#include "apiserver/base64.h"
#include "apiserver/bootstrap.h"
#include "apiserver/crd_registry.h"
#include "apiserver/reviews.h"
#include "apiserver/server_internal.h"
#include "apiserver/workload_api.h"
#include "net/tls_certs.h"
#include "observe/log.h"

namespace berth::apiserver {
namespace {

using Json = nlohmann::json;
using net::HttpRequest;
using net::HttpResponse;

VoidResult ReadFile(const std::string& path, std::string* out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot read", path)};
  std::stringstream ss;
  ss << in.rdbuf();
  *out = ss.str();
  return {};
}

VoidResult WritePrivateFile(const std::string& path, const std::string& data) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) return Error{fmt::format("{}: cannot write", tmp)};
    out << data;
    if (!out.flush()) return Error{fmt::format("{}: cannot write", tmp)};
  }
  chmod(tmp.c_str(), 0600);
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return Error{fmt::format("{}: {}", path, ec.message())};
  return {};
}

// The admin bearer token: generated once, kept in the data directory.
Result<std::string> LoadOrCreateToken(const std::string& dir) {
  std::string token;
  if (auto r = ReadFile(dir + "/token", &token); !r.ok() || token.empty()) {
    unsigned char raw[24];
    RAND_bytes(raw, sizeof(raw));
    std::string hex;
    for (unsigned char c : raw) hex += fmt::format("{:02x}", c);
    token = hex;
    if (auto w = WritePrivateFile(dir + "/token", token); !w.ok()) return w.error();
  }
  while (!token.empty() && (token.back() == '\n' || token.back() == ' ')) token.pop_back();
  return token;
}

// The CA and the serving certificate: generated once, kept in the data directory. `ca_pem`
// receives the CA's certificate, for the kubeconfig and the cluster's root CA ConfigMaps.
Result<net::TlsServerConfig> LoadOrCreateTls(const ServerOptions& options, std::string* ca_pem) {
  const std::string& dir = options.data_dir;
  net::PemPair ca, serving;
  if (!ReadFile(dir + "/ca.crt", &ca.cert_pem).ok() ||
      !ReadFile(dir + "/ca.key", &ca.key_pem).ok()) {
    auto gen = net::GenerateCa("berth-ca");
    if (!gen.ok()) return gen.error();
    ca = *gen;
    if (auto w = WritePrivateFile(dir + "/ca.key", ca.key_pem); !w.ok()) return w.error();
    if (auto w = WritePrivateFile(dir + "/ca.crt", ca.cert_pem); !w.ok()) return w.error();
  }
  if (!ReadFile(dir + "/server.crt", &serving.cert_pem).ok() ||
      !ReadFile(dir + "/server.key", &serving.key_pem).ok()) {
    std::vector<std::string> hosts = {"127.0.0.1", "localhost", "::1"};
    if (options.bind_address != "127.0.0.1" && options.bind_address != "0.0.0.0") {
      hosts.push_back(options.bind_address);
    }
    auto gen = net::GenerateServingCert(ca, "berth-apiserver", hosts);
    if (!gen.ok()) return gen.error();
    serving = *gen;
    if (auto w = WritePrivateFile(dir + "/server.key", serving.key_pem); !w.ok()) return w.error();
    if (auto w = WritePrivateFile(dir + "/server.crt", serving.cert_pem); !w.ok()) {
      return w.error();
    }
  }
  *ca_pem = ca.cert_pem;
  return net::TlsServerConfig{serving.cert_pem, serving.key_pem};
}

// The kubeconfig for kubectl and the scheduler: the admin token, and the CA unless over plain
// HTTP.
VoidResult WriteKubeconfig(const std::string& path, const std::string& url, bool plain_http,
                           const std::string& ca_pem, const std::string& token) {
  Json cluster = {{"server", url}};
  if (!plain_http) cluster["certificate-authority-data"] = Base64(ca_pem);
  Json kubeconfig = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", {{{"name", "berth"}, {"cluster", cluster}}}},
      {"users", {{{"name", kAdminUser}, {"user", {{"token", token}}}}}},
      {"contexts",
       {{{"name", "berth"},
         {"context", {{"cluster", "berth"}, {"user", kAdminUser}, {"namespace", "default"}}}}}},
      {"current-context", "berth"},
      {"preferences", Json::object()}};
  return WritePrivateFile(path, kubeconfig.dump(2) + "\n");
}

}  // namespace

Server::Server(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Server::~Server() { Stop(); }

uint16_t Server::port() const { return impl_->http ? impl_->http->port() : 0; }
std::string Server::url() const {
  return fmt::format(
      "{}://{}:{}", impl_->options.plain_http ? "http" : "https",
      impl_->options.bind_address == "0.0.0.0" ? "127.0.0.1" : impl_->options.bind_address, port());
}
std::string Server::kubeconfig_path() const { return impl_->kubeconfig_path; }
std::string Server::token() const { return impl_->token; }
Store& Server::store() { return *impl_->store; }
std::string Server::Metrics() { return impl_->request_metrics.Expose(*impl_->store); }

size_t Server::ActiveWatches() {
  std::lock_guard lock(impl_->watches_mu);
  return impl_->watches.size();
}
NamespaceDeleter& Server::namespace_deleter() { return *impl_->namespace_deleter; }

void Server::Stop() {
  if (!impl_) return;
  {
    std::lock_guard lock(impl_->reaper_mu);
    if (impl_->stopping) return;
    impl_->stopping = true;
  }
  impl_->reaper_cv.notify_all();
  if (impl_->reaper.joinable()) impl_->reaper.join();
  if (impl_->namespace_deleter) impl_->namespace_deleter->Stop();
  if (impl_->crd_controller) impl_->crd_controller->Stop();
  if (impl_->options.workload_api) UnregisterBuiltinCrds();
  {
    std::lock_guard wl(impl_->watches_mu);
    for (auto& w : impl_->watches) {
      w->sink->Close();
      w->registration.reset();
    }
    impl_->watches.clear();
  }
  if (impl_->http) impl_->http->Stop();
}

Result<std::unique_ptr<Server>> Server::Start(const ServerOptions& options) {
  namespace fs = std::filesystem;
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::error_code ec;
  fs::create_directories(options.data_dir, ec);
  if (ec)
    return Error{
        fmt::format("{}: cannot create the data directory: {}", options.data_dir, ec.message())};
  chmod(options.data_dir.c_str(), 0700);
  const std::string dir = options.data_dir;
  auto store = Store::Open(
      {.path = dir + "/state.db", .event_window = options.watch_window, .seed = options.seed});
  if (!store.ok()) return store.error();
  impl->store = std::move(store).value();

  // Credentials: generated once, kept in the data directory.
  auto token = LoadOrCreateToken(dir);
  if (!token.ok()) return token.error();
  impl->token = std::move(token).value();
  net::HttpServerOptions http_opts;
  http_opts.bind_address = options.bind_address;
  http_opts.port = options.port;
  http_opts.threads = options.threads > 0
                          ? options.threads
                          : static_cast<int>(std::max(2u, std::thread::hardware_concurrency()));
  // Writes answer once durable without holding their I/O thread (AfterDurable), so a
  // connection can stay on one thread from read to write: no hand-off between threads per
  // request, and each wake-up serves every connection of the thread that is ready.
  http_opts.pin_connections = true;
  // An unauthenticated request is answered from its head: its body is not read.
  const Impl* judge = impl.get();
  http_opts.check_head = [judge](const HttpRequest& head) -> std::optional<HttpResponse> {
    if (judge->Authorized(head)) return std::nullopt;
    return ErrorResponse(Error{"Unauthorized", ErrorCode::kUnauthorized});
  };
  if (!options.plain_http) {
    auto tls = LoadOrCreateTls(options, &impl->ca_pem);
    if (!tls.ok()) return tls.error();
    http_opts.tls = std::move(tls).value();
  }
  if (auto ok = BootstrapCluster(*impl->store, impl->ca_pem); !ok.ok()) {
    return Error{fmt::format("{}: cannot create the cluster's built-in objects: {}", dir,
                             ok.error().message)};
  }
  // Finishes the namespace deletions a previous run left, and those asked for from now on.
  NamespaceDeleterOptions deleter_options;
  deleter_options.log = [](const std::string& what) {
    static observe::Logger logger;
    logger.Error("Namespace deletion failed; retrying", {observe::KV::Str("err", what)});
  };
  impl->namespace_deleter = std::make_unique<NamespaceDeleter>(*impl->store, deleter_options);
  if (auto ok = impl->namespace_deleter->Start(); !ok.ok()) return ok.error();
  if (options.workload_api) RegisterWorkloadApi();
  impl->crd_controller = std::make_unique<CrdController>(*impl->store);
  if (auto ok = impl->crd_controller->Start(); !ok.ok()) return ok.error();
  Impl* raw = impl.get();
  auto http = net::HttpServer::Start(http_opts, [raw](HttpRequest& req) {
    return raw->request_metrics.Serve(req, [raw](HttpRequest& r) { return raw->Handle(r); });
  });
  if (!http.ok()) return http.error();
  impl->http = std::move(http).value();
  impl->reaper = std::thread([raw] { raw->ReapLoop(); });
  auto server = std::unique_ptr<Server>(new Server(std::move(impl)));

  server->impl_->kubeconfig_path = dir + "/kubeconfig";
  if (auto w = WriteKubeconfig(server->impl_->kubeconfig_path, server->url(), options.plain_http,
                               server->impl_->ca_pem, server->impl_->token);
      !w.ok()) {
    return w.error();
  }
  return server;
}

}  // namespace berth::apiserver
