// Plugins must not throw (they return a Status); one that does anyway — a plugin loaded from a
// library, say — fails that pod's attempt with an Error status instead of ending the process.
#pragma once

#include <fmt/format.h>

#include <exception>
#include <string_view>

#include "berth/framework/status.h"

namespace berth {

template <class F>
Status Guarded(std::string_view what, F&& call) noexcept {
  try {
    return call();
  } catch (const std::exception& e) {
    return Status::Error(fmt::format("{}: a plugin threw: {}", what, e.what()));
  } catch (...) {
    return Status::Error(fmt::format("{}: a plugin threw", what));
  }
}

}  // namespace berth
