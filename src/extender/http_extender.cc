#include "extender/http_extender.h"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "api/json_text.h"
#include "api/read_file.h"
#include "berth/extender/v1.h"
#include "extender/wire_internal.h"
#include "net/tls_certs.h"

namespace berth::extender {
namespace {

constexpr size_t kMaxPemBytes = 1 << 20;

// PEM from inline data (base64 in the configuration) or a file; data wins, as upstream.
Result<std::string> Pem(const std::string& data, const std::string& file, std::string_view what) {
  if (!data.empty()) return net::DecodeBase64(data, what);
  if (file.empty()) return std::string();
  auto text = ReadFileText(file, kMaxPemBytes);
  if (!text.ok()) return Error{fmt::format("{}: {}", what, text.error().message)};
  return text;
}

}  // namespace

HttpExtender::~HttpExtender() = default;

Result<std::unique_ptr<HttpExtender>> HttpExtender::Create(const config::Extender& config,
                                                           std::string_view where) {
  std::unique_ptr<HttpExtender> e(new HttpExtender());
  e->config_ = config;
  e->name_ = config.url_prefix;
  for (const auto& r : config.managed_resources) e->managed_resources_.insert(r.name);

  std::string server = config.url_prefix;
  while (!server.empty() && server.back() == '/') server.pop_back();
  net::HttpClientOptions options;
  options.server = server;
  options.timeout = std::chrono::milliseconds(config.http_timeout_ms);
  options.user_agent = "berth-scheduler";
  if (config.tls_config) {
    const config::ExtenderTLSConfig& tls = *config.tls_config;
    options.insecure_skip_verify = tls.insecure;
    options.server_name = tls.server_name;
    auto ca = Pem(tls.ca_data, tls.ca_file, fmt::format("{}.tlsConfig.ca", where));
    auto cert = Pem(tls.cert_data, tls.cert_file, fmt::format("{}.tlsConfig.cert", where));
    auto key = Pem(tls.key_data, tls.key_file, fmt::format("{}.tlsConfig.key", where));
    for (const auto* r : {&ca, &cert, &key})
      if (!r->ok()) return r->error();
    options.ca_pem = *ca;
    options.client_cert_pem = *cert;
    options.client_key_pem = *key;
  }
  // enableHTTPS without a CA to verify against turns verification off, as upstream does.
  if (config.enable_https && options.ca_pem.empty()) options.insecure_skip_verify = true;
  auto client = net::HttpClient::Create(options);
  if (!client.ok())
    return Error{fmt::format("{}.urlPrefix: {}", where, client.error().message),
                 ErrorCode::kInvalid};
  e->client_ = std::move(client).value();
  return e;
}

bool HttpExtender::IsInterested(const Pod& pod) const {
  if (managed_resources_.empty()) return true;
  auto uses = [&](const auto& containers) {
    for (const Container& c : containers) {
      for (const auto& [name, q] : c.resources.requests)
        if (managed_resources_.count(name)) return true;
      for (const auto& [name, q] : c.resources.limits)
        if (managed_resources_.count(name)) return true;
    }
    return false;
  };
  return uses(pod.spec.containers) || uses(pod.spec.init_containers);
}

Result<std::string> HttpExtender::Send(const std::string& verb, const std::string& body) {
  auto response = client_->Do("POST", "/" + verb, body);
  if (!response.ok()) {
    return Error{fmt::format("failed {} with extender at URL {}/{}: {}", verb, client_->server(),
                             verb, response.error().message),
                 response.error().code};
  }
  if (response->status != 200) {
    return Error{fmt::format("failed {} with extender at URL {}/{}, code {}", verb,
                             client_->server(), verb, response->status),
                 ErrorCode::kUnavailable};
  }
  return std::move(response->body);
}

std::string HttpExtender::PodJsonCached(const Pod& pod) {
  std::lock_guard lock(pod_mu_);
  if (!last_pod_.Is(pod)) {
    last_pod_json_ = v1::PodJson(pod);
    last_pod_.Set(pod);
  }
  return last_pod_json_;
}

void HttpExtender::AppendNodeJson(const NodeInfo& node, std::string* out) {
  std::lock_guard lock(node_mu_);
  auto& entry = node_json_[node.name()];
  if (entry.first != node.node_ptr()) {
    entry.first = node.node_ptr();
    entry.second = v1::NodeJson(*node.node());
  }
  out->append(entry.second);
}

std::string HttpExtender::ArgsBody(const Pod& pod, std::span<const NodeInfo* const> nodes) {
  std::lock_guard lock(args_mu_);
  const bool same = last_args_pod_.Is(pod) && last_args_nodes_.size() == nodes.size() &&
                    std::equal(nodes.begin(), nodes.end(), last_args_nodes_.begin(),
                               [](const NodeInfo* n, const std::shared_ptr<const Node>& held) {
                                 return n->node() == held.get();
                               });
  if (!same) {
    last_args_body_ = BuildArgsBody(pod, nodes);
    last_args_pod_.Set(pod);
    last_args_nodes_.resize(nodes.size());
    for (size_t i = 0; i < nodes.size(); ++i) last_args_nodes_[i] = nodes[i]->node_ptr();
  }
  return last_args_body_;
}

std::string HttpExtender::BuildArgsBody(const Pod& pod, std::span<const NodeInfo* const> nodes) {
  std::string body = "{\"Pod\":";
  body += PodJsonCached(pod);
  if (config_.node_cache_capable) {
    // One allocation for the whole document: names are short.
    body.reserve(body.size() + 64 +
                 nodes.size() * (nodes.empty() ? 0 : nodes[0]->name().size() + 8));
    body += ",\"Nodes\":null,\"NodeNames\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) body += ',';
      AppendJsonString(nodes[i]->name(), &body);
    }
    body += "]}";
  } else {
    body += ",\"Nodes\":{\"metadata\":{},\"items\":[";
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i) body += ',';
      AppendNodeJson(*nodes[i], &body);
    }
    body += "]},\"NodeNames\":null}";
  }
  return body;
}

Result<ExtenderFilterResult> HttpExtender::Filter(const Pod& pod,
                                                  std::span<const NodeInfo* const> nodes) {
  ExtenderFilterResult out;
  if (!IsFilter()) {
    out.feasible.assign(nodes.begin(), nodes.end());
    return out;
  }
  BERTH_TRY_ASSIGN(body, Send(config_.filter_verb, ArgsBody(pod, nodes)));
  auto decoded = v1::DecodeFilterAnswer(body);
  if (!decoded.ok())
    return Error{fmt::format("extender {} filter: {}", name_, decoded.error().message)};
  v1::ExtenderFilterResult& r = decoded->result;
  if (!r.error.empty()) return Error{r.error};

  // Answers name nodes of the input; Berth keeps its own view of them (with their pods).
  const std::vector<std::string>* names = nullptr;
  if (config_.node_cache_capable && r.node_names) {
    names = &*r.node_names;
  } else if (decoded->node_item_names) {
    names = &*decoded->node_item_names;
  }
  if (names) {
    // Extenders keep the input order: match in one pass, looking names up only when not.
    std::unordered_map<std::string_view, const NodeInfo*> by_name;
    size_t next = 0;
    out.feasible.reserve(names->size());
    for (const auto& name : *names) {
      while (next < nodes.size() && nodes[next]->name() != name && by_name.empty()) ++next;
      if (next < nodes.size() && nodes[next]->name() == name) {
        out.feasible.push_back(nodes[next++]);
        continue;
      }
      if (by_name.empty()) {
        by_name.reserve(nodes.size());
        for (const NodeInfo* n : nodes) by_name.emplace(n->name(), n);
      }
      auto it = by_name.find(name);
      if (it == by_name.end())
        return Error{fmt::format(
            "extender \"{}\" claims a filtered node \"{}\" which is not found in the input node "
            "list",
            name_, name)};
      out.feasible.push_back(it->second);
    }
  }
  out.failed = std::move(r.failed_nodes);
  out.failed_and_unresolvable = std::move(r.failed_and_unresolvable_nodes);
  return out;
}

Result<std::vector<HostPriority>> HttpExtender::Prioritize(const Pod& pod,
                                                           std::span<const NodeInfo* const> nodes) {
  std::vector<HostPriority> out;
  if (!IsPrioritizer()) {
    for (const NodeInfo* n : nodes) out.push_back({n->name(), 0});
    return out;
  }
  BERTH_TRY_ASSIGN(body, Send(config_.prioritize_verb, ArgsBody(pod, nodes)));
  auto decoded = v1::DecodeHostPriorityList(body);
  if (!decoded.ok())
    return Error{fmt::format("extender {} prioritize: {}", name_, decoded.error().message)};
  out.reserve(decoded->size());
  for (auto& h : *decoded) out.push_back({std::move(h.host), h.score});
  return out;
}

VoidResult HttpExtender::Bind(const Pod& pod, std::string_view node) {
  if (!IsBinder()) return Error{"unexpected empty bindVerb in extender"};
  v1::ExtenderBindingArgs args{pod.metadata.name, pod.metadata.namespace_, pod.metadata.uid,
                               std::string(node)};
  BERTH_TRY_ASSIGN(body, Send(config_.bind_verb, v1::Encode(args)));
  auto decoded = v1::DecodeExtenderBindingResult(body);
  if (!decoded.ok())
    return Error{fmt::format("extender {} bind: {}", name_, decoded.error().message)};
  if (!decoded->error.empty()) return Error{decoded->error};
  return {};
}

Result<std::map<std::string, Victims>> HttpExtender::ProcessPreemption(
    const Pod& pod, const std::map<std::string, Victims>& node_to_victims,
    const Snapshot& snapshot) {
  if (!SupportsPreemption())
    return Error{fmt::format(
        "preempt verb is not defined for extender {} but run into ProcessPreemption", name_)};
  std::string body = "{\"Pod\":" + PodJsonCached(pod);
  nlohmann::json victims = nlohmann::json::object();
  for (const auto& [node, v] : node_to_victims) {
    nlohmann::json pods = nlohmann::json::array();
    for (const auto& p : v.pods) {
      if (config_.node_cache_capable) {
        pods.push_back({{"UID", p->pod->metadata.uid}});
      } else {
        pods.push_back(nlohmann::json::parse(v1::PodJson(*p->pod)));
      }
    }
    victims[node] = {{"Pods", std::move(pods)}, {"NumPDBViolations", v.num_pdb_violations}};
  }
  if (config_.node_cache_capable) {
    body += ",\"NodeNameToVictims\":null,\"NodeNameToMetaVictims\":" + victims.dump() + "}";
  } else {
    body += ",\"NodeNameToVictims\":" + victims.dump() + ",\"NodeNameToMetaVictims\":null}";
  }
  BERTH_TRY_ASSIGN(answer, Send(config_.preempt_verb, body));
  auto decoded = v1::DecodeExtenderPreemptionResult(answer);
  if (!decoded.ok())
    return Error{fmt::format("extender {} preempt: {}", name_, decoded.error().message)};

  // The answer names victims by UID; they must be pods on that node.
  std::map<std::string, Victims> out;
  for (const auto& [node, meta] : decoded->node_name_to_meta_victims) {
    const NodeInfo* ni = snapshot.Get(node);
    if (!ni) return Error{fmt::format("nodeinfo not found for node name \"{}\"", node)};
    Victims v;
    v.num_pdb_violations = meta.num_pdb_violations;
    for (const v1::MetaPod& mp : meta.pods) {
      auto it = std::find_if(ni->pods().begin(), ni->pods().end(),
                             [&](const PodInfoPtr& p) { return p->pod->metadata.uid == mp.uid; });
      if (it == ni->pods().end())
        return Error{fmt::format(
            "extender: {} claims to preempt pod (UID: {}) on node: {}, but the pod is not found "
            "on that node",
            name_, mp.uid, node)};
      v.pods.push_back(*it);
    }
    out[node] = std::move(v);
  }
  return out;
}

Result<std::vector<std::shared_ptr<Extender>>> BuildExtenders(
    const std::vector<config::Extender>& configs) {
  std::vector<std::shared_ptr<Extender>> regular, ignorable;
  for (size_t i = 0; i < configs.size(); ++i) {
    auto e = HttpExtender::Create(configs[i], fmt::format("extenders[{}]", i));
    if (!e.ok()) return e.error();
    (configs[i].ignorable ? ignorable : regular).push_back(std::move(e).value());
  }
  regular.insert(regular.end(), ignorable.begin(), ignorable.end());
  return regular;
}

}  // namespace berth::extender
