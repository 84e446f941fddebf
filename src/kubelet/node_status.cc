#include "kubelet/node_status.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

#include "api/declared_features.h"
#include "berth/framework/node_info.h"
#include "kubelet/pod_status.h"

namespace berth::kubelet {

using Json = nlohmann::json;

std::string FormatIpv4(uint32_t a) {
  return fmt::format("{}.{}.{}.{}", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

std::string Ipv4Net::ToString() const { return fmt::format("{}/{}", FormatIpv4(base), prefix); }

namespace {

std::optional<uint32_t> ParseIpv4(std::string_view text) {
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned part = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), part);
    if (ec != std::errc() || part > 255 || end == text.data()) return std::nullopt;
    out = (out << 8) | part;
    text.remove_prefix(end - text.data());
    if (i < 3) {
      if (text.empty() || text[0] != '.') return std::nullopt;
      text.remove_prefix(1);
    }
  }
  if (!text.empty()) return std::nullopt;
  return out;
}

}  // namespace

Result<Ipv4Net> ParseIpv4Net(std::string_view text) {
  const size_t slash = text.find('/');
  auto bad = [&] {
    return Error{fmt::format("invalid IPv4 CIDR \"{}\"", text), ErrorCode::kInvalid};
  };
  if (slash == std::string_view::npos) return bad();
  auto address = ParseIpv4(text.substr(0, slash));
  int prefix = -1;
  const std::string_view p = text.substr(slash + 1);
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), prefix);
  if (!address || ec != std::errc() || end != p.data() + p.size() || prefix < 0 || prefix > 32) {
    return bad();
  }
  const uint32_t mask = prefix == 0 ? 0 : ~uint32_t{0} << (32 - prefix);
  return Ipv4Net{*address & mask, prefix};
}

PodCidrAllocator::PodCidrAllocator(Ipv4Net cluster, int node_prefix)
    : cluster_(cluster), node_prefix_(std::max(node_prefix, cluster.prefix)) {
  used_.assign(uint64_t{1} << std::min(node_prefix_ - cluster_.prefix, 24), false);
}

std::optional<uint64_t> PodCidrAllocator::IndexOf(const Ipv4Net& net) const {
  if (net.prefix != node_prefix_) return std::nullopt;
  const uint32_t cluster_mask = cluster_.prefix == 0 ? 0 : ~uint32_t{0} << (32 - cluster_.prefix);
  if ((net.base & cluster_mask) != cluster_.base) return std::nullopt;
  const uint64_t index = (net.base - cluster_.base) >> (32 - node_prefix_);
  if (index >= used_.size()) return std::nullopt;
  return index;
}

std::optional<Ipv4Net> PodCidrAllocator::Allocate() {
  for (uint64_t tried = 0; tried < used_.size(); ++tried) {
    const uint64_t i = (next_ + tried) % used_.size();
    if (used_[i]) continue;
    used_[i] = true;
    next_ = i + 1;
    return Ipv4Net{cluster_.base + static_cast<uint32_t>(i << (32 - node_prefix_)), node_prefix_};
  }
  return std::nullopt;
}

void PodCidrAllocator::MarkUsed(const Ipv4Net& net) {
  if (auto i = IndexOf(net)) used_[*i] = true;
}

void PodCidrAllocator::Release(const Ipv4Net& net) {
  if (auto i = IndexOf(net)) used_[*i] = false;
}

PodIpPool::PodIpPool(Ipv4Net net) : net_(net), next_(net.base + 2) {}

std::optional<std::string> PodIpPool::Allocate() {
  if (net_.size() < 4) return std::nullopt;
  const uint32_t first = net_.base + 2;
  const uint32_t last = net_.base + static_cast<uint32_t>(net_.size() - 2);
  const uint64_t span = uint64_t{last} - first + 1;
  for (uint64_t tried = 0; tried < span; ++tried) {
    uint32_t ip = next_ + static_cast<uint32_t>(tried);
    if (ip > last) ip = first + static_cast<uint32_t>((uint64_t{ip} - first) % span);
    if (used_.count(ip)) continue;
    used_.insert(ip);
    next_ = ip + 1 > last ? first : ip + 1;
    return FormatIpv4(ip);
  }
  return std::nullopt;
}

void PodIpPool::MarkUsed(const std::string& ip) {
  if (auto a = ParseIpv4(ip)) used_.insert(*a);
}

void PodIpPool::Release(const std::string& ip) {
  if (auto a = ParseIpv4(ip)) used_.erase(*a);
}

Json NodeLease(const std::string& node, const std::string& node_uid, int duration_seconds,
               const std::string& renew_time) {
  Json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata", {{"name", node}, {"namespace", "kube-node-lease"}}},
                {"spec",
                 {{"holderIdentity", node},
                  {"leaseDurationSeconds", duration_seconds},
                  {"renewTime", renew_time}}}};
  if (!node_uid.empty()) {
    lease["metadata"]["ownerReferences"] =
        Json::array({{{"apiVersion", "v1"}, {"kind", "Node"}, {"name", node}, {"uid", node_uid}}});
  }
  return lease;
}

std::string LeaseRenewPatch(const std::string& node, int duration_seconds,
                            const std::string& renew_time) {
  return fmt::format(
      R"({{"spec":{{"holderIdentity":{},"leaseDurationSeconds":{},"renewTime":"{}"}}}})",
      Json(node).dump(), duration_seconds, renew_time);
}

Json NodeConditions(const std::string& now, const std::string& since) {
  auto condition = [&](const char* type, const char* status, const char* reason,
                       const char* message) {
    return Json{{"type", type},       {"status", status},         {"reason", reason},
                {"message", message}, {"lastHeartbeatTime", now}, {"lastTransitionTime", since}};
  };
  return Json::array(
      {condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                 "kubelet has sufficient memory available"),
       condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                 "kubelet has no disk pressure"),
       condition("PIDPressure", "False", "KubeletHasSufficientPID",
                 "kubelet has sufficient PID available"),
       condition("Ready", "True", "KubeletReady", "kubelet is posting ready status")});
}

Json RegistrationStatus(const std::string& node, const std::string& internal_ip,
                        const NodeDefaults& d) {
  Json resources = {{"cpu", d.cpu},
                    {"memory", d.memory},
                    {"pods", d.pods},
                    {"ephemeral-storage", d.ephemeral_storage}};
  return {{"capacity", resources},
          {"allocatable", resources},
          {"addresses",
           {{{"type", "InternalIP"}, {"address", internal_ip}},
            {{"type", "Hostname"}, {"address", node}}}},
          {"nodeInfo",
           {{"architecture", "amd64"},
            {"operatingSystem", "linux"},
            {"osImage", "Berth simulated node"},
            {"kernelVersion", "6.1.0"},
            {"containerRuntimeVersion", "containerd://1.7.0"},
            {"kubeletVersion", d.kubelet_version},
            {"kubeProxyVersion", d.kubelet_version},
            {"machineID", ""},
            {"systemUUID", ""},
            {"bootID", ""}}},
          {"daemonEndpoints", {{"kubeletEndpoint", {{"Port", 10250}}}}}};
}

std::vector<std::string> DeclaredFeaturesFor(const Labels& annotations,
                                             std::string_view kubelet_version) {
  auto it = annotations.find(kDeclaredFeaturesAnnotation);
  if (it == annotations.end()) return declared_features::KubeletDefaults(kubelet_version);
  std::vector<std::string> out;
  std::string_view rest = it->second;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (!item.empty()) out.emplace_back(item);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return declared_features::WithoutPastBound(std::move(out), kubelet_version);
}

bool AddImage(NodeImageMap& images, const std::string& written) {
  const std::string key = ReportedImage(written);
  auto [it, added] = images.try_emplace(key);
  NodeImage& image = it->second;
  if (added) {
    image.size_bytes = ImageSizeBytes(key);
    image.names = {ImageId(written), key};
  }
  const std::string as_written = NormalizeImageName(written);
  if (std::find(image.names.begin(), image.names.end(), as_written) != image.names.end()) {
    return added;
  }
  image.names.push_back(as_written);
  return true;
}

NodeImageMap ImagesFromStatus(const Json& status_images) {
  NodeImageMap out;
  if (!status_images.is_array()) return out;
  for (const Json& entry : status_images) {
    if (!entry.is_object() || !entry.contains("names") || !entry["names"].is_array()) continue;
    std::vector<std::string> names;
    std::string key;
    for (const Json& n : entry["names"]) {
      if (!n.is_string()) continue;
      names.push_back(n.get<std::string>());
      if (key.empty() && names.back().find('@') == std::string::npos) {
        key = ReportedImage(names.back());
      }
    }
    if (key.empty()) continue;
    NodeImage& image = out[key];
    image.size_bytes = entry.value("sizeBytes", int64_t{0});
    image.names = std::move(names);
  }
  return out;
}

Json NodeImages(const NodeImageMap& images) {
  std::vector<const NodeImageMap::value_type*> sorted;
  for (const auto& entry : images) sorted.push_back(&entry);
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) {
    return a->second.size_bytes > b->second.size_bytes;
  });
  if (sorted.size() > 50) sorted.resize(50);
  Json out = Json::array();
  for (const auto* entry : sorted) {
    out.push_back({{"names", entry->second.names}, {"sizeBytes", entry->second.size_bytes}});
  }
  return out;
}

}  // namespace berth::kubelet
