#include "pluginlib/loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>

#include "berth/framework/plugin_library.h"
#include "plugins/registry.h"

namespace berth::pluginlib {

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
  if (version() != kSdkVersion) {
    const uint32_t built = version();
    dlclose(handle);
    return Error{fmt::format("{}: built for SDK version {}, this berth has SDK version {}", where,
                             built, kSdkVersion)};
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
                               const std::vector<PluginRegistration>& compiled_in) {
  Registry registry = InTreeRegistry();
  for (const auto& reg : compiled_in) {
    if (VoidResult r = registry.Add(reg); !r.ok())
      return Error{fmt::format("compiled-in plugin: {}", r.error().message)};
  }
  if (VoidResult r = LoadPluginLibraries(libraries, &registry); !r.ok()) return r.error();
  return registry;
}

}  // namespace berth::pluginlib
