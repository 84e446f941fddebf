// DynamicResources: places pods whose spec.resourceClaims ask for devices (resource.k8s.io/v1,
// structured parameters) where those devices can be allocated, as kube-scheduler's plugin.
#pragma once

#include <string_view>

#include "berth/framework/registry.h"
#include "config/feature_gates.h"
#include "config/plugin_names.h"

namespace berth {

// Registration of the "DynamicResources" plugin; args: config::DynamicResourcesArgs.
PluginRegistration DynamicResourcesRegistration(const config::FeatureGates& gates);

namespace dynamicresources {
inline constexpr std::string_view kName = config::names::kDynamicResources;
}  // namespace dynamicresources

}  // namespace berth
