#include "pluginlib/loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>

#include "berth/framework/plugin_library.h"
#include "plugins/registry.h"

namespace berth::pluginlib {
namespace {

std::string Describe(const BerthPluginBuildInfo& b) {
  std::string stdlib =
      b.libstdcxx_major == 0
          ? std::string("no libstdc++")
          : fmt::format("libstdc++ {} (_GLIBCXX_USE_CXX11_ABI={})", b.libstdcxx_major, b.cxx11_abi);
  return fmt::format("{} {}.{}, {}, SDK version {}", b.compiler ? b.compiler : "?",
                     b.compiler_major, b.compiler_minor, stdlib, b.sdk_version);
}

}  // namespace

BerthPluginBuildInfo BinaryBuildInfo() { return BERTH_BUILD_INFO; }

VoidResult CheckBuildInfo(const BerthPluginBuildInfo& library, const BerthPluginBuildInfo& binary) {
  const std::string lib_compiler = library.compiler ? library.compiler : "";
  // An older SDK that this one only adds to is as good as the same one.
  const bool sdk_ok = library.sdk_version == binary.sdk_version ||
                      (library.sdk_version >= kOldestCompatibleSdkVersion &&
                       library.sdk_version <= binary.sdk_version);
  const bool same = sdk_ok && lib_compiler == binary.compiler &&
                    library.compiler_major == binary.compiler_major &&
                    library.cxx11_abi == binary.cxx11_abi &&
                    library.libstdcxx_major == binary.libstdcxx_major;
  if (same) return {};
  return Error{fmt::format(
      "built with {}, this berth is built with {}; rebuild the library with the berth's compiler "
      "and SDK",
      Describe(library), Describe(binary))};
}

VoidResult LoadPluginLibrary(const std::string& path, Registry* registry) {
  const std::string where = fmt::format("plugin library {}", path);
  std::error_code ec;
  if (!std::filesystem::exists(path, ec)) return Error{fmt::format("{}: no such file", where)};
  // A path without a slash would make dlopen search the library path instead of the file.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Error{fmt::format("{}: cannot load: {}", where, dlerror())};
  auto version = reinterpret_cast<uint32_t (*)()>(dlsym(handle, "berth_plugin_sdk_version"));
  auto reg = reinterpret_cast<void (*)(void*)>(dlsym(handle, "berth_plugin_register"));
  if (!version || !reg) {
    dlclose(handle);
    return Error{fmt::format(
        "{}: no entry point (berth_plugin_register); define one with BERTH_PLUGIN_LIBRARY", where)};
  }
  if (const uint32_t built = version();
      built < kOldestCompatibleSdkVersion || built > kSdkVersion) {
    dlclose(handle);
    return Error{fmt::format(
        "{}: built for SDK version {}, this berth has SDK version {} (loads libraries of SDK "
        "versions {} to {})",
        where, built, kSdkVersion, kOldestCompatibleSdkVersion, kSdkVersion)};
  }
  auto build_info =
      reinterpret_cast<const BerthPluginBuildInfo* (*)()>(dlsym(handle, "berth_plugin_build_info"));
  if (!build_info) {
    dlclose(handle);
    return Error{
        fmt::format("{}: no berth_plugin_build_info; rebuild it with BERTH_PLUGIN_LIBRARY", where)};
  }
  if (VoidResult r = CheckBuildInfo(*build_info(), BinaryBuildInfo()); !r.ok()) {
    dlclose(handle);
    return Error{fmt::format("{}: {}", where, r.error().message)};
  }
  // Registered into a scratch registry first, so a clash adds nothing.
  Registry scratch;
  reg(&scratch);
  const std::vector<std::string> names = scratch.Names();
  if (names.empty()) return Error{fmt::format("{}: registers no plugin", where)};
  for (const auto& name : names) {
    if (registry->Find(name))
      return Error{fmt::format("{}: plugin \"{}\" is already registered", where, name)};
  }
  for (const auto& name : names) {
    if (VoidResult r = registry->Add(*scratch.Find(name)); !r.ok())
      return Error{fmt::format("{}: {}", where, r.error().message)};
  }
  // The library stays loaded: its code backs the plugins registered from it.
  return {};
}

VoidResult LoadPluginLibraries(const std::vector<std::string>& paths, Registry* registry) {
  for (const auto& p : paths)
    if (VoidResult r = LoadPluginLibrary(p, registry); !r.ok()) return r;
  return {};
}

Result<Registry> BuildRegistry(const std::vector<std::string>& libraries,
                               const std::vector<PluginRegistration>& compiled_in,
                               const config::FeatureGates& gates) {
  Registry registry = InTreeRegistry(gates);
  for (const auto& reg : compiled_in) {
    if (VoidResult r = registry.Add(reg); !r.ok())
      return Error{fmt::format("compiled-in plugin: {}", r.error().message)};
  }
  if (VoidResult r = LoadPluginLibraries(libraries, &registry); !r.ok()) return r.error();
  return registry;
}

Result<Registry> BuildRegistry(const std::vector<std::string>& libraries,
                               const std::vector<PluginRegistration>& compiled_in,
                               const std::vector<std::string>& feature_gates,
                               std::vector<std::string>* warnings) {
  auto gates = config::ParseFeatureGatesFlags(feature_gates, warnings);
  if (!gates.ok()) return gates.error();
  return BuildRegistry(libraries, compiled_in, *gates);
}

}  // namespace berth::pluginlib
