// What a simulated kubelet writes about its node: the Lease it renews in kube-node-lease, the
// node's status (conditions with heartbeats, nodeInfo, addresses, images), and the addresses
// it hands out: a pod CIDR per node (as the node IPAM controller allocates them from the
// cluster CIDR) and pod IPs within it.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "berth/api/objects.h"
#include "berth/api/result.h"

namespace berth::kubelet {

// An IPv4 network, "10.244.3.0/24".
struct Ipv4Net {
  uint32_t base = 0;
  int prefix = 0;
  uint64_t size() const { return uint64_t{1} << (32 - prefix); }
  std::string ToString() const;
};
Result<Ipv4Net> ParseIpv4Net(std::string_view text);
std::string FormatIpv4(uint32_t address);

// Node pod CIDRs carved from a cluster CIDR, lowest free first; a node's existing CIDR is
// marked used so that restarts keep every node's range.
class PodCidrAllocator {
 public:
  PodCidrAllocator(Ipv4Net cluster, int node_prefix);
  std::optional<Ipv4Net> Allocate();
  void MarkUsed(const Ipv4Net& net);
  void Release(const Ipv4Net& net);

 private:
  std::optional<uint64_t> IndexOf(const Ipv4Net& net) const;
  Ipv4Net cluster_;
  int node_prefix_;
  std::vector<bool> used_;
  uint64_t next_ = 0;
};

// Pod IPs of one node's CIDR: the network address and the first host (the node's bridge,
// as with the usual CNI plugins) are never handed out, nor is the broadcast address.
class PodIpPool {
 public:
  explicit PodIpPool(Ipv4Net net);
  std::optional<std::string> Allocate();
  void MarkUsed(const std::string& ip);
  void Release(const std::string& ip);
  size_t in_use() const { return used_.size(); }

 private:
  Ipv4Net net_;
  std::set<uint32_t> used_;
  uint32_t next_;
};

// A Lease of kube-node-lease as the kubelet creates it: holder the node, owned by the node.
nlohmann::json NodeLease(const std::string& node, const std::string& node_uid, int duration_seconds,
                         const std::string& renew_time);
// The merge patch that renews it.
std::string LeaseRenewPatch(const std::string& node, int duration_seconds,
                            const std::string& renew_time);

// The node's four conditions (MemoryPressure, DiskPressure, PIDPressure False; Ready True),
// in the kubelet's words, with heartbeat `now` and transition time `since`.
nlohmann::json NodeConditions(const std::string& now, const std::string& since);

// The status the kubelet reports when it registers a node, for a node that has none yet
// (created by hand): capacity and allocatable, addresses, nodeInfo.
struct NodeDefaults {
  std::string cpu = "8", memory = "32Gi", pods = "110", ephemeral_storage = "100Gi";
  std::string kubelet_version = "v1.32.0";
};
nlohmann::json RegistrationStatus(const std::string& node, const std::string& internal_ip,
                                  const NodeDefaults& defaults);

// A node annotated with this (comma-separated feature names, "" for none) declares those
// features in status.declaredFeatures, as a kubelet with other gates or configuration would;
// without it the node declares what a v1.37 kubelet declares by default
// (declared_features::KubeletDefaults). Either way a known feature past its version bound
// for `kubelet_version` is not declared, as a kubelet of that version would not.
inline constexpr const char* kDeclaredFeaturesAnnotation = "berth.dev/declared-features";
// The sorted feature names the node's kubelet declares.
std::vector<std::string> DeclaredFeaturesFor(const Labels& annotations,
                                             std::string_view kubelet_version);

// An image a node holds: its size and names. Keyed by the fully qualified tag
// (ReportedImage), its names are the repository digest, that tag, and the names pods wrote
// it as when they differ ("nginx:latest"), which is how the scheduler's ImageLocality looks
// images up.
struct NodeImage {
  int64_t size_bytes = 0;
  std::vector<std::string> names;
};
using NodeImageMap = std::map<std::string, NodeImage>;

// Adds the image a pod ran as `written`; true when the node's list changed.
bool AddImage(NodeImageMap& images, const std::string& written);
// Reads a node's status.images back (after a restart), keyed as AddImage keys them.
NodeImageMap ImagesFromStatus(const nlohmann::json& status_images);
// status.images: largest first, at most 50 (the kubelet's nodeStatusMaxImages).
nlohmann::json NodeImages(const NodeImageMap& images);

}  // namespace berth::kubelet
