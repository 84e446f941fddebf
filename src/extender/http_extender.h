// HttpExtender: Berth's client of one scheduler extender speaking kube-scheduler's HTTP
// protocol (berth/extender/v1.h): POST <urlPrefix>/<verb> with a JSON body, 200 + JSON answer.
//
// Fast by construction: one keep-alive connection pool per extender (concurrent requests from
// the scheduling and binding threads use separate connections, TLS handshakes happen once per
// connection), the request timeout enforced per request, and each node's JSON serialized once
// per node version (extenders without a node cache receive whole nodes on every call).
//
// Thread-safe: see berth/framework/extender.h for who calls what.
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "berth/framework/extender.h"
#include "config/types.h"
#include "net/http_client.h"

namespace berth::extender {

class HttpExtender final : public Extender {
 public:
  // Errors name `where` (e.g. "extenders[0]"): bad URL, unreadable TLS files.
  static Result<std::unique_ptr<HttpExtender>> Create(const config::Extender& config,
                                                      std::string_view where);
  ~HttpExtender() override;

  const std::string& Name() const override { return name_; }
  bool IsFilter() const override { return !config_.filter_verb.empty(); }
  bool IsPrioritizer() const override { return !config_.prioritize_verb.empty(); }
  bool IsBinder() const override { return !config_.bind_verb.empty(); }
  bool SupportsPreemption() const override { return !config_.preempt_verb.empty(); }
  bool IsIgnorable() const override { return config_.ignorable; }
  int64_t Weight() const override { return config_.weight; }
  bool IsInterested(const Pod& pod) const override;

  Result<ExtenderFilterResult> Filter(const Pod& pod,
                                      std::span<const NodeInfo* const> nodes) override;
  Result<std::vector<HostPriority>> Prioritize(const Pod& pod,
                                               std::span<const NodeInfo* const> nodes) override;
  VoidResult Bind(const Pod& pod, std::string_view node) override;
  Result<std::map<std::string, Victims>> ProcessPreemption(
      const Pod& pod, const std::map<std::string, Victims>& node_to_victims,
      const Snapshot& snapshot) override;

 private:
  HttpExtender() = default;
  // POSTs `body` to the verb; the 200 answer's body, or an error naming the extender.
  Result<std::string> Send(const std::string& verb, const std::string& body);
  // {"Pod":...,"Nodes":...,"NodeNames":...} for filter and prioritize.
  std::string ArgsBody(const Pod& pod, std::span<const NodeInfo* const> nodes);
  std::string BuildArgsBody(const Pod& pod, std::span<const NodeInfo* const> nodes);
  std::string PodJsonCached(const Pod& pod);
  void AppendNodeJson(const NodeInfo& node, std::string* out);

  config::Extender config_;
  std::string name_;
  std::set<std::string, std::less<>> managed_resources_;
  std::unique_ptr<net::HttpClient> client_;

  // Which version of which pod something was made for: the same object, UID and resourceVersion.
  struct PodVersion {
    const Pod* pod = nullptr;
    std::string uid, resource_version;
    bool Is(const Pod& p) const {
      return pod == &p && uid == p.metadata.uid && resource_version == p.metadata.resource_version;
    }
    void Set(const Pod& p) {
      pod = &p;
      uid = p.metadata.uid;
      resource_version = p.metadata.resource_version;
    }
  };
  // The last pod serialized (filter and prioritize of one cycle send the same pod).
  std::mutex pod_mu_;
  PodVersion last_pod_;
  std::string last_pod_json_;
  // The last arguments sent: prioritize after a filter that kept every node sends the same text.
  // The nodes are held, so that equal pointers mean the same node versions.
  std::mutex args_mu_;
  PodVersion last_args_pod_;
  std::string last_args_body_;
  std::vector<std::shared_ptr<const Node>> last_args_nodes_;
  // Node name -> the node version serialized and its JSON (extenders without a node cache).
  std::mutex node_mu_;
  std::unordered_map<std::string, std::pair<std::shared_ptr<const Node>, std::string>> node_json_;
};

// The configured extenders in kube-scheduler's order: as listed, ignorable ones moved last.
Result<std::vector<std::shared_ptr<Extender>>> BuildExtenders(
    const std::vector<config::Extender>& configs);

}  // namespace berth::extender
