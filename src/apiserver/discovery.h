// Discovery documents: what kubectl reads before it sends anything else.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace berth::apiserver {

// /version: reports Kubernetes 1.32, which the kubectl dispatcher uses to pick its client.
nlohmann::json VersionDocument();

struct DiscoveryReply {
  std::string content_type;
  nlohmann::json body;
};

// /api, /apis, /api/v1, /apis/<group>, /apis/<group>/<version>; null for unknown paths.
// Aggregated discovery (apidiscovery.k8s.io/v2) only when `accept` asks for exactly it.
std::optional<DiscoveryReply> DiscoveryDocument(std::string_view path, std::string_view accept,
                                                std::string_view address, uint16_t port);

}  // namespace berth::apiserver
