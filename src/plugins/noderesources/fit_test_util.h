// What the NodeResourcesFit tests share: a plugin built from args, and request lists.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <memory>
#include <utility>

#include "berth/config/plugin_args.h"
#include "berth/framework/plugin.h"
#include "berth/testing/fake_handle.h"
#include "plugins/noderesources/noderesources.h"

namespace berth::fit_test {

// Resource name -> quantity, as a container's requests.
using Requests = std::initializer_list<std::pair<const char*, const char*>>;

// NodeResourcesFit with `args` (the defaults when null); null when the args are refused.
inline std::unique_ptr<Plugin> NewFit(const config::NodeResourcesFitArgs* args = nullptr) {
  testing::FakeHandle handle;
  auto plugin = NodeResourcesFitRegistration().factory(args, handle);
  EXPECT_TRUE(plugin.ok()) << (plugin.ok() ? "" : plugin.error().message);
  return plugin.ok() ? std::move(plugin).value() : nullptr;
}

}  // namespace berth::fit_test
