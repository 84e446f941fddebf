#include "client/kubeconfig.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "api/codec.h"
#include "net/tls_certs.h"

namespace berth::client {
namespace {

using Json = nlohmann::json;

Result<std::string> ReadWhole(const std::string& path, std::string_view what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{fmt::format("{} {}: cannot read the file", what, path)};
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A named entry of a kubeconfig list, with the file it came from (for relative paths).
struct Named {
  Json value;
  std::string file;
};

std::string Resolve(const std::string& path, const std::string& file) {
  if (path.empty() || path[0] == '/') return path;
  return (std::filesystem::path(file).parent_path() / path).string();
}

// Data inline (-data, base64) or from a file (relative to the kubeconfig).
Result<std::string> DataOrFile(const Json& obj, const std::string& key, const std::string& file,
                               std::string_view what) {
  if (obj.contains(key + "-data") && obj[key + "-data"].is_string()) {
    return net::DecodeBase64(obj[key + "-data"].get<std::string>(),
                             fmt::format("kubeconfig {}: {}-data", file, key));
  }
  if (obj.contains(key) && obj[key].is_string()) {
    return ReadWhole(Resolve(obj[key].get<std::string>(), file), what);
  }
  return std::string();
}

// Bearer tokens read from files end at their last non-space character.
void TrimTrailingSpace(std::string& token) {
  while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
    token.pop_back();
  }
}

// The kubeconfig files to read: the explicit one, else those of KUBECONFIG that exist.
std::vector<std::string> KubeconfigFiles(const KubeconfigSelection& sel) {
  std::vector<std::string> files;
  if (!sel.explicit_path.empty()) {
    files.push_back(sel.explicit_path);
  } else if (const char* env = std::getenv("KUBECONFIG"); env && *env) {
    std::string list = env;
    size_t start = 0;
    while (start <= list.size()) {
      size_t colon = list.find(':', start);
      std::string f =
          list.substr(start, colon == std::string::npos ? std::string::npos : colon - start);
      if (!f.empty() && std::filesystem::exists(f)) files.push_back(f);
      if (colon == std::string::npos) break;
      start = colon + 1;
    }
  }
  return files;
}

// With no kubeconfig: the in-cluster configuration (the service account's token and CA), else
// --master alone.
Result<net::HttpClientOptions> WithoutKubeconfig(const KubeconfigSelection& sel,
                                                 const InClusterPaths& in_cluster) {
  net::HttpClientOptions opts;
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (host && *host && port && *port) {
    auto token = ReadWhole(in_cluster.token, "service account token");
    if (!token.ok()) return token.error();
    auto ca = ReadWhole(in_cluster.ca, "service account CA");
    if (!ca.ok()) return ca.error();
    std::string h = host;
    if (h.find(':') != std::string::npos) h = "[" + h + "]";
    opts.server = fmt::format("https://{}:{}", h, port);
    opts.bearer_token = *token;
    TrimTrailingSpace(opts.bearer_token);
    opts.ca_pem = *ca;
    if (!sel.master.empty()) opts.server = sel.master;
    return opts;
  }
  if (!sel.master.empty()) {
    opts.server = sel.master;
    return opts;
  }
  return Error{
      "no kubeconfig: give --kubeconfig or --master, set KUBECONFIG, or run in a "
      "cluster"};
}

// The kubeconfig files merged: the first file to define a name wins, as kubectl merges
// KUBECONFIG, and so does the first current-context.
struct MergedKubeconfig {
  std::map<std::string, Named> clusters, users, contexts;
  std::string current;
};

Result<MergedKubeconfig> MergeKubeconfigs(const std::vector<std::string>& files) {
  MergedKubeconfig merged;
  for (const auto& f : files) {
    auto text = ReadWhole(f, "kubeconfig");
    if (!text.ok()) return text.error();
    auto docs = ParseDocuments(*text, f);
    if (!docs.ok()) return Error{fmt::format("kubeconfig {}", docs.error().message)};
    if (docs->empty()) continue;
    const Json& doc = (*docs)[0];
    if (!doc.is_object()) return Error{fmt::format("kubeconfig {}: not a kubeconfig", f)};
    auto collect = [&](const char* list, const char* field, std::map<std::string, Named>* out) {
      if (!doc.contains(list) || !doc[list].is_array()) return;
      for (const auto& e : doc[list]) {
        if (!e.is_object() || !e.contains("name")) continue;
        out->emplace(e["name"].get<std::string>(), Named{e.value(field, Json::object()), f});
      }
    };
    collect("clusters", "cluster", &merged.clusters);
    collect("users", "user", &merged.users);
    collect("contexts", "context", &merged.contexts);
    if (merged.current.empty()) merged.current = doc.value("current-context", "");
  }
  return merged;
}

// The credentials of user `user_name` (entry `u`): a token or token file, a client
// certificate and key; exec and auth-provider plugins are refused.
VoidResult ApplyUser(const Named& u, const std::string& user_name, net::HttpClientOptions& opts) {
  const Json& user = u.value;
  const std::string& uf = u.file;
  if (user.contains("token")) opts.bearer_token = user.value("token", "");
  if (user.contains("tokenFile")) {
    auto t = ReadWhole(Resolve(user.value("tokenFile", ""), uf),
                       fmt::format("kubeconfig {}: user \"{}\": tokenFile", uf, user_name));
    if (!t.ok()) return t.error();
    opts.bearer_token = *t;
    TrimTrailingSpace(opts.bearer_token);
  }
  auto cert =
      DataOrFile(user, "client-certificate", uf,
                 fmt::format("kubeconfig {}: user \"{}\": client-certificate", uf, user_name));
  if (!cert.ok()) return cert.error();
  auto key = DataOrFile(user, "client-key", uf,
                        fmt::format("kubeconfig {}: user \"{}\": client-key", uf, user_name));
  if (!key.ok()) return key.error();
  opts.client_cert_pem = *cert;
  opts.client_key_pem = *key;
  if (user.contains("exec") || user.contains("auth-provider")) {
    return Error{
        fmt::format("kubeconfig {}: user \"{}\": exec and auth-provider credentials are "
                    "not supported; use a token, tokenFile or client certificate",
                    uf, user_name)};
  }
  return {};
}

}  // namespace

Result<net::HttpClientOptions> ResolveConnection(const KubeconfigSelection& sel,
                                                 const InClusterPaths& in_cluster) {
  const std::vector<std::string> files = KubeconfigFiles(sel);
  if (files.empty()) return WithoutKubeconfig(sel, in_cluster);
  auto merged = MergeKubeconfigs(files);
  if (!merged.ok()) return merged.error();
  const auto& [clusters, users, contexts, current] = *merged;
  net::HttpClientOptions opts;
  const std::string where = files.size() == 1 ? files[0] : fmt::format("{}", fmt::join(files, ":"));
  std::string context_name = sel.context.empty() ? current : sel.context;
  if (context_name.empty()) {
    if (!sel.master.empty()) {
      opts.server = sel.master;
      return opts;
    }
    return Error{fmt::format("kubeconfig {}: no current-context is set", where)};
  }
  auto ctx = contexts.find(context_name);
  if (ctx == contexts.end()) {
    return Error{fmt::format("kubeconfig {}: context \"{}\" not found", where, context_name)};
  }
  std::string cluster_name = ctx->second.value.value("cluster", "");
  std::string user_name = ctx->second.value.value("user", "");
  auto cl = clusters.find(cluster_name);
  if (cl == clusters.end()) {
    return Error{fmt::format("kubeconfig {}: context \"{}\": cluster \"{}\" not found", where,
                             context_name, cluster_name)};
  }
  const Json& c = cl->second.value;
  opts.server = sel.master.empty() ? c.value("server", "") : sel.master;
  if (opts.server.empty()) {
    return Error{
        fmt::format("kubeconfig {}: cluster \"{}\" has no server", cl->second.file, cluster_name)};
  }
  opts.insecure_skip_verify = c.value("insecure-skip-tls-verify", false);
  opts.server_name = c.value("tls-server-name", "");
  auto ca = DataOrFile(c, "certificate-authority", cl->second.file,
                       fmt::format("kubeconfig {}: cluster \"{}\": certificate-authority",
                                   cl->second.file, cluster_name));
  if (!ca.ok()) return ca.error();
  opts.ca_pem = *ca;
  if (auto u = users.find(user_name); u != users.end()) {
    if (auto ok = ApplyUser(u->second, user_name, opts); !ok.ok()) return ok.error();
  } else if (!user_name.empty()) {
    return Error{fmt::format("kubeconfig {}: context \"{}\": user \"{}\" not found", where,
                             context_name, user_name)};
  }
  return opts;
}

}  // namespace berth::client
